"""`mirix doctor`: check that SQL (the source of truth) and the vector index agree, and repair.

Finds rows without vectors, vectors without rows, vectors a write committed in SQL but never put in
Chroma (its process stopped first: `store.vector_outbox`), embeddings made by another model (the embedder
changed), search texts written by an older version (a resource's text held only its opening before
its whole content was indexed), full-text rows that are not what this version indexes for their
memory's text (written by an older version, e.g. without the CJK letters set apart, or missing),
rows that no longer read as a record (a field referring outside
the row's search text after a hand edit, fields that fail validation), an index of the ids memories
cite (`store.citations`) that is not what their `source_ids` say or whose triggers are missing (a
hand edit, a restore by another tool: a delete then misses what a turn's memories restated), and
vault secrets or logged inputs that the current key cannot decrypt, vectors the index holds but a
query with their own vector does not return (an approximate graph that lost a node), and claims on
screenshot files that no run holds any more (`InputLog.lapsed_source_claims`: a run over a folder killed
before it logged or gave back the files it was reading; the next run to come to such a file takes its
claim over, but one that never comes left it in the table). A row or vector without its other
half is reported only if it still lacks it when looked at again: beside a running writer, a memory
being written or deleted has one half for a moment. It also counts rows that still keep their long texts
twice (written before rows kept each text once: `store.textrefs`), and on pgvector the users large
enough for a graph of their own who have none (`PgVectorIndex.tenants_without_index`); neither is a fault.
Given the data dir, it also lists what in it another local account can read (`store.private`): a store
written before the data dir was made owner-only.

`repair` replays those pending writes, re-embeds what is missing or stale (a user's whole collection when the model changed,
since the dimension may differ), deletes orphan vectors, rebuilds a user's index that lost a node (the ids its new graph still misses
are named for exact scoring: `vectors.EXACT_IDS_KEY`), re-renders stale search texts (and their
full-text rows) and indexes stale full-text rows again, makes that citation index and its triggers
again, rewrites old rows in the single-copy layout, builds the missing tenant graphs, deletes those lapsed
file claims (as they stand then: one a run took over meanwhile stays), and takes group
and other access from the data dir and everything in it, and reports what cannot be fixed.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable

from sqlalchemy import select, text
from sqlmodel import Session, col

from mirix_py.store import citations, vector_outbox
from mirix_py.store.crypto import VaultKeyError
from mirix_py.store.inputs import InputLog
from mirix_py.store.memories import MemoryStore, actor_of
from mirix_py.store.private import narrow, open_to_others
from mirix_py.store.sqlite_erase import newer_format, write_format_again
from mirix_py.store.sqlite_fulltext import SQLiteFullText
from mirix_py.store.tables import InputRow, MemoryRow
from mirix_py.store.textrefs import REFS_KEY, to_refs
from mirix_py.store.vectors import VectorItem
from mirix_py.text.words import indexed_text

log = logging.getLogger("mirix_py")

EMBED_BATCH = 256
TEXT_BATCH = 500  # rows re-rendered per transaction, ids looked up per query
Pairs = list[tuple[str, str]]  # (user id, memory id)


@dataclass
class DoctorReport:
    rows_without_vectors: list[str] = field(default_factory=list)
    vectors_without_rows: list[str] = field(default_factory=list)
    stale_embeddings: list[str] = field(default_factory=list)
    stale_texts: list[str] = field(default_factory=list)
    stale_fulltext: list[str] = field(default_factory=list)  # full-text rows not as this version indexes them
    fulltext_newer_format: list[str] = field(default_factory=list)  # FTS5 tables SQLite before 3.42 cannot read
    citations_missing: int = 0  # (memory, cited id) rows `memory_source` lacks: a delete misses what they restated
    citations_extra: int = 0  # its rows no memory's `source_ids` holds: a delete takes back what it did not say
    citation_triggers_off: list[str] = field(default_factory=list)  # triggers keeping it, missing or disabled
    unreadable_rows: list[str] = field(default_factory=list)
    compactable_rows: list[str] = field(default_factory=list)  # not a fault: `clean` ignores them
    undecryptable_secrets: list[str] = field(default_factory=list)
    undecryptable_inputs: list[str] = field(default_factory=list)
    unreachable_vectors: list[str] = field(default_factory=list)  # stored, but a search never finds them
    vectors_pending: list[str] = field(default_factory=list)  # committed, vector never written (`vector_outbox`)
    tenants_without_index: list[str] = field(default_factory=list)  # not a fault: `clean` ignores them
    open_to_others: list[str] = field(default_factory=list)  # data dir entries other accounts can read
    # claims on files a killed run left (their ids); not a fault (`clean` ignores them): the next run to come
    # to such a file takes its claim over, and nothing is lost or read twice meanwhile
    lapsed_file_claims: list[str] = field(default_factory=list)
    embedder: str | None = None
    repaired: dict[str, int] = field(default_factory=dict)

    @property
    def clean(self) -> bool:
        return not (self.rows_without_vectors or self.vectors_without_rows or self.stale_embeddings
                    or self.stale_texts or self.stale_fulltext or self.fulltext_newer_format or self.unreadable_rows or self.undecryptable_secrets
                    or self.undecryptable_inputs or self.unreachable_vectors or self.vectors_pending
                    or self.open_to_others or self.citations_drifted)

    @property
    def citations_drifted(self) -> bool:
        """`memory_source` does not say what the memories' `source_ids` do, or will not stay so."""
        return bool(self.citations_missing or self.citations_extra or self.citation_triggers_off)

    def summary(self) -> dict[str, int | str | None | dict | list[str]]:
        return {"clean": self.clean, "embedder": self.embedder,
                "rows_without_vectors": len(self.rows_without_vectors),
                "vectors_without_rows": len(self.vectors_without_rows),
                "stale_embeddings": len(self.stale_embeddings), "stale_texts": len(self.stale_texts),
                "stale_fulltext": len(self.stale_fulltext), "fulltext_newer_format": self.fulltext_newer_format,
                "citations_missing": self.citations_missing, "citations_extra": self.citations_extra,
                "citation_triggers_off": self.citation_triggers_off,
                "unreadable_rows": len(self.unreadable_rows), "compactable_rows": len(self.compactable_rows),
                "undecryptable_secrets": len(self.undecryptable_secrets),
                "undecryptable_inputs": len(self.undecryptable_inputs),
                "unreachable_vectors": len(self.unreachable_vectors),
                "vectors_pending": len(self.vectors_pending),
                "tenants_without_index": len(self.tenants_without_index),
                "open_to_others": self.open_to_others[:50], "lapsed_file_claims": len(self.lapsed_file_claims),
                "repaired": self.repaired}


