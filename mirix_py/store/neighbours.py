"""The turns said just before and after an episode, in the same conversation.

A reply often answers the question its neighbour asked ("Who played at the party?" / "Matt
Patterson, he is so talented!"): the turn that matches a query is not always the one that holds the
answer. Neighbours are the episodes of the same user that came from the same input (one `add`: a
session or batch of messages), next before and after it in time.
"""

from __future__ import annotations

from datetime import datetime
from typing import Sequence

from sqlalchemy import select
from sqlmodel import Session, col

from mirix_py.records import EpisodicMemory, MemoryBase, MemoryType, utcnow
from mirix_py.store.expiry import unexpired
from mirix_py.store.memories import MemoryStore
from mirix_py.store.tables import MemoryRow


def same_input(a: MemoryBase, b: MemoryBase) -> bool:
    """Both came from the same input: an episode's first source id is the input it was made from."""
    return bool(a.source_ids) and bool(b.source_ids) and a.source_ids[0] == b.source_ids[0]


def neighbours(store: MemoryStore, episode: EpisodicMemory, *, start: datetime | None = None,
               end: datetime | None = None) -> list[EpisodicMemory]:
    """The episode just before and the one just after `episode` from the same input (0 to 2 of them),
    inside [`start`, `end`) when given, as the search that found `episode` was.

    Two indexed lookups on (user, type, time); episodes at the very same instant are not neighbours."""
    if episode.occurred_at is None or not episode.source_ids:
        return []
    at = col(MemoryRow.occurred_at)  # a typed column (sqlmodel types the attribute as its value)
    base = select(MemoryRow).where(col(MemoryRow.user_id) == episode.user_id,
                                   col(MemoryRow.memory_type) == MemoryType.episodic.value, unexpired(utcnow()))
    if start is not None:
        base = base.where(at >= start)
    if end is not None:
        base = base.where(at < end)
    before = base.where(at < episode.occurred_at).order_by(at.desc()).limit(1)
    after = base.where(at > episode.occurred_at).order_by(at.asc()).limit(1)
    found: list[EpisodicMemory] = []
    with Session(store.engine) as session:
        for query in (before, after):
            row = session.execute(query).scalars().first()
            if row is not None:
                record = store.to_record(row)
                if isinstance(record, EpisodicMemory) and same_input(record, episode):
                    found.append(record)
    return found


def around(store: MemoryStore, matches: Sequence[MemoryBase], top: int, *, start: datetime | None = None,
           end: datetime | None = None) -> dict[str, list[EpisodicMemory]]:
    """For each of the first `top` matches that is an episode, its neighbours other than those matches
    (a neighbour of two of them is listed once, with the first), inside [`start`, `end`) when given."""
    taken = {m.id for m in matches[:top]}
    out: dict[str, list[EpisodicMemory]] = {}
    for memory in matches[:top]:
        if isinstance(memory, EpisodicMemory):
            extra = [n for n in neighbours(store, memory, start=start, end=end) if n.id not in taken]
            taken.update(n.id for n in extra)
            if extra:
                out[memory.id] = extra
    return out
