"""The memory store: records in and out of SQL, history events, full-text and vector mirrors.

`apply()` is the one write path. A manager's operations are checked, embedded and committed in a
single transaction together with their history events and full-text rows. A transactional vector
index (pgvector) is written in that same transaction; Chroma is mirrored after the commit (SQL is
the source of truth): the transaction marks the memories whose vectors are pending, and a mirror the
process did not finish is replayed from those marks at the next open (`store.vector_outbox`).
"""

from __future__ import annotations

import builtins
import logging
import re
import uuid
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, ClassVar, Iterable, NamedTuple, Sequence, overload

from pydantic import AwareDatetime, Field, ValidationError, field_validator
from sqlalchemy import Delete, Text, and_, bindparam, cast as sql_cast, delete as sa_delete, func, or_, select
from sqlalchemy import text as sql_text, union
from sqlalchemy import update as sa_update
from sqlalchemy.engine import Connection, CursorResult, Engine, Row
from sqlalchemy.sql.elements import ColumnElement, UnaryExpression
from sqlmodel import Session, col

from mirix_py.boundary.inputs import parse_when
from mirix_py.tools import field_errors
from mirix_py.errors import InputsGone, InvalidInput, MemoryNotFound
from mirix_py.tools.ops import DeleteOp, InsertOp, MergeOp, Op, UpdateOp
from mirix_py.records import (
    MASK, MEMORY_ADAPTER, EpisodicMemory, HistoryEvent, KnowledgeVaultMemory, Memory, MemoryBase, MemoryChange,
    MemoryType, Operation, INPUT_PREFIX, is_input_id, memory_id_problem, new_memory_id, type_fields, utcnow,
)
from mirix_py.store.sqlite_erase import start_erasing, stop_erasing, truncate_log
from mirix_py.store.erase import Erasure, is_erased, unmarked
from mirix_py.store.citations import citing
from mirix_py.store.cursors import ListingPosition, in_utc, storable_id
from mirix_py.store.crypto import Cipher, VaultKeyError
from mirix_py.store.embeddings import Embedder, EmbeddingsAhead
from mirix_py.store.expiry import combined, has_expired, unexpired
from mirix_py.store.fulltext import FullTextIndex
from mirix_py.store.history_keys import MERGED, MERGED_INTO, SECRET_TOKEN, UNDO_KEYS
from mirix_py.store.input_tags import InputTags
from mirix_py.store import vector_outbox
from mirix_py.secrets.guard import Known, SecretGuard
from mirix_py.store.patches import diff_state, undiff_state
from mirix_py.store.sessions import SessionIndex, input_of, sessions_for
from mirix_py.store.textrefs import from_refs, to_refs
from mirix_py.store.tables import HistoryRow, InputRow, MemoryRow, UsageRow
from mirix_py.store.vectors import VectorIndex, VectorItem, in_transaction
from mirix_py.store.write_marks import WriteMarks
from mirix_py.text.storable import first_problem

log = logging.getLogger("mirix_py.store")

# The distinct actors of a user's rows, one index seek each: the smallest actor, then the smallest
# above it, and so on (SQLite and PostgreSQL both answer `min` under an equality prefix from the index).
# At most MAX_ACTORS (by name): people talking are few, and the bound keeps a user whose episodes
# came from thousands of senders from costing a search thousands of seeks.
MAX_ACTORS = 4096
ACTORS_OF_USER = sql_text(
    "WITH RECURSIVE seen(actor) AS ("
    " SELECT (SELECT min(actor) FROM memory WHERE user_id = :user_id)"
    " UNION ALL"
    " SELECT (SELECT min(m.actor) FROM memory m WHERE m.user_id = :user_id AND m.actor > seen.actor)"
    " FROM seen WHERE seen.actor IS NOT NULL)"
    f" SELECT actor FROM seen WHERE actor IS NOT NULL LIMIT {MAX_ACTORS}")
# The memory types a user holds, by the same loose index scan (`ix_memory_user_type_time`): at most one
# seek a type.
TYPES_OF_USER = sql_text(
    "WITH RECURSIVE seen(memory_type) AS ("
    " SELECT (SELECT min(memory_type) FROM memory WHERE user_id = :user_id)"
    " UNION ALL"
    " SELECT (SELECT min(m.memory_type) FROM memory m WHERE m.user_id = :user_id AND m.memory_type > seen.memory_type)"
    " FROM seen WHERE seen.memory_type IS NOT NULL)"
    " SELECT memory_type FROM seen WHERE memory_type IS NOT NULL")
IMMUTABLE_FIELDS = frozenset({"id", "user_id", "memory_type", "created_at", "updated_at"})
# A search reads rows by id several times: built once, with the ids bound at each call, these skip
# building and hashing a new statement every time. By primary key only: with `AND user_id = ?`
# SQLite picks the user index and walks every row of the user (45 ms at 100k memories against
# 0.03 ms); the user is checked on the rows read.
_ROWS_BY_ID = select(MemoryRow.__table__).where(  # type: ignore[attr-defined]  # SQLModel sets it
    col(MemoryRow.id).in_(bindparam("ids", expanding=True)))
_PROVENANCE_BY_ID = select(col(MemoryRow.id), col(MemoryRow.user_id), col(MemoryRow.source_ids),
                           col(MemoryRow.actor)).where(col(MemoryRow.id).in_(bindparam("ids", expanding=True)))
IDS_PER_QUERY = 500  # ids in one `IN (...)` of a read that takes any number of them


def _attributed(plan: _Planned, ledger: Sequence[str]) -> str | None:
    """The one input of a batch of several that a change came from, or None: an insert citing one
    of them alone, an update or merge adding the provenance of one alone (undo takes back what an
    input caused, and most inputs queued with wait=False are processed in batches of several)."""
    if len(ledger) < 2 or plan.after is None:
        return None
    cited = set(plan.after.source_ids) - (set(plan.before.source_ids) if plan.before is not None else set())
    found = cited & set(ledger)
    return next(iter(found)) if len(found) == 1 else None


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


def _deleted(session: Session, statement: Delete) -> int:
    """Run a bulk DELETE; the number of rows it removed."""
    result = session.execute(statement)
    assert isinstance(result, CursorResult)  # what SQLAlchemy returns for DML
    return result.rowcount


_ZONED = re.compile(r"(Z|[+-]\d{2}:?\d{2}(:\d{2})?)$", re.IGNORECASE)


def said_in_utc(said: dict[str, Any]) -> dict[str, Any]:
    """A core block's `said` times as stored, those without a zone read as UTC: an older version let
    `update` and `import_` store a naive time there, which the record now refuses, so the block could
    not be read at all."""
    return {line: f"{when}+00:00" if isinstance(when, str) and not _ZONED.search(when.strip()) else when
            for line, when in said.items()}


def _check_storable(fields: dict[str, Any], memory_type: str) -> None:
    """InvalidInput for a string no backend can hold alike (a NUL, a lone surrogate: `text.storable`),
    before anything is embedded or written; a model's tool call gets it back as any bad field."""
    for name, value in fields.items():
        found = first_problem(value, name, controls=False)  # callers' controls are refused at the boundary
        if found:
            raise InvalidInput(f"invalid fields for {memory_type} memory: {found}")


