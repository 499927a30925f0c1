"""The outbox of vector writes to an index outside the SQL transaction (Chroma).

`MemoryStore.apply` commits the rows, then mirrors their vectors. A process killed in between left
an updated memory with its old vector (the row already named the embedder, so `doctor` saw nothing)
and a deleted one with its vector. So the write marks its memories in `vector_pending` in the rows'
own transaction and clears the marks once the index has the vectors; a mark still there at the next
open (or at `doctor --repair`) is replayed from the rows as they are now: a memory that exists gets
its current text embedded again, one that does not loses its vector. pgvector, written in the rows'
transaction, needs no marks for its writes; a restore's and a migration's marks (the text a vector is
made from changed: 0019) are replayed on every index.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any, Callable, Iterable, Protocol, Sequence

from pydantic import BaseModel
from sqlalchemy import Select, column, delete, insert, or_, select, table, tuple_, update
from sqlalchemy.engine import Connection, Engine
from sqlmodel import col

from mirix_py.store.embeddings import Embedder
from mirix_py.store.tables import MemoryRow, VectorPendingRow
from mirix_py.store.vectors import VectorIndex, VectorItem

log = logging.getLogger("mirix_py.store")

PENDING = VectorPendingRow.__table__  # type: ignore[attr-defined]  # SQLModel sets it
REPLAY_BATCH = 256  # marks replayed (texts embedded) at a time


class Rows(Protocol):
    """What a replay reads of the store (`MemoryStore` has it; named here, so neither imports the other)."""

    engine: Engine
    vectors: VectorIndex | None
    embedder: Embedder | None

    def to_record(self, row: Any) -> Any: ...


class PendingVector(BaseModel, frozen=True):
    """One mark: a write (`write_id`) has yet to put this memory's vector in the index, or take it out."""

    write_id: str
    user_id: str
    memory_id: str


class Replayed(BaseModel):
    """What a replay did: vectors written again from the rows' current texts, vectors deleted."""

    reembedded: int = 0
    deleted: int = 0


RESTORED = "restore-"  # how a restore's marks' write ids begin: written at open by design, not left by a crash
REEMBED = "reembed-"  # how a migration's marks begin: what is embedded of these memories changed (0019)


def mark(conn: Connection, user_id: str, memory_ids: Sequence[str], *, prefix: str = "") -> str | None:
    """Mark these memories' vectors pending, in the caller's transaction; the write's id for `clear`,
    or None when there is nothing to mark."""
    if not memory_ids:
        return None
    write_id = (prefix + uuid.uuid4().hex)[:32]
    conn.execute(insert(PENDING), [{"write_id": write_id, "memory_id": m, "user_id": user_id}
                                   for m in dict.fromkeys(memory_ids)])
    return write_id


WHOLE_USER = "*"  # a mark's memory id for "drop the user's whole index" (`delete_user`); no memory id is "*"


def mark_user_dropped(conn: Connection, user_id: str) -> str:
    """In `delete_user`'s transaction: the user's own marks go, and one mark says their index is to be
    dropped, so a process stopped after the commit leaves no vector of theirs past the next open."""
    conn.execute(delete(PENDING).where(PENDING.c.user_id == user_id))
    write_id = uuid.uuid4().hex
    conn.execute(insert(PENDING), [{"write_id": write_id, "memory_id": WHOLE_USER, "user_id": user_id}])
    return write_id


def clear(engine: Engine, write_id: str) -> None:
    """The index has this write's vectors: drop its marks (another write's marks of the same memory stay)."""
    with engine.begin() as conn:
        conn.execute(delete(PENDING).where(PENDING.c.write_id == write_id))


def pending(engine: Engine) -> list[PendingVector]:
    """Every mark left, by user and memory id."""
    with engine.connect() as conn:
        rows = conn.execute(select(PENDING.c.write_id, PENDING.c.user_id, PENDING.c.memory_id)
                            .order_by(PENDING.c.user_id, PENDING.c.memory_id)).all()
    return [PendingVector(write_id=w, user_id=u, memory_id=m) for w, u, m in rows]


def mark_restored(conn: Connection, *, embedded_in_sql: bool) -> int:
    """In a restore's transaction: mark every restored memory whose vector is not already in the
    database (pgvector's `memory_vector`, when `embedded_in_sql`), so that the vectors are written at the
    next open even if the process stops while embedding them; returns how many were marked."""
    memories = MemoryRow.__table__  # type: ignore[attr-defined]  # SQLModel sets it
    query = select(memories.c.user_id, memories.c.id)
    if embedded_in_sql:
        in_sql: Select[Any] = select(column("memory_id")).select_from(table("memory_vector"))
        query = query.where(memories.c.id.not_in(in_sql))
    by_user: dict[str, list[str]] = {}
    for user_id, memory_id in conn.execute(query):
        by_user.setdefault(user_id, []).append(memory_id)
    for user_id, ids in by_user.items():
        mark(conn, user_id, ids, prefix=RESTORED)
    return sum(len(ids) for ids in by_user.values())