def _rows_by_user(store: MemoryStore) -> dict[str, dict[str, str | None]]:
    """user -> {memory id -> embedding model}"""
    out: dict[str, dict[str, str | None]] = {}
    with Session(store.engine) as session:
        for user_id, memory_id, model in session.execute(
                select(col(MemoryRow.user_id), col(MemoryRow.id), col(MemoryRow.embedding_model))):
            out.setdefault(user_id, {})[memory_id] = model
    return out


def _without_rows(store: MemoryStore, ids: list[str]) -> list[str]:
    """Those of `ids` with no row now. The diagnosis read the rows before the vectors: a memory
    another engine wrote in between looked like an orphan, and repair deleted its vector."""
    if not ids:
        return []
    with Session(store.engine) as session:
        present = set(session.execute(select(col(MemoryRow.id)).where(col(MemoryRow.id).in_(ids))).scalars())
    return [i for i in ids if i not in present]


def _has_rows(store: MemoryStore, user_id: str) -> bool:
    with Session(store.engine) as session:
        return session.execute(select(col(MemoryRow.id)).where(col(MemoryRow.user_id) == user_id).limit(1)).first() \
            is not None


def diagnose(store: MemoryStore, data_dir: Path | None = None) -> DoctorReport:
    report = DoctorReport(embedder=store.embedder.name if store.embedder else None)
    if data_dir is not None:
        report.open_to_others = open_to_others(data_dir)
    marks = vector_outbox.pending(store.engine)  # before the rest: a write's marks still there after it are stuck
    rows = _rows_by_user(store)
    orphans: Pairs = []  # (user, id) of vectors without a row, as the first pass saw them
    missing: Pairs = []  # and of rows without a vector
    unreachable: dict[str, list[str]] = {}  # user -> ids their own vector's query missed, first pass
    if store.vectors is not None:
        users = set(rows) | set(store.vectors.users())
        for user_id in sorted(users):
            sql_ids = rows.get(user_id, {})
            vector_ids = store.vectors.ids(user_id)
            orphans += [(user_id, i) for i in sorted(vector_ids - set(sql_ids))]
            if vector_ids and (lost := store.vectors.unreachable(user_id)):
                unreachable[user_id] = sorted(lost)
            if store.embedder is None:
                continue
            for memory_id, model in sql_ids.items():
                if memory_id not in vector_ids:
                    missing.append((user_id, memory_id))
                elif model != store.embedder.name:
                    report.stale_embeddings.append(memory_id)
    tenants = getattr(store.vectors, "tenants_without_index", None)  # pgvector only
    if tenants is not None:
        report.tenants_without_index = tenants()
    report.stale_texts, report.unreadable_rows, report.compactable_rows = _check_rows(store)
    unreadable = set(report.unreadable_rows)  # no record to index them from: left for a restore
    report.stale_fulltext = [i for i in _stale_fulltext(store) if i not in unreadable]
    if isinstance(store.fulltext, SQLiteFullText):
        report.fulltext_newer_format = newer_format(store.engine)
    with store.engine.connect() as conn:
        report.citations_missing, report.citations_extra = citations.rows_apart(conn)
        report.citation_triggers_off = citations.triggers_off(conn)
    with Session(store.engine) as session:
        for memory_id, secret in session.execute(select(col(MemoryRow.id), col(MemoryRow.secret))
                                                 .where(col(MemoryRow.secret).is_not(None))):
            try:
                store.cipher.decrypt(secret)
            except VaultKeyError:
                report.undecryptable_secrets.append(memory_id)
        for input_id, payload in session.execute(select(col(InputRow.id), col(InputRow.payload))):
            try:
                store.cipher.decrypt(payload)
            except VaultKeyError:
                report.undecryptable_inputs.append(input_id)
    report.lapsed_file_claims = _inputs(store).lapsed_source_claims()
    _report_still_apart(store, report, rows, orphans, missing)
    report.unreachable_vectors = _still_unreachable(store, unreachable)
    if store.vectors is not None and store.embedder is not None:
        still = set(vector_outbox.pending(store.engine))
        report.vectors_pending = sorted({_pending_name(m) for m in marks if m in still})
    return report


