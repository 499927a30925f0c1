"""Neighbours' words: the full-text index holds, beside an episode's own words and weighed at
NEAR_WEIGHT, the content words of the turns said just before and after it in the same input.

A reply that answers a question often shares no word with a later question about it ("Did you
find a drummer for the band?" / "Yes! Priya said she would do it."), while its neighbours do. Both
backends keep them: SQLite in a column of the FTS5 row (`sqlite_fulltext.SQLiteFullText`), PostgreSQL in
`memory.near`, whose lexemes the postings count at NEAR_WEIGHT (`store.pg_postings`). They are
written in the transaction of the write that changed an input's episodes (`MemoryStore.apply`), and
again by `rebuild` after a restore or a migration.
"""

from __future__ import annotations

import re
from typing import Iterable, Protocol, Sequence

from sqlalchemy import select
from sqlalchemy.engine import Connection
from sqlmodel import col

from mirix_py.records import MemoryType
from mirix_py.store.input_tags import cited_tags, cited_tags_by_user
from mirix_py.store.summaries import sums_up
from mirix_py.store.tables import MemoryRow
from mirix_py.text.words import content_words

# The turns before and after an episode whose words its full-text row also holds, and their weight:
# a question often names what the turns around its answer said; this window and weight won a
# leave-one-conversation-out pick (figures: benchmarks/docs/locomo_near.md).
NEAR_BEFORE = 3
NEAR_AFTER = 2
NEAR_WEIGHT = 0.5
EPISODIC = MemoryType.episodic.value

_HEADER = re.compile(r"^\[[^\]]*\]\s*")  # an episode's "[8 May 2023, 13:56] " (`EpisodicMemory.search_text`)


def said_part(text: str) -> str:
    """An episode's search text without its date header: what its neighbours' rows take from it."""
    return _HEADER.sub("", text, count=1)


def near_texts(turns: Sequence[tuple[str, str]], before: int = NEAR_BEFORE, after: int = NEAR_AFTER) -> dict[str, str]:
    """(memory id, search text) of one input's episodes in the order said -> each id's neighbours'
    content words: those of the `before` turns before it and the `after` turns after it, without
    their date headers (stopwords would only lengthen the row: no query searches for them)."""
    said = [" ".join(content_words(said_part(text))) for _, text in turns]
    return {memory_id: " ".join(t for t in said[max(0, n - before):n] + said[n + 1:n + 1 + after] if t)
            for n, (memory_id, _) in enumerate(turns)}


def input_turns(conn: Connection, user_id: str, input_ids: Iterable[str]) -> dict[str, list[tuple[str, str]]]:
    """Input id -> its turns' episodes as (memory id, search text) in the order said (time, then
    creation, then id); inputs without episodes left out. An episode that sums up several turns (a
    model's, `summaries.sums_up`) is no turn: its words would enter the turns' rows, which then rank
    otherwise than in a store without a model. Sessions are joined from the same lists."""
    wanted = sorted(set(input_ids))
    if not wanted:
        return {}
    rows = conn.execute(
        select(col(MemoryRow.id), col(MemoryRow.input_id), col(MemoryRow.text), col(MemoryRow.source_ids))
        .where(col(MemoryRow.user_id) == user_id, col(MemoryRow.input_id).in_(wanted),
               col(MemoryRow.memory_type) == EPISODIC)
        .order_by(col(MemoryRow.input_id), col(MemoryRow.occurred_at), col(MemoryRow.created_at),
                  col(MemoryRow.id))).all()
    tags = cited_tags(conn, (row.source_ids for row in rows), user_id=user_id)
    turns: dict[str, list[tuple[str, str]]] = {}
    for memory_id, input_id, text, source_ids in rows:
        if input_id is not None and not sums_up(source_ids or [], tags):  # input_id: always, by the IN above
            turns.setdefault(input_id, []).append((memory_id, text or ""))
    return turns


def near_of_inputs(conn: Connection, user_id: str, input_ids: Iterable[str]) -> dict[str, str]:
    """Memory id -> its neighbours' words, for every episode of these inputs."""
    out: dict[str, str] = {}
    for turns in input_turns(conn, user_id, input_ids).values():
        out.update(near_texts(turns))
    return out


def inputs_by_user(conn: Connection) -> dict[str, list[str]]:
    """Every user's inputs that hold episodes (what a rebuild writes the neighbours' words of)."""
    by_user: dict[str, list[str]] = {}
    for user_id, input_id in conn.execute(
            select(col(MemoryRow.user_id), col(MemoryRow.input_id)).distinct()
            .where(col(MemoryRow.input_id).is_not(None), col(MemoryRow.memory_type) == EPISODIC)).all():
        if input_id is not None:  # always, by the WHERE above
            by_user.setdefault(user_id, []).append(input_id)
    return by_user


class NearIndex(Protocol):
    """What a full-text backend offers for the neighbours' words (both backends implement it)."""

    def refresh_near(self, conn: Connection, user_id: str, input_ids: Iterable[str]) -> None: ...

    def clear_near(self, conn: Connection, user_id: str, memory_ids: Iterable[str]) -> None: ...


def summaries_by_user(conn: Connection) -> dict[str, list[str]]:
    """User -> the ids of the episodes that sum up several turns of an input (`summaries.sums_up`)."""
    rows = conn.execute(
        select(col(MemoryRow.id), col(MemoryRow.user_id), col(MemoryRow.source_ids))
        .where(col(MemoryRow.input_id).is_not(None), col(MemoryRow.memory_type) == EPISODIC)).all()
    tags = cited_tags_by_user(conn, (row.source_ids for row in rows))
    found: dict[str, list[str]] = {}
    for memory_id, user_id, source_ids in rows:
        if sums_up(source_ids or [], tags.get(user_id, frozenset())):
            found.setdefault(user_id, []).append(memory_id)
    return found


def renew(conn: Connection, index: NearIndex) -> int:
    """Write every input's neighbours' words again, from its turns only, and clear those of the
    summaries (stores written before held a summary's words in the turns' rows, and turns added with
    a caller's id none, both taken for summaries). Only rows that change are written. Returns how
    many summaries were found."""
    for user_id, input_ids in inputs_by_user(conn).items():
        index.refresh_near(conn, user_id, input_ids)
    count = 0
    for user_id, summaries in summaries_by_user(conn).items():
        index.clear_near(conn, user_id, summaries)
        count += len(summaries)
    return count