# what `records.SECRET_REF` begins with; LIKE finds a superset of its matches on SQLite and PostgreSQL
# alike (`[` is no wildcard in either; SQLite's LIKE also ignores case), and a memory marked
# needlessly is only embedded to the vector it has
SECRET_REF_STARTS = ("[vault:", "[redacted:")


def mark_secret_refs(conn: Connection) -> int:
    """Mark every memory whose text holds a secret's reference for its vector to be made again
    (`REEMBED`): vectors made before such references were embedded alike (`MemoryBase.embedding_text`)
    are of other text, and nothing else tells. Run by migration 0019 and by a restore that loads
    pgvector's vectors as they were backed up; returns how many were marked."""
    memories = MemoryRow.__table__  # type: ignore[attr-defined]  # SQLModel sets it
    holding = or_(*(memories.c.text.like(f"%{start}%") for start in SECRET_REF_STARTS))
    by_user: dict[str, list[str]] = {}
    for user_id, memory_id in conn.execute(select(memories.c.user_id, memories.c.id).where(holding)
                                           .order_by(memories.c.user_id, memories.c.id)):
        by_user.setdefault(user_id, []).append(memory_id)
    for user_id, ids in by_user.items():
        mark(conn, user_id, ids, prefix=REEMBED)
    return sum(len(ids) for ids in by_user.values())


def _each(items: Iterable, total: int) -> Iterable:
    return items


def replay(store: Rows, marks: Sequence[PendingVector] | None = None, *,
           progress: Callable[[Iterable, int], Iterable] = _each) -> Replayed:
    """Make the vector index agree with the rows for each marked memory (all marks left unless
    given), then drop those marks. Nothing is done without an index and an embedder. `progress`
    wraps the batches (a tqdm-like `(iterable, total) -> iterable`)."""
    done = Replayed()
    if store.vectors is None or store.embedder is None:
        return done
    marks = pending(store.engine) if marks is None else list(marks)
    dropped = [m for m in marks if m.memory_id == WHOLE_USER]
    for m in dropped:
        store.vectors.drop_user(m.user_id)
        clear(store.engine, m.write_id)
    marks = [m for m in marks if m.memory_id != WHOLE_USER]
    for start in progress(range(0, len(marks), REPLAY_BATCH), (len(marks) + REPLAY_BATCH - 1) // REPLAY_BATCH):
        chunk = marks[start:start + REPLAY_BATCH]
        found = _replay_chunk(store, chunk)
        done.reembedded += found.reembedded
        done.deleted += found.deleted
    _log_replayed(marks, done)
    return done


def _log_replayed(marks: Sequence[PendingVector], done: Replayed) -> None:
    """A warning when a stopped process left marks; only a note for marks written on purpose (a
    restore's, a migration's), which are not the user's to worry about."""
    if any(not m.write_id.startswith((RESTORED, REEMBED)) for m in marks):
        log.warning("vector writes a stopped process left undone: %d re-embedded, %d deleted",
                    done.reembedded, done.deleted)
    elif any(m.write_id.startswith(REEMBED) for m in marks):
        log.info("vectors made again from the text now embedded (after an upgrade): %d", done.reembedded)
    elif marks:
        log.info("a restore's vectors written: %d", done.reembedded)


def _replay_chunk(store: Rows, marks: Sequence[PendingVector]) -> Replayed:
    assert store.vectors is not None and store.embedder is not None
    wanted = {(m.user_id, m.memory_id) for m in marks}
    with store.engine.connect() as conn:
        rows = {(r.user_id, r.id): r for r in conn.execute(
            select(MemoryRow.__table__).where(  # type: ignore[attr-defined]  # SQLModel sets it
                col(MemoryRow.id).in_(sorted({i for _, i in wanted}))))}
    live: list[tuple[str, str, str, str]] = []  # (user, id, type, text to embed)
    for user_id, memory_id in sorted(wanted & rows.keys()):
        row = rows[(user_id, memory_id)]
        try:
            live.append((user_id, memory_id, row.memory_type, store.to_record(row).embedding_text()))
        except ValueError:  # a row that reads as no record: doctor reports it, there is nothing to embed
            continue
    vectors = store.embedder.embed([text for *_, text in live]) if live else []
    by_user: dict[str, list[VectorItem]] = {}
    for (user_id, memory_id, memory_type, _), vector in zip(live, vectors):
        by_user.setdefault(user_id, []).append(VectorItem(memory_id, vector, memory_type))
    for user_id, items in by_user.items():
        store.vectors.upsert(user_id, items)
    gone: dict[str, list[str]] = {}
    for user_id, memory_id in sorted(wanted - rows.keys()):
        gone.setdefault(user_id, []).append(memory_id)
    for user_id, ids in gone.items():
        store.vectors.delete(user_id, ids)
    with store.engine.begin() as conn:
        if live:
            conn.execute(update(MemoryRow).where(col(MemoryRow.id).in_([i for _, i, *_ in live]))
                         .values(embedding_model=store.embedder.name))
        conn.execute(delete(PENDING).where(tuple_(PENDING.c.write_id, PENDING.c.memory_id).in_(
            [(m.write_id, m.memory_id) for m in marks])))
    return Replayed(reembedded=len(live), deleted=sum(len(ids) for ids in gone.values()))