def _no_core_expiry(memory: MemoryBase) -> None:
    """A core block holds lines of many inputs: it never expires."""
    if memory.expires_at is not None and getattr(memory, "memory_type", None) is MemoryType.core:
        raise InvalidInput("a core block does not expire (expires_at must stay null)")


def _check_inputs_cited(session: Session, user_id: str, before: Sequence[str], after: Sequence[str]) -> None:
    """InvalidInput when a patch makes a memory cite an input id its user's log does not hold: another
    user's input would be read as this user's (their export would carry its caller's id and times).
    Ids the memory cited already stay (an import of an older export cites inputs it could not log)."""
    added = sorted({s for s in after if is_input_id(s)} - set(before))
    held: set[str] = set()
    for n in range(0, len(added), IDS_PER_QUERY):  # by id only, the user checked on the rows read
        rows = session.execute(select(col(InputRow.id), col(InputRow.user_id))
                               .where(col(InputRow.id).in_(added[n:n + IDS_PER_QUERY])))
        held.update(input_id for input_id, owner in rows if owner == user_id)
    unknown = [i for i in added if i not in held]
    if unknown:
        raise InvalidInput(f"source_ids cite {unknown}, which user {user_id!r} has no input of: an id of the "
                           f"form of input ids ({INPUT_PREFIX!r} and 32 hex digits) must be one of the user's own inputs")


def actor_of(memory: Memory) -> str | None:
    """Who said a memory, as `memory.actor` keeps it: an episode's actor, None for the other types."""
    return memory.actor if isinstance(memory, EpisodicMemory) else None


def listing_order(newest_first: bool = True) -> tuple[UnaryExpression[Any], ...]:
    """`MemoryStore.list`'s order: by when a memory happened, then when it was stored, then by id, so
    the order is total and pages neither repeat nor skip memories of one time (PostgreSQL orders ties
    differently from one query to the next); `_listed_after` follows it for a page read by cursor.
    Memories without a time (core blocks) come last newest first and first oldest first: SQLite's own
    place for NULL, stated, since PostgreSQL's is the opposite."""
    occurred, created, memory_id = col(MemoryRow.occurred_at), col(MemoryRow.created_at), col(MemoryRow.id)
    if newest_first:
        return occurred.desc().nulls_last(), created.desc(), memory_id.desc()
    return occurred.asc().nulls_first(), created.desc(), memory_id.desc()


class MemoryPosition(ListingPosition):
    """Where a memory stands in `MemoryStore.list`'s order (`listing_order`, total: ties by when stored,
    then by id) and which way that listing runs. A page ends at its last memory's position and the next
    page starts strictly after it, so no memory is listed twice or left out while others are written or
    deleted between pages, as they are when pages are counted by offset (a memory whose `occurred_at` is
    edited meanwhile moves in the order, and can cross the cursor: listed twice or not at all). Clients
    see it only as an opaque cursor."""

    LISTING: ClassVar[str] = "the memory list"

    occurred_at: AwareDatetime | None = Field(description=(
        "When the memory happened (in UTC once read); None for a memory without a time (a core block)."))
    created_at: AwareDatetime = Field(description="When the memory was stored (in UTC once read), which "
                                                  "orders memories of one time.")
    id: str = Field(min_length=1, max_length=256, description="The memory's id, which orders memories of one "
                                                              "time stored at the same instant.")
    newest_first: bool = Field(description="The listing's direction: what comes after a position depends on it.")

    _utc = field_validator("occurred_at", "created_at")(in_utc)
    _id = field_validator("id")(storable_id)

    @classmethod
    def of(cls, memory: MemoryBase, *, newest_first: bool = True) -> "MemoryPosition":
        return cls(occurred_at=memory.occurred_at, created_at=memory.created_at, id=memory.id,
                   newest_first=newest_first)


def listing_start(before: str, *, offset: int, newest_first: bool) -> MemoryPosition:
    """The position a page read with `before` starts after: InvalidInput for a cursor `cursor()` did
    not write, one of a listing in the other direction, or one given with an offset (two starts)."""
    if offset:
        raise InvalidInput("a cursor and an offset cannot be combined: page by one of them")
    position = MemoryPosition.from_cursor(before)
    if position.newest_first != newest_first:
        raise InvalidInput(f"the cursor is of a list {'newest' if position.newest_first else 'oldest'} first: "
                           "pass it to a listing in that order")
    return position


def _listed_after(position: MemoryPosition) -> ColumnElement[bool]:
    """The memories after `position` in `listing_order` of its direction. Memories of one time go
    by when stored, then by id, both descending, either way; memories without a time come last newest
    first and first oldest first (row values would say it in fewer words, but not of NULL)."""
    occurred, created, memory_id = col(MemoryRow.occurred_at), col(MemoryRow.created_at), col(MemoryRow.id)
    after_among_ties = or_(created < position.created_at,
                           and_(created == position.created_at, memory_id < position.id))
    if position.occurred_at is None:
        undated_after = and_(occurred.is_(None), after_among_ties)
        return undated_after if position.newest_first else or_(occurred.is_not(None), undated_after)
    same_time_after = and_(occurred == position.occurred_at, after_among_ties)
    if position.newest_first:
        return or_(occurred < position.occurred_at, occurred.is_(None), same_time_after)
    return or_(occurred > position.occurred_at, same_time_after)


class Provenance(NamedTuple):
    """A memory's cited ids and, for an episode, who said it (`MemoryStore.provenance_of`)."""

    source_ids: list[str]
    actor: str | None


@dataclass
class _Planned:
    operation: Operation
    before: Memory | None
    after: Memory | None
    memory_id: str
    memory_type: MemoryType
    merged: tuple[str, ...] = ()  # a merge's survivor: the memories folded into it
    merged_into: str | None = None  # a merge's other member: the survivor it was folded into


def _expiring_with_their_memories(plans: list[_Planned]) -> list[_Planned]:
    """A vault entry the guard made in this write expires with the memories whose secret it holds,
    when each of them expires (the latest expiry), so a secret does not outlive the memory it was
    said in (`update` with `expires_at`, a LangGraph item's TTL); one a lasting memory cites lasts."""
    made = {p.memory_id for p in plans if p.before is None and isinstance(p.after, KnowledgeVaultMemory)
            and p.after.expires_at is None}
    if not made:
        return plans
    citing: dict[str, list[datetime | None]] = {entry: [] for entry in made}
    for plan in plans:
        if plan.after is None or plan.memory_id in made:
            continue
        dumped = plan.after.model_dump_json()
        for entry in made:
            if f"[vault:{entry}]" in dumped:
                citing[entry].append(plan.after.expires_at)
    ends = {entry: end for entry, times in citing.items() if times and (end := combined(times)) is not None}
    return [replace(p, after=p.after.model_copy(update={"expires_at": ends[p.memory_id]}))
            if p.memory_id in ends and p.after is not None else p for p in plans]