def _inputs(store: MemoryStore) -> InputLog:
    """The store's input log as every engine opens it (its lease), for the claims on files."""
    return InputLog(store.engine, store.cipher)


def _pending_name(mark: vector_outbox.PendingVector) -> str:
    """A mark as `vectors_pending` lists it: the memory's id, or what a `delete_user` left to drop."""
    if mark.memory_id == vector_outbox.WHOLE_USER:
        return f"every vector of user {mark.user_id!r} (deleted)"
    return mark.memory_id


def _report_still_apart(store: MemoryStore, report: DoctorReport, rows: dict[str, dict[str, str | None]],
                        orphans: Pairs, missing: Pairs) -> None:
    """Report the vectors without rows and rows without vectors that are still apart when looked at
    again, once the rest is checked. The first pass read every row, then each user's vectors: a
    memory another engine wrote or deleted in between (it commits the row, then mirrors the vector)
    looked like damage that is not there. A row whose vector turns up is checked for its embedder."""
    vectored, rowed = _held_now(store, orphans + missing)
    report.vectors_without_rows = [i for u, i in orphans if (u, i) in vectored and (u, i) not in rowed]
    report.rows_without_vectors = [i for u, i in missing if (u, i) in rowed and (u, i) not in vectored]
    if store.embedder is not None:
        report.stale_embeddings += [i for u, i in missing if (u, i) in vectored and (u, i) in rowed
                                    and rows[u][i] != store.embedder.name]


def _still_unreachable(store: MemoryStore, first: dict[str, list[str]]) -> list[str]:
    """Of the ids the first pass found unreachable (by user), those a second query with their own
    vector still misses: one deleted or rewritten by another engine between the pass's read of the
    vectors and its query looked lost."""
    if store.vectors is None:
        return []
    return [i for user_id, ids in first.items() for i in sorted(store.vectors.unreachable(user_id, only=ids))]


def _held_now(store: MemoryStore, pairs: Pairs) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """(those of `pairs` (user, id) the vector index holds, those with that user's row). The vectors
    are read first, as a writer commits the row before it mirrors the vector: an insert whose vector
    is seen has its row, a delete whose vector is gone has lost its row. Only a write whose mirror
    is still pending at this second look still shows apart."""
    if not pairs or store.vectors is None:
        return set(), set()
    by_user: dict[str, list[str]] = {}
    for user_id, memory_id in pairs:
        by_user.setdefault(user_id, []).append(memory_id)
    vectored = {(u, i) for u, ids in by_user.items() for start in range(0, len(ids), TEXT_BATCH)
                for i in store.vectors.get(u, ids[start:start + TEXT_BATCH])}
    ids = sorted({i for _, i in pairs})
    rowed: set[tuple[str, str]] = set()
    with Session(store.engine) as session:
        for start in range(0, len(ids), TEXT_BATCH):
            rowed.update((u, i) for u, i in session.execute(
                select(col(MemoryRow.user_id), col(MemoryRow.id)).where(col(MemoryRow.id).in_(ids[start:start + TEXT_BATCH]))))
    return vectored, rowed