class MemoryStore:
    def __init__(self, engine: Engine, fulltext: FullTextIndex, cipher: Cipher,
                 vectors: VectorIndex | None, embedder: Embedder | None,
                 guard: SecretGuard | None = None, sessions: SessionIndex | None = None,
                 write_marks: WriteMarks | None = None) -> None:
        """`guard`: what keeps secrets out of every memory written (`secrets.guard`); the engine
        always passes one (the vault rules). `sessions`: the index of each input's episodes
        (`store.sessions`), the backend's own unless given. `write_marks`: told of each user's
        committed writes, when searches read a replica (`store.write_marks`)."""
        self.engine = engine
        self.fulltext = fulltext
        self.cipher = cipher
        self.vectors = vectors
        self.embedder = embedder
        self.guard = guard
        self.write_marks = write_marks
        self.sessions = sessions if sessions is not None else sessions_for(engine)
        self._known: dict[str, tuple[tuple, Known]] = {}  # user -> (vault stamp, its values)
        self.input_tags = InputTags(engine)  # the caller's ids of inputs, which memories cite beside them
        # texts a flow started embedding before its write (`embed_ahead`); `_embed_texts` takes them
        self.ahead = EmbeddingsAhead()
        # why this store takes no write (an engine opened for reading beside the writer), or None
        self.read_only: str | None = None

    # ------------------------------------------------------------ conversion

    def to_row(self, memory: Memory) -> MemoryRow:
        fields = type_fields(memory)
        secret = None
        if isinstance(memory, KnowledgeVaultMemory):
            value = fields.pop("secret_value", "")
            secret = self.cipher.encrypt(value) if value else None
        text = memory.search_text()
        return MemoryRow(
            id=memory.id, user_id=memory.user_id, memory_type=memory.memory_type.value,
            text=text, occurred_at=memory.occurred_at, created_at=memory.created_at,
            updated_at=memory.updated_at, source_ids=list(memory.source_ids), tags=list(memory.tags),
            fields=to_refs(fields, text), secret=secret,
            input_id=input_of(memory.memory_type.value, memory.source_ids),
            actor=actor_of(memory), expires_at=memory.expires_at,
        )

    def to_record(self, row: MemoryRow | Row[Any], *, reveal: bool = False) -> Memory:
        data: dict[str, Any] = from_refs(row.fields or {}, row.text)
        data.update(
            id=row.id, user_id=row.user_id, memory_type=row.memory_type, occurred_at=row.occurred_at,
            created_at=row.created_at, updated_at=row.updated_at, source_ids=list(row.source_ids or []),
            tags=list(row.tags or []), expires_at=row.expires_at,
        )
        if row.memory_type == MemoryType.knowledge_vault.value:
            data["secret_value"] = (self.cipher.decrypt(row.secret) if reveal else MASK) if row.secret else ""
        if isinstance(data.get("said"), dict):
            data["said"] = said_in_utc(data["said"])
        return MEMORY_ADAPTER.validate_python(data)

    @overload
    @staticmethod
    def history_dump(memory: MemoryBase) -> dict[str, Any]: ...

    @overload
    @staticmethod
    def history_dump(memory: None) -> None: ...

    @staticmethod
    def history_dump(memory: MemoryBase | None) -> dict[str, Any] | None:
        if memory is None:
            return None
        if isinstance(memory, KnowledgeVaultMemory):
            memory = memory.masked()
        return memory.model_dump(mode="json")

    # ------------------------------------------------------------ writes

    def apply(self, ops: Sequence[Op], *, user_id: str, actor: str, input_id: str | None = None,
              source_ids: Sequence[str] = (), ledger: Sequence[str] = (), keep_times: bool = False,
              left_deleted: Sequence[str] = (), erase: Erasure | None = None) -> list[MemoryChange]:
        """Apply one manager's operations atomically; raise InvalidInput and write nothing on any bad op.

        `ledger`: input ids whose `done_actors` gain `actor` in the same transaction, so a crashed
        batch that is picked up again never writes this manager's memories twice.
        `keep_times`: an insert keeps the `created_at` and `updated_at` it carries (an import, a
        restored memory) instead of taking now.
        `left_deleted`: ids of deleted memories this write (an undo) leaves deleted on purpose: each
        gets a deletion event with nothing before, so no later undo brings it back. Not a change.
        `erase`: the words of what these operations delete or change leave the store in the same
        transaction (history states, the inputs no turn or frame cites any more: `store.erase`), SQLite's
        full-text index and write-ahead log included (`store.sqlite_erase`).
        """
        if self.read_only is not None:
            raise InvalidInput(self.read_only)
        if not ops and not ledger and not left_deleted and erase is None:
            return []
        # Embed before taking the write lock (SQLite has one per database): plan once read-only,
        # embed those texts, then plan again under the lock and embed only what changed meanwhile.
        with Session(self.engine) as session:
            salt = uuid.uuid4().hex + "/"  # the vault ids the guard makes: one per write, both plans alike
            draft = self._plan(session, ops, user_id=user_id, input_id=input_id, source_ids=source_ids,
                               keep_times=keep_times, salt=salt)
            draft_stamp = self._vault_stamp(session, user_id) if self.guard is not None else None
            session.rollback()
        draft_texts = {p.after.embedding_text() for p in draft if p.after is not None}
        by_text = self._embed_texts(draft_texts)
        embedder_up = bool(by_text) or not draft_texts  # don't retry a failing embedder under the lock
        sqlite = self.engine.dialect.name == "sqlite"
        with Session(self.engine) as session:
            if sqlite:
                session.connection().exec_driver_sql("BEGIN IMMEDIATE")
            elif self.guard is not None:
                self.lock_vault(session, user_id)
            fts = start_erasing(session.connection()) if erase is not None and sqlite else None
            logged = self._ledger_rows(session, ledger)
            self._record_left_deleted(session, left_deleted, user_id=user_id, actor=actor)
            # inserts under fresh random ids read nothing from the database: the draft is the plan,
            # unless the vault changed meanwhile (the guard must see every value stored before this commit)
            fresh_inserts = all(isinstance(op, InsertOp) and not op.memory.id for op in ops) and (
                self.guard is None or self._vault_stamp(session, user_id) == draft_stamp)
            plans = draft if fresh_inserts else self._plan(session, ops, user_id=user_id, input_id=input_id,
                                                           source_ids=source_ids, keep_times=keep_times, salt=salt)
            texts = {p.memory_id: p.after.embedding_text() for p in plans if p.after is not None}
            missing = set(texts.values()) - set(by_text)
            if missing and embedder_up:
                by_text.update(self._embed_texts(missing))
            vectors = {mid: by_text[t] for mid, t in texts.items() if t in by_text}
            conn = session.connection()
            indexed: dict[str, tuple[str, str, str, str]] = {}  # full-text rows, written in one go

            def write_pending() -> None:
                session.flush()
                self.fulltext.upsert(conn, list(indexed.values()))
                indexed.clear()

            for plan in plans:
                if plan.after is None:
                    write_pending()  # an insert earlier in this batch must exist before it is deleted
                    self.fulltext.delete(conn, [(user_id, plan.memory_id)])
                    session.execute(sa_delete(MemoryRow).where(col(MemoryRow.id) == plan.memory_id))
                else:
                    row = self.to_row(plan.after)
                    row.embedding_model = (self.embedder.name if self.embedder is not None and plan.memory_id in vectors
                                           else None)
                    if plan.operation is Operation.insert:
                        session.add(row)  # _plan checked that the id is new: no SELECT for a merge
                    else:
                        session.merge(row)
                    indexed[row.id] = (row.id, row.user_id, row.memory_type, row.text)
                # `after` is not stored: it is the memory row itself until the next event, whose
                # `before` keeps it; `history()` fills it in (half the bytes of history). An update
                # keeps its earlier long texts as line patches against that state (`patches`).
                before = self.history_dump(plan.before)
                if isinstance(plan.before, KnowledgeVaultMemory) and before is not None and plan.before.secret_value \
                        and getattr(plan.after, "secret_value", None) != plan.before.secret_value:
                    before[SECRET_TOKEN] = self.cipher.encrypt(plan.before.secret_value)  # for undo; never shown
                if plan.operation is Operation.update and before is not None and plan.after is not None:
                    before = diff_state(before, self.history_dump(plan.after))
                if plan.merged and before is not None:
                    before[MERGED] = list(plan.merged)
                if plan.merged_into and before is not None:
                    before[MERGED_INTO] = plan.merged_into
                session.add(HistoryRow(
                    memory_id=plan.memory_id, user_id=user_id, memory_type=plan.memory_type.value,
                    operation=plan.operation.value, before=before, after=None,
                    actor=actor, input_id=input_id if input_id is not None else _attributed(plan, ledger),
                    created_at=utcnow(),
                ))
            write_pending()
            touched = {i for p in plans for m in (p.before, p.after) if m is not None
                       for i in [input_of(m.memory_type.value, m.source_ids)] if i}
            self.fulltext.refresh_near(conn, user_id, touched)
            self.sessions.refresh(conn, user_id, touched)
            for logged_row in logged:
                logged_row.done_actors = sorted({*(logged_row.done_actors or []), actor})
            if in_transaction(self.vectors):
                upserts, deletes = self._vector_changes(plans, vectors)
                session.flush()
                self.vectors.write(conn, user_id, upserts, deletes)
            write_id = self._mark_vectors_pending(conn, user_id, plans, vectors)
            if erase is not None:
                erase.run(self, session, plans, user_id=user_id)
            if fts is not None:
                stop_erasing(conn, fts)
            session.commit()
            self._committed(session, user_id)
        if self.vectors is not None and not self.vectors.transactional:
            if self._mirror_vectors(user_id, plans, vectors) and write_id is not None:
                vector_outbox.clear(self.engine, write_id)
        if erase is not None and sqlite and not truncate_log(self.engine):
            log.warning("the write-ahead log was in use: the erased words leave it at its next checkpoint")
        return [MemoryChange(operation=p.operation, memory_id=p.memory_id, memory_type=p.memory_type, actor=actor)
                for p in plans]

    @staticmethod
    def _record_left_deleted(session: Session, memory_ids: Sequence[str], *, user_id: str, actor: str) -> None:
        """A deletion event with nothing before for each of these deleted memories of the user
        (`apply`'s `left_deleted`); InvalidInput for one that exists or never did."""
        for memory_id in memory_ids:
            if session.get(MemoryRow, memory_id) is not None:
                raise InvalidInput(f"memory {memory_id!r} is not deleted")
            memory_type = session.execute(select(col(HistoryRow.memory_type)).where(
                col(HistoryRow.memory_id) == memory_id, col(HistoryRow.user_id) == user_id)
                .order_by(col(HistoryRow.id).desc()).limit(1)).scalar()
            if memory_type is None:
                raise MemoryNotFound(memory_id)
            session.add(HistoryRow(memory_id=memory_id, user_id=user_id, memory_type=memory_type,
                                   operation=Operation.delete.value, before=None, after=None, actor=actor,
                                   input_id=None, created_at=utcnow()))

    @staticmethod
    def _ledger_rows(session: Session, ledger: Sequence[str]) -> builtins.list[InputRow]:
        """The batch's logged inputs, read before anything is written, or InputsGone when any was deleted
        (its user deleted meanwhile): a batch in flight must not bring a deleted user's memories back.
        Shared locks on PostgreSQL make `delete_user`, which deletes the inputs first, wait for this
        write and then delete what it wrote; SQLite's writes are one at a time already."""
        if not ledger:
            return []
        wanted = set(ledger)
        rows = list(session.execute(select(InputRow).where(col(InputRow.id).in_(sorted(wanted)))
                                    .with_for_update(read=True)).scalars())
        missing = sorted(wanted - {row.id for row in rows})
        if missing:
            raise InputsGone(missing)
        return rows

    def _committed(self, session: Session, user_id: str) -> None:
        if self.write_marks is None:
            return
        try:
            self.write_marks.wrote(session.connection(), user_id)
        except Exception as exc:  # the write is committed: report it as done, not as failed
            log.warning("the log position after a write was not read (%s): searches may read the replica "
                        "before it has this write", type(exc).__name__)

    def check(self, ops: Sequence[Op], *, user_id: str, keep_times: bool = False) -> None:
        """Raise InvalidInput when `apply` would refuse these operations as they stand now; writes
        nothing. For a caller that writes several users' operations and must refuse all before any."""
        with Session(self.engine) as session:
            try:
                self._plan(session, ops, user_id=user_id, input_id=None, source_ids=(), keep_times=keep_times,
                           salt=uuid.uuid4().hex + "/")
            finally:
                session.rollback()

    def _plan(self, session: Session, ops: Sequence[Op], *, user_id: str, input_id: str | None,
              source_ids: Sequence[str], keep_times: bool = False, salt: str = "") -> list[_Planned]:
        now = utcnow()
        plans: list[_Planned] = []
        state: dict[str, Memory | None] = {}  # memory id -> its state after earlier ops of this batch

        def load(memory_id: str) -> Memory:
            if memory_id in state:
                current = state[memory_id]
            else:
                row = session.get(MemoryRow, memory_id)
                current = self.to_record(row, reveal=True) if row is not None else None
                state[memory_id] = current
            if current is None or current.user_id != user_id:
                raise MemoryNotFound(memory_id)
            return current

        def revise(current: Memory, fields: dict[str, Any], extra_sources: Sequence[str]) -> Memory:
            bad = IMMUTABLE_FIELDS & set(fields)
            if bad:
                raise InvalidInput(f"cannot change {sorted(bad)} of a memory")
            fields = dict(fields)
            _check_storable(fields, current.memory_type.value)
            if fields.get("secret_value") == MASK:
                fields.pop("secret_value")  # a masked read written back must not overwrite the secret
            data = current.model_dump()
            data.update(fields)
            data["updated_at"] = now
            try:  # the new values checked as given (a string is no list of source ids) ...
                revised = MEMORY_ADAPTER.validate_python(data)
            except ValidationError as exc:
                editable = set(type(current).model_fields) - IMMUTABLE_FIELDS
                raise InvalidInput(field_errors.describe(exc, memory_type=current.memory_type.value,
                                                         fields=editable)) from exc
            _no_core_expiry(revised)
            if "source_ids" in fields:
                _check_inputs_cited(session, user_id, current.source_ids, revised.source_ids)
            if "occurred_at" in fields:  # a new time lies inside the years `add` takes, with its message
                parse_when(revised.occurred_at, "occurred_at", stored=True)
            # ... then the input's sources added
            return revised.model_copy(update={"source_ids": _dedupe([*revised.source_ids, *extra_sources])})

        for op in ops:
            if isinstance(op, InsertOp):
                memory = op.memory
                if memory.user_id != user_id:
                    raise InvalidInput("a memory may only be written for the user of the batch")
                _no_core_expiry(memory)
                if memory.id and (problem := memory_id_problem(memory.id)):
                    raise InvalidInput(f"memory id {memory.id!r} {problem}")
                memory_id = memory.id or new_memory_id(memory.memory_type)  # a fresh random id needs no look-up
                if memory_id in state or (memory.id and session.get(MemoryRow, memory_id) is not None):
                    raise InvalidInput(f"memory id {memory_id!r} already exists")
                times = {"created_at": memory.created_at, "updated_at": memory.updated_at} if keep_times else {
                    "created_at": now, "updated_at": now}
                after = memory.model_copy(update={
                    "id": memory_id, **times,
                    "source_ids": _dedupe([*memory.source_ids, *(source_ids or ()), input_id or ""]),
                })
                dumped = after.model_dump()
                _check_storable(dumped, after.memory_type.value)
                after = MEMORY_ADAPTER.validate_python(dumped)
                state[memory_id] = after
                plans.append(_Planned(Operation.insert, None, after, memory_id, after.memory_type))
            elif isinstance(op, UpdateOp):
                current = load(op.memory_id)
                after = revise(current, op.fields, [*op.add_source_ids, *(source_ids or ()), input_id or ""])
                state[op.memory_id] = after
                plans.append(_Planned(Operation.update, current, after, op.memory_id, current.memory_type))
            elif isinstance(op, MergeOp):
                if len(set(op.memory_ids)) != len(op.memory_ids):
                    raise InvalidInput("merge names the same memory twice")
                members = [load(m) for m in op.memory_ids]
                kinds = {m.memory_type for m in members}
                if len(kinds) != 1:
                    raise InvalidInput("merge needs memories of one type")
                target = members[0]
                merged_sources = [s for m in members for s in m.source_ids]
                fields = {"tags": _dedupe(t for m in members for t in m.tags), **op.fields}
                after = revise(target, fields, [*merged_sources, *(source_ids or ()), input_id or ""])
                state[target.id] = after
                plans.append(_Planned(Operation.merge, target, after, target.id, target.memory_type,
                                      merged=tuple(m.id for m in members[1:])))
                for other in members[1:]:
                    state[other.id] = None
                    plans.append(_Planned(Operation.delete, other, None, other.id, other.memory_type,
                                          merged_into=target.id))
            elif isinstance(op, DeleteOp):
                current = load(op.memory_id)
                state[op.memory_id] = None
                plans.append(_Planned(Operation.delete, current, None, op.memory_id, current.memory_type))
            else:  # pragma: no cover - the Op union is closed
                raise InvalidInput(f"unknown operation {op!r}")
        return self._guarded(session, plans, user_id, salt) if self.guard is not None else plans

    # ------------------------------------------------------------ secrets

    def _guarded(self, session: Session, plans: list[_Planned], user_id: str, salt: str) -> list[_Planned]:
        """The plans with no secret left in a text: each found one moves into a vault insert."""
        assert self.guard is not None
        known = self.known_secrets(session, user_id)
        known.salt = salt
        for plan in plans:  # values this batch stores in the vault count as known too
            if isinstance(plan.after, KnowledgeVaultMemory):
                known.add(plan.after.secret_value, plan.memory_id)
        out: list[_Planned] = []
        for plan in plans:
            if plan.after is None:
                out.append(plan)
                continue
            after, vault = self.guard.clean(plan.after, known)
            for entry in vault:
                out.append(_Planned(Operation.insert, None, entry, entry.id, entry.memory_type))
            out.append(replace(plan, after=after))
        return _expiring_with_their_memories(out)

    def lock_vault(self, session: Session, user_id: str) -> None:
        """Make writers that read and extend one user's vault take turns until this transaction
        ends, so the guard's look at the vault sees every value stored before and no secret gets a
        second entry. SQLite's `BEGIN IMMEDIATE` already serializes all writers; on PostgreSQL
        this takes a transaction-scoped advisory lock for the user (other users' writers go on;
        under READ COMMITTED each later statement sees what the previous holder committed)."""
        if self.engine.dialect.name == "postgresql":
            session.execute(sql_text("SELECT pg_advisory_xact_lock(hashtext(:key))"), {"key": f"mirix vault {user_id}"})

    def _vault_stamp(self, session: Session, user_id: str) -> tuple:
        """Changes whenever the user's vault does (an entry added, changed or deleted)."""
        count, newest = session.execute(select(func.count(), func.max(col(MemoryRow.updated_at))).where(
            col(MemoryRow.user_id) == user_id, col(MemoryRow.memory_type) == MemoryType.knowledge_vault.value)).one()
        return int(count), str(newest)

    def known_secrets(self, session: Session, user_id: str) -> Known:
        """A copy of the user's vault values (decrypted once per change of the vault)."""
        stamp = self._vault_stamp(session, user_id)
        cached = self._known.get(user_id)
        if cached is None or cached[0] != stamp:
            known = Known()
            rows = session.execute(select(col(MemoryRow.id), col(MemoryRow.secret)).where(
                col(MemoryRow.user_id) == user_id, col(MemoryRow.memory_type) == MemoryType.knowledge_vault.value,
                col(MemoryRow.secret).is_not(None)).order_by(col(MemoryRow.created_at))).all()
            for memory_id, token in rows:
                try:
                    known.add(self.cipher.decrypt(token), memory_id)
                except VaultKeyError:  # an undecryptable secret is doctor's finding, not a write failure
                    continue
            cached = self._known[user_id] = (stamp, known)
        return Known(ids=dict(cached[1].ids))

    def embed_ahead(self, texts: Sequence[str]) -> list[str]:
        """Start embedding texts a coming `apply` will write (see `EmbeddingsAhead`); returns those
        started, for `drop_ahead` once that write is done."""
        if self.embedder is None or self.vectors is None:
            return []
        return self.ahead.start(texts, self.embedder)

    def drop_ahead(self, texts: Sequence[str]) -> None:
        self.ahead.drop(texts)

    def close(self) -> None:
        """Stops the embedding-ahead worker and lets the vector index tidy up (an embedded Chroma
        narrows its files to owner-only); the engine and database are the caller's."""
        self.ahead.close()
        if self.vectors is not None:
            self.vectors.close()

    def _embed_texts(self, texts: set[str]) -> dict[str, list[float]]:
        if self.embedder is None or self.vectors is None or not texts:
            return {}
        found = self.ahead.take(texts)
        ordered = sorted(texts - set(found))
        if not ordered:
            return found
        try:
            vectors = self.embedder.embed(ordered)
        except Exception as exc:  # an embedding outage must not lose the write
            log.warning("embedding failed (%s); memories saved without vectors", exc)
            return found
        return {**found, **dict(zip(ordered, vectors))}

    @staticmethod
    def _vector_changes(plans: list[_Planned], vectors: dict[str, list[float]]) -> tuple[list[VectorItem], list[str]]:
        """(vectors to write, ids whose vector goes) for the final state of each memory in `plans`."""
        final: dict[str, _Planned] = {p.memory_id: p for p in plans}
        upserts = [VectorItem(mid, vectors[mid], p.memory_type.value)
                   for mid, p in final.items() if p.after is not None and mid in vectors]
        deletes = [mid for mid, p in final.items() if p.after is None]
        return upserts, deletes

    def _mark_vectors_pending(self, conn: Connection, user_id: str, plans: list[_Planned],
                              vectors: dict[str, list[float]]) -> str | None:
        """In the rows' transaction, mark the memories whose vectors `_mirror_vectors` writes after the
        commit (an index outside the transaction only): a process that dies in between leaves the marks
        for the next open to replay (`store.vector_outbox`). The write's id, or None."""
        if self.vectors is None or self.vectors.transactional:
            return None
        upserts, deletes = self._vector_changes(plans, vectors)
        return vector_outbox.mark(conn, user_id, [*(item.id for item in upserts), *deletes])

    def _mirror_vectors(self, user_id: str, plans: list[_Planned], vectors: dict[str, list[float]]) -> bool:
        """Write the vectors of a committed write to an index outside the transaction; whether it took them."""
        if self.vectors is None:
            return False
        upserts, deletes = self._vector_changes(plans, vectors)
        try:
            self.vectors.upsert(user_id, upserts)
            self.vectors.delete(user_id, deletes)
            return True
        except Exception as exc:
            log.warning("vector index update failed (%s); `mirix doctor --repair` re-syncs it", exc)
            with Session(self.engine) as session:
                for item in upserts:
                    row = session.get(MemoryRow, item.id)
                    if row is not None:
                        row.embedding_model = None
                session.commit()
            return False

    # ------------------------------------------------------------ reads

    def get(self, memory_id: str, *, user_id: str | None = None, reveal: bool = False) -> MemoryBase:
        """One memory; MemoryNotFound when it is another user's or has expired."""
        with Session(self.engine) as session:
            row = session.get(MemoryRow, memory_id)
            if row is None or (user_id is not None and row.user_id != user_id) \
                    or has_expired(row.expires_at, utcnow()):
                raise MemoryNotFound(memory_id)
            return self.to_record(row, reveal=reveal)

    def get_many(self, memory_ids: Sequence[str], *, user_id: str,
                 include_expired: bool = False) -> dict[str, Memory]:
        """The user's memories among these ids, expired ones left out unless `include_expired` (those
        the sweep has not deleted yet: what a write replacing them must see)."""
        if not memory_ids:
            return {}
        with self.engine.connect() as conn:  # table rows, not ORM objects: nothing here is written back
            rows = conn.execute(_ROWS_BY_ID, {"ids": builtins.list(memory_ids)}).all()
        now = utcnow()
        return {r.id: self.to_record(r) for r in rows
                if r.user_id == user_id and (include_expired or not has_expired(r.expires_at, now))}

    def vault_values(self, memory_ids: Iterable[str], *, user_id: str) -> dict[str, str]:
        """Vault entry id -> its secret value, decrypted, for the user's unexpired vault entries among
        these ids (other memories and an entry the vault key cannot open are left out): for a caller
        that puts its own values back where the guard left placeholders (the LangGraph store)."""
        ids = sorted(set(memory_ids))
        out: dict[str, str] = {}
        for start in range(0, len(ids), IDS_PER_QUERY):
            query = select(MemoryRow).where(
                col(MemoryRow.id).in_(ids[start:start + IDS_PER_QUERY]), col(MemoryRow.user_id) == user_id,
                col(MemoryRow.memory_type) == MemoryType.knowledge_vault.value, unexpired(utcnow()))
            with Session(self.engine) as session:
                for row in session.execute(query).scalars():
                    try:
                        entry = self.to_record(row, reveal=True)
                    except VaultKeyError:  # doctor's finding; the entry reads as missing
                        continue
                    if isinstance(entry, KnowledgeVaultMemory):
                        out[row.id] = entry.secret_value
        return out

    def one_mentioning(self, text: str, *, user_id: str, besides: Iterable[str] = ()) -> str | None:
        """The id of one memory of the user (expired ones too) other than `besides` whose text, fields
        or tags hold `text`, or None: e.g. whether a vault entry's placeholder is still used. SQL LIKE
        on both backends, so a loose match: `%` and `_` in `text` match as wildcards, and SQLite
        matches ASCII letters in either case. Fields and tags are matched as their JSON, so `text`
        should be one JSON keeps as is (no quote, backslash or non-ASCII character)."""
        pattern = f"%{text}%"
        query = select(col(MemoryRow.id)).where(col(MemoryRow.user_id) == user_id, or_(
            col(MemoryRow.text).like(pattern), sql_cast(col(MemoryRow.fields), Text).like(pattern),
            sql_cast(col(MemoryRow.tags), Text).like(pattern)))
        skipped = sorted(set(besides))
        if skipped:
            query = query.where(col(MemoryRow.id).not_in(skipped))
        with self.engine.connect() as conn:
            return conn.execute(query.limit(1)).scalar()

    def provenance_of(self, memory_ids: Iterable[str], *, user_id: str) -> dict[str, Provenance]:
        """What each of these memories of the user cites and who said it, read without building the
        records (search asks this of every candidate)."""
        ids = builtins.list(dict.fromkeys(memory_ids))
        if not ids:
            return {}
        with self.engine.connect() as conn:
            return {i: Provenance(builtins.list(sources or []), actor)
                    for i, owner, sources, actor in conn.execute(_PROVENANCE_BY_ID, {"ids": ids}) if owner == user_id}

    def actors(self, *, user_id: str) -> builtins.list[str]:
        """Everyone the user's episodes were said by, sorted: whom a search's question can name.
        One index seek an actor (`ix_memory_user_actor`, a loose index scan), not a walk of the
        user's rows, so it is asked on every search."""
        with self.engine.connect() as conn:
            return [a for (a,) in conn.execute(ACTORS_OF_USER, {"user_id": user_id}) if a is not None]

    def types_held(self, *, user_id: str) -> frozenset[str]:
        """The memory types the user has a memory of: lets a search filtered by type skip a type the
        user has none of, and the filter itself when it leaves out nothing the user has."""
        with self.engine.connect() as conn:
            return frozenset(t for (t,) in conn.execute(TYPES_OF_USER, {"user_id": user_id}))

    def ids_of_types(self, *, user_id: str, memory_types: Sequence[str], at_most: int) -> builtins.list[str] | None:
        """The ids of the user's memories of `memory_types`, or None when there are more than `at_most`."""
        query = select(col(MemoryRow.id)).where(col(MemoryRow.user_id) == user_id,
                                                col(MemoryRow.memory_type).in_(list(memory_types))).limit(at_most + 1)
        with self.engine.connect() as conn:
            ids = [i for (i,) in conn.execute(query)]
        return ids if len(ids) <= at_most else None

    def holds_between(self, *, user_id: str, memory_types: Sequence[str], start: datetime | None,
                      end: datetime | None) -> bool:
        """Whether the user has a memory of `memory_types` from `start` (inclusive) to `end` (exclusive):
        a search inside a time range that holds nothing need not run. The types are named so that the
        (user, type, time) index is sought once a type instead of walking the user's rows."""
        query = select(col(MemoryRow.id)).where(col(MemoryRow.user_id) == user_id,
                                                col(MemoryRow.memory_type).in_(list(memory_types)))
        if start is not None:
            query = query.where(col(MemoryRow.occurred_at) >= start)
        if end is not None:
            query = query.where(col(MemoryRow.occurred_at) < end)
        with self.engine.connect() as conn:
            return conn.execute(query.limit(1)).first() is not None

    def list(self, *, user_id: str, memory_types: Sequence[str] | None = None, start: datetime | None = None,
             end: datetime | None = None, limit: int = 100, offset: int = 0, newest_first: bool = True,
             reveal: bool = False, before: str | None = None) -> builtins.list[Memory]:
        """The user's unexpired memories in `listing_order`, `limit` of them. `before`: the cursor of the
        previous page's last memory (`MemoryPosition.of(memory, newest_first=...).cursor()`): the memories
        after it in this order, none listed twice or left out while memories are written or deleted
        between pages (one whose `occurred_at` is edited meanwhile can cross the cursor). `offset` (not
        with `before`) skips that many from the start: kept for older callers, as pages counted so shift
        when the list changes. InvalidInput for a cursor `cursor()`
        did not write or one of the other direction (`listing_start`)."""
        query = select(MemoryRow).where(col(MemoryRow.user_id) == user_id, unexpired(utcnow()))
        if memory_types:
            query = query.where(col(MemoryRow.memory_type).in_([MemoryType(t).value for t in memory_types]))
        if start is not None:
            query = query.where(col(MemoryRow.occurred_at) >= start)
        if end is not None:
            query = query.where(col(MemoryRow.occurred_at) < end)
        if before is not None:
            query = query.where(_listed_after(listing_start(before, offset=offset, newest_first=newest_first)))
        query = query.order_by(*listing_order(newest_first)).offset(offset).limit(limit)
        with Session(self.engine) as session:
            return [self.to_record(r, reveal=reveal) for r in session.execute(query).scalars().all()]

    def fields_between(self, *, user_id: str, memory_type: MemoryType, start: datetime,
                       end: datetime) -> builtins.list[tuple[str, dict[str, Any]]]:
        """(id, type fields) of the user's unexpired memories of `memory_type` from `start` (inclusive) to
        `end` (exclusive), in `list`'s order, read without building records: a caller tests every row of
        a busy day cheaply and loads only the few that pass (`get_many`)."""
        query = (select(col(MemoryRow.id), col(MemoryRow.text), col(MemoryRow.fields))
                 .where(col(MemoryRow.user_id) == user_id, col(MemoryRow.memory_type) == memory_type.value,
                        col(MemoryRow.occurred_at) >= start, col(MemoryRow.occurred_at) < end, unexpired(utcnow()))
                 .order_by(col(MemoryRow.occurred_at).desc(), col(MemoryRow.created_at).desc()))
        with self.engine.connect() as conn:
            return [(memory_id, from_refs(fields or {}, text)) for memory_id, text, fields in conn.execute(query)]

    def user_ids(self) -> builtins.list[str]:
        """Every user with memories or logged inputs, sorted."""
        query = union(select(col(MemoryRow.user_id)).distinct(), select(col(InputRow.user_id)).distinct())
        with Session(self.engine) as session:
            return sorted({row[0] for row in session.execute(query)})

    def embedding_model_sample(self) -> str | None:
        """The embedder named on one stored memory with a vector (the last by id: one index seek), or
        None: what an opening engine compares with its own embedder (`doctor` checks every row)."""
        query = (select(col(MemoryRow.embedding_model)).where(col(MemoryRow.embedding_model).is_not(None))
                 .order_by(col(MemoryRow.id).desc()).limit(1))
        with Session(self.engine) as session:
            return session.execute(query).scalar_one_or_none()

    def count(self, *, user_id: str | None = None, expired: bool | None = None) -> dict[str, int]:
        """Memories by type: every stored one (None), those reads return (False), or those past their
        expiry that the sweep has not deleted yet (True)."""
        query = select(col(MemoryRow.memory_type), func.count()).group_by(col(MemoryRow.memory_type))
        if user_id is not None:
            query = query.where(col(MemoryRow.user_id) == user_id)
        if expired is not None:
            readable = unexpired(utcnow())
            query = query.where(~readable if expired else readable)
        with Session(self.engine) as session:
            return {t: int(n) for t, n in session.execute(query).all()}

    def history(self, memory_id: str, *, user_id: str | None = None,
                secrets: bool = False) -> builtins.list[HistoryEvent]:
        """Every change to a memory, oldest first, with full before/after states (an erased event's
        emptied or rewritten: `store.erase`). What undo keeps (`UNDO_KEYS`: a vault entry's earlier
        secret, encrypted; a merge's members) only `secrets=True` returns."""
        with Session(self.engine) as session:
            events = self.history_states(session, memory_id, user_id=user_id)
        if not events:
            raise MemoryNotFound(memory_id)

        def shown(state: dict[str, Any] | None) -> dict[str, Any] | None:
            state = unmarked(state)
            return state if secrets or not state else {k: v for k, v in state.items() if k not in UNDO_KEYS}

        return [HistoryEvent.model_validate({
            "id": r.id, "memory_id": r.memory_id, "user_id": r.user_id, "memory_type": r.memory_type,
            "operation": r.operation, "before": shown(before), "after": shown(after), "actor": r.actor,
            "input_id": r.input_id, "created_at": r.created_at, "erased": is_erased(r.after)})
            for r, before, after in events]

    def history_states(self, session: Session, memory_id: str, *, user_id: str | None = None
                       ) -> builtins.list[tuple[HistoryRow, dict[str, Any] | None, dict[str, Any] | None]]:
        """A memory's history rows, oldest first, each with its full before and after states as
        stored (what undo keeps and the erased mark left in), read in `session`: what `history`
        shows, and what an erasing write rewrites in its transaction."""
        # by memory id only, the user checked on the rows read (as `inserted_as`): with `AND user_id = ?`
        # SQLite walks the user's whole history through its user index
        query = select(HistoryRow).where(col(HistoryRow.memory_id) == memory_id).order_by(col(HistoryRow.id))
        rows = [r for r in session.execute(query).scalars().all() if user_id is None or r.user_id == user_id]
        befores: builtins.list[dict[str, Any] | None] = [None] * len(rows)
        afters: builtins.list[dict[str, Any] | None] = [None] * len(rows)
        following: dict[str, Any] | None = None  # the state the next event started from
        for i in reversed(range(len(rows))):  # newest first: a patched `before` reads against its successor
            r = rows[i]
            if r.after is not None or r.operation == Operation.delete.value:
                afters[i] = r.after
            elif i + 1 < len(rows):
                afters[i] = following
            else:
                current = session.get(MemoryRow, memory_id)
                afters[i] = self.history_dump(self.to_record(current)) if current is not None else None
            befores[i] = undiff_state(r.before, afters[i]) if r.before is not None else None
            following = befores[i]
        return builtins.list(zip(rows, befores, afters))

    def inserted_by(self, user_id: str, actor_suffix: str, source_ids: Sequence[str]) -> builtins.list[str]:
        """Ids of the memories still present that an actor ending in `actor_suffix` inserted and
        that came from any of `source_ids` (e.g. what the offline fallback wrote for an input)."""
        wanted = set(source_ids)
        with Session(self.engine) as session:
            ids = session.execute(select(col(HistoryRow.memory_id)).where(
                col(HistoryRow.user_id) == user_id, col(HistoryRow.operation) == Operation.insert.value,
                col(HistoryRow.actor).endswith(actor_suffix))).scalars().all()
            if not ids:
                return []
            rows = session.execute(select(col(MemoryRow.id), col(MemoryRow.source_ids)).where(
                col(MemoryRow.user_id) == user_id, col(MemoryRow.id).in_(list(set(ids))))).all()
        return sorted(mid for mid, sources in rows if wanted & set(sources or []))

    def inserted_as(self, memory_ids: Sequence[str], *, user_id: str) -> dict[str, str]:
        """Memory id -> the actor that inserted it (its first history event), for these memories of the user."""
        ids = builtins.list(dict.fromkeys(memory_ids))
        if not ids:
            return {}
        # by memory id only, the user checked on the rows read (as `get_many`): with `AND user_id = ?`
        # SQLite walks the user's whole history through its user index
        query = select(col(HistoryRow.memory_id), col(HistoryRow.actor), col(HistoryRow.user_id)).where(
            col(HistoryRow.memory_id).in_(ids),
            col(HistoryRow.operation) == Operation.insert.value).order_by(col(HistoryRow.id))
        out: dict[str, str] = {}
        with Session(self.engine) as session:
            for memory_id, actor, owner in session.execute(query):
                if owner == user_id:
                    out.setdefault(memory_id, actor)
        return out

    def made_from(self, user_id: str, input_ids: Sequence[str], memory_types: Sequence[str],
                  *, within: Sequence[str] | None = None) -> dict[str, builtins.list[str]]:
        """Input id -> ids of the user's memories of `memory_types` whose `source_ids` name it; any cited
        id works the same (a message's: `agents.sources_shown` finds a turn's episode by it).
        `within`: only memories of these inputs (their `input_id`, an episode's session), read through
        the (user, input) index; else each id is sought in the index of cited ids (`store.citations`).
        Reads ids and source ids only (no text, nothing decrypted)."""
        wanted = set(input_ids)
        out: dict[str, builtins.list[str]] = {}
        if not wanted or (within is not None and not within):
            return out
        types = [MemoryType(t).value for t in memory_types]
        if within is None:
            with self.engine.connect() as conn:
                return citing(conn, user_id, sorted(wanted), types)
        query = select(col(MemoryRow.id), col(MemoryRow.source_ids)).where(
            col(MemoryRow.user_id) == user_id, col(MemoryRow.memory_type).in_(types),
            col(MemoryRow.input_id).in_(sorted(set(within))))
        with Session(self.engine) as session:
            for memory_id, sources in session.execute(query):
                for source in wanted.intersection(sources or ()):
                    out.setdefault(source, []).append(memory_id)
        return out

    # ------------------------------------------------------------ expiry

    def expiry_of(self, memory_ids: Sequence[str], *, user_id: str) -> dict[str, tuple[datetime | None, builtins.list[str]]]:
        """Memory id -> (its expiry, its source ids), for the user's memories among these ids."""
        if not memory_ids:
            return {}
        query = select(col(MemoryRow.id), col(MemoryRow.expires_at), col(MemoryRow.source_ids)).where(
            col(MemoryRow.id).in_(builtins.list(memory_ids)), col(MemoryRow.user_id) == user_id)
        with self.engine.connect() as conn:
            return {i: (at, builtins.list(sources or [])) for i, at, sources in conn.execute(query)}

    def set_expiry(self, expiries: dict[str, datetime | None], *, user_id: str) -> int:
        """Set when these memories of the user expire (None: never); returns how many rows changed.
        Expiry is not content: no history event, no re-embedding."""
        if not expiries:
            return 0
        by_when: dict[datetime | None, builtins.list[str]] = {}
        for memory_id, when in expiries.items():  # a batch's memories mostly share one: one UPDATE each
            by_when.setdefault(when, []).append(memory_id)
        with Session(self.engine) as session:
            changed = 0
            for when, ids in by_when.items():
                result = session.execute(sa_update(MemoryRow).where(
                    col(MemoryRow.id).in_(ids), col(MemoryRow.user_id) == user_id).values(expires_at=when))
                assert isinstance(result, CursorResult)  # what SQLAlchemy returns for DML
                changed += result.rowcount
            session.commit()
            self._committed(session, user_id)  # a replica's reader waits for it as for any write
        return changed

    def expired(self, *, now: datetime, limit: int = 1000) -> builtins.list[tuple[str, str]]:
        """(user id, memory id) of memories expired at `now`, soonest first (the expiry index)."""
        query = select(col(MemoryRow.user_id), col(MemoryRow.id)).where(
            col(MemoryRow.expires_at) <= now).order_by(col(MemoryRow.expires_at)).limit(limit)
        with self.engine.connect() as conn:
            return [(u, i) for u, i in conn.execute(query)]

    def record_usage(self, user_id: str, kind: str, usage: dict[str, Any]) -> None:
        with Session(self.engine) as session:
            session.add(UsageRow(user_id=user_id, kind=kind, created_at=utcnow(), **{
                k: usage[k] for k in ("llm_calls", "prompt_tokens", "completion_tokens", "sequential_rounds",
                                      "wall_seconds")}))
            session.commit()

    def usage_totals(self, *, user_id: str | None = None) -> dict[str, dict[str, float]]:
        query = select(col(UsageRow.kind), func.count(), func.sum(col(UsageRow.llm_calls)),
                       func.sum(col(UsageRow.prompt_tokens)), func.sum(col(UsageRow.completion_tokens)),
                       func.sum(col(UsageRow.wall_seconds))).group_by(col(UsageRow.kind))
        if user_id is not None:
            query = query.where(col(UsageRow.user_id) == user_id)
        with Session(self.engine) as session:
            return {kind: {"runs": int(n), "llm_calls": int(calls or 0), "prompt_tokens": int(p or 0),
                           "completion_tokens": int(c or 0), "wall_seconds": round(float(w or 0), 3)}
                    for kind, n, calls, p, c, w in session.execute(query).all()}

    # ------------------------------------------------------------ users

    def delete_user(self, user_id: str) -> dict[str, int]:
        """Remove every row, vector, history event and input of a user."""
        sqlite = self.engine.dialect.name == "sqlite"
        with Session(self.engine) as session:
            if sqlite:  # the write lock first, waiting for another writer (as `apply`): a deferred
                session.connection().exec_driver_sql("BEGIN IMMEDIATE")  # transaction's upgrade fails at once
            erased = start_erasing(session.connection()) if sqlite else None
            # the inputs first: a batch writing for them holds them (`_ledger_rows`); once it has
            # committed, what it wrote is deleted below, and a batch after this finds them gone
            inputs = _deleted(session, sa_delete(InputRow).where(col(InputRow.user_id) == user_id))
            self.fulltext.delete_user(session.connection(), user_id)
            self.sessions.delete_user(session.connection(), user_id)
            if in_transaction(self.vectors):
                self.vectors.drop_user_in(session.connection(), user_id)
            dropping = vector_outbox.mark_user_dropped(session.connection(), user_id) \
                if self.vectors is not None and not self.vectors.transactional else None
            counts = {
                "memories": _deleted(session, sa_delete(MemoryRow).where(col(MemoryRow.user_id) == user_id)),
                "history": _deleted(session, sa_delete(HistoryRow).where(col(HistoryRow.user_id) == user_id)),
                "inputs": inputs,
                "usage": _deleted(session, sa_delete(UsageRow).where(col(UsageRow.user_id) == user_id)),
            }
            if erased is not None:
                stop_erasing(session.connection(), erased)
            session.commit()
            self._committed(session, user_id)  # the replica may still hold what was deleted
        if self.vectors is not None and dropping is not None:
            self.vectors.drop_user(user_id)
            vector_outbox.clear(self.engine, dropping)
        if sqlite and not truncate_log(self.engine):
            log.warning("the write-ahead log was in use: the deleted user's old pages leave it at its next checkpoint")
        return counts