def _check_rows(store: MemoryStore) -> tuple[list[str], list[str], list[str]]:
    """(ids of rows whose stored search text or actor is not what their record renders now,
    ids of rows that do not read as a record at all,
    ids of rows whose fields still repeat long texts of their search text)."""
    stale: list[str] = []
    unreadable: list[str] = []
    compactable: list[str] = []
    with Session(store.engine) as session:
        for row in session.execute(select(MemoryRow).execution_options(yield_per=1000)).scalars():
            try:
                record = store.to_record(row)
            except ValueError:  # pydantic's ValidationError is one
                unreadable.append(row.id)
                continue
            if row.text != record.search_text() or row.actor != actor_of(record):
                stale.append(row.id)
            elif REFS_KEY not in row.fields and to_refs(row.fields, row.text) != row.fields:
                compactable.append(row.id)
    return stale, unreadable, compactable


def _stale_fulltext(store: MemoryStore) -> list[str]:
    """Ids of memories whose FTS5 row holds other text than `indexed_text` renders of the memory's
    text, or that have none: an older version's process writing beside an upgrade wrote its own
    layout (CJK runs whole, so a word inside one is not found), and nothing else notices. SQLite
    only: on PostgreSQL the database generates the indexed text from the row itself."""
    if not isinstance(store.fulltext, SQLiteFullText):
        return []
    with store.engine.connect() as conn:
        indexed = conn.execute(text("SELECT f.memory_id, f.text, m.text FROM memory_fts AS f "
                                    "JOIN memory AS m ON m.id = f.memory_id"))
        stale = {memory_id for memory_id, held, written in indexed if held != indexed_text(written)}
        stale.update(conn.execute(text("SELECT id FROM memory WHERE id NOT IN (SELECT memory_id FROM memory_fts)"))
                     .scalars())
    return sorted(stale)


def _cites_again(store: MemoryStore) -> int:
    """Make the citation index's triggers and every row of it again (`store.citations`), in one
    transaction: no write lands between them unindexed. Returns the rows written."""
    with store.engine.begin() as conn:
        if conn.dialect.name == "sqlite":  # the write lock first: the driver begins none before DDL
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        citations.create_triggers(conn)
        return citations.rebuild(conn)


def _compact_rows(store: MemoryStore, memory_ids: list[str]) -> int:
    """Rewrite these rows' fields as references into their (unchanged) search text."""
    done = 0
    for start in range(0, len(memory_ids), TEXT_BATCH):
        with Session(store.engine) as session:
            for row in session.execute(
                    select(MemoryRow).where(col(MemoryRow.id).in_(memory_ids[start:start + TEXT_BATCH]))).scalars():
                row.fields = to_refs(row.fields, row.text)
                done += 1
            session.commit()
    return done


def _rerender_texts(store: MemoryStore, memory_ids: list[str]) -> int:
    """Write the current search text of these rows (with their fields, which refer into it:
    `store.textrefs`) and re-index them for full-text search."""
    done = 0
    for start in range(0, len(memory_ids), TEXT_BATCH):
        with Session(store.engine) as session:
            rows = list(session.execute(
                select(MemoryRow).where(col(MemoryRow.id).in_(memory_ids[start:start + TEXT_BATCH]))).scalars())
            for row in rows:
                fresh = store.to_row(store.to_record(row))  # the secret column is left as it is
                row.text, row.fields, row.actor = fresh.text, fresh.fields, fresh.actor
            session.flush()
            store.fulltext.upsert(session.connection(), [(r.id, r.user_id, r.memory_type, r.text) for r in rows])
            for user_id in {r.user_id for r in rows}:  # the sessions these episodes are part of
                inputs = {r.input_id for r in rows if r.user_id == user_id and r.input_id}
                store.fulltext.refresh_near(session.connection(), user_id, inputs)
                store.sessions.refresh(session.connection(), user_id, inputs)
            session.commit()
        done += len(rows)
    return done


def repair(store: MemoryStore, report: DoctorReport,
           progress: Callable[[Iterable, int], Iterable] = lambda it, total: it,
           data_dir: Path | None = None) -> DoctorReport:
    """Fix what can be fixed, then diagnose again. Unreadable rows are left for a restore."""
    narrowed = narrow(data_dir) if data_dir is not None and report.open_to_others else 0
    rewritten = write_format_again(store.engine, report.fulltext_newer_format) if report.fulltext_newer_format else 0
    recited = _cites_again(store) if report.citations_drifted else None
    reindexed = _rerender_texts(store, sorted(set(report.stale_texts) | set(report.stale_fulltext)))
    compacted = _compact_rows(store, report.compactable_rows)
    repaired = {"reembedded": 0, "orphans_deleted": 0, "reindexed": reindexed, "compacted": compacted,
                "modes_narrowed": narrowed}
    if rewritten:  # only a store an earlier erase wrote so
        repaired["fulltext_format_rewritten"] = rewritten
    if recited is not None:  # only a store whose citation index drifted
        repaired["citations_rebuilt"] = recited
    if report.lapsed_file_claims:  # only a store a killed run over a folder left them in
        repaired["file_claims_cleared"] = _inputs(store).clear_lapsed_source_claims()
    if store.vectors is None or store.embedder is None:
        after = diagnose(store, data_dir)
        after.repaired = repaired
        return after
    replayed = vector_outbox.replay(store)  # writes a stopped process left half done
    repaired["reembedded"] += replayed.reembedded
    repaired["orphans_deleted"] += replayed.deleted
    rows = _rows_by_user(store)
    stale_users = {u for u, ids in rows.items() if any(i in ids for i in report.stale_embeddings)}
    missing = set(report.rows_without_vectors)
    orphans = set(report.vectors_without_rows)
    unreadable = set(report.unreadable_rows)  # reported, not re-embedded: there is no record to embed
    todo: list[tuple[str, str]] = []
    for user_id, ids in rows.items():
        if user_id in stale_users:
            store.vectors.drop_user(user_id)  # another model: the dimension may differ
            todo += [(user_id, i) for i in ids]
        else:
            todo += [(user_id, i) for i in ids if i in missing]
            gone = _without_rows(store, sorted(orphans & store.vectors.ids(user_id)))
            if gone:
                store.vectors.delete(user_id, gone)
                repaired["orphans_deleted"] += len(gone)
    for user_id, name in store.vectors.users().items():  # collections of users with no rows left
        if user_id not in rows and not _has_rows(store, user_id):
            repaired["orphans_deleted"] += store.vectors.count(user_id)
            store.vectors.drop_user(user_id)
    for start in progress(range(0, len(todo), EMBED_BATCH), (len(todo) + EMBED_BATCH - 1) // EMBED_BATCH):
        chunk = todo[start:start + EMBED_BATCH]
        with Session(store.engine) as session:
            found = {r.id: r for r in session.execute(
                select(MemoryRow).where(col(MemoryRow.id).in_([i for _, i in chunk]))).scalars()}
            live = [(u, i) for u, i in chunk if i in found and i not in unreadable]
            vectors = store.embedder.embed([store.to_record(found[i]).embedding_text() for _, i in live])
            by_user: dict[str, list[VectorItem]] = {}
            for (user_id, memory_id), vector in zip(live, vectors):
                by_user.setdefault(user_id, []).append(VectorItem(memory_id, vector, found[memory_id].memory_type))
            for user_id, items in by_user.items():
                store.vectors.upsert(user_id, items)
            for _, memory_id in live:
                found[memory_id].embedding_model = store.embedder.name
            session.commit()
        repaired["reembedded"] += len(live)
    unreachable = set(report.unreachable_vectors)
    rebuilt = sorted(u for u, ids in rows.items() if u not in stale_users and unreachable & ids.keys())
    for user_id in rebuilt:
        store.vectors.rebuild(user_id)
    repaired["indexes_rebuilt"] = len(rebuilt)
    index_tenant = getattr(store.vectors, "index_tenant", None)
    if index_tenant is not None:
        for user_id in report.tenants_without_index:
            index_tenant(user_id)
        repaired["tenant_indexes"] = len(report.tenants_without_index)
    after = diagnose(store, data_dir)
    after.repaired = repaired
    return after


def warn_if_embedded_by_another(store: MemoryStore, data_dir: Path | str) -> None:
    """Say once, at open, when the store's memories carry another embedder's vectors than the one
    configured: a search would compare vectors of two models until `mirix doctor --repair`."""
    if store.embedder is None:
        return
    stored = store.embedding_model_sample()
    if stored is not None and stored != store.embedder.name:
        log.warning("memories in %s were embedded by %s, and the embedder now is %s: searches compare vectors "
                    "of two models until `mirix doctor --repair` embeds them again (or set MIRIX_EMBEDDER back)",
                    data_dir, stored, store.embedder.name)
