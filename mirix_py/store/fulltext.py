"""Full-text search, the part both backends share: the filters, the tie order, and the protocol
each index keeps. A query's words are `text.words.query_terms`, as the prompts' passages take them;
an index holds a memory's text as `text.words.indexed_text` renders it (one Unicode form, a CJK
run's letters and their pairs), never the memory's own text changed.

SQLite ranks with FTS5's `bm25()` (`store.sqlite_fulltext`); PostgreSQL sums Okapi BM25 over
postings of its own (`store.pg_fulltext`). Both give the best `k` (memory id, score), best first;
`store.opening.fulltext_for` picks the one of a database.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Iterable, Protocol, Sequence

from sqlalchemy.engine import Connection


@dataclass(frozen=True)
class Filters:
    """What a search keeps. `left_out`: the ids of the user's memories `memory_types` leaves out, when
    there are few of them (`Searcher.search`): the vector leg then fetches that many more nearest and
    drops them, the cost of an unfiltered query, instead of filtering on type."""
    user_id: str
    memory_types: Sequence[str] | None = None
    start: datetime | None = None
    end: datetime | None = None
    left_out: frozenset[str] | None = None

    def sql(self, alias: str = "m") -> tuple[str, dict]:
        clauses = [f"{alias}.user_id = :user_id"]
        params: dict = {"user_id": self.user_id}
        if self.memory_types:
            names = []
            for i, t in enumerate(self.memory_types):
                params[f"mt{i}"] = t
                names.append(f":mt{i}")
            clauses.append(f"{alias}.memory_type IN ({', '.join(names)})")
        if self.start is not None:
            clauses.append(f"{alias}.occurred_at >= :start")
            params["start"] = self.start
        if self.end is not None:
            clauses.append(f"{alias}.occurred_at < :end")
            params["end"] = self.end
        return " AND ".join(clauses), params


# Equal scores are ordered by the memory: earlier said first (conversation order, as raw-turn rankings
# had), then memories without a time, then by text and id, so two ingestions of the same rows rank
# alike whatever their ids or index layout (`search.tie_key` is the same order for the vector leg).
# SQLite keeps times as UTC text of fixed width, so text order is time order; PostgreSQL compares
# text byte-wise ("C"), as Python compares strings.
TIE_ORDER_SQLITE = "m.occurred_at IS NULL, m.occurred_at, m.text"
TIE_ORDER_POSTGRES = 'm.occurred_at ASC NULLS LAST, m.text COLLATE "C"'
TIES_WITHIN = 32  # a group tied at the cut is looked for among the best this many times k

STATS_TTL_S = 30.0  # a user's counts are cached this long

Part = tuple[int, int]  # (index, count): the index-th of `count` equal slices of a user's memories
PartHit = tuple[str, float, tuple]  # memory id, score, and the key that orders it among equal scores


def merge_parts(parts: Sequence[Sequence[PartHit]], k: int) -> list[tuple[str, float]]:
    """The best `k` of the hits of every part of one search, equal scores in tie order (each part
    holds its own best `k`, so the best `k` of all are among them)."""
    hits = sorted((hit for part in parts for hit in part), key=lambda hit: (-hit[1], hit[2]))
    return [(memory_id, score) for memory_id, score, _ in hits[:k]]


class FullTextIndex(Protocol):
    """The index itself is created by the migrations; this is how rows enter and leave it."""
    def upsert(self, conn: Connection, rows: Iterable[tuple[str, str, str, str]]) -> None: ...
    def delete(self, conn: Connection, items: Iterable[tuple[str, str]]) -> None: ...  # (user_id, memory_id)
    def delete_user(self, conn: Connection, user_id: str) -> None: ...

    def refresh_near(self, conn: Connection, user_id: str, input_ids: Iterable[str]) -> None:
        """Index again the neighbours' words of these inputs' episodes (after their rows changed)."""
        ...

    def search(self, conn: Connection, query: str, filters: Filters, k: int) -> list[tuple[str, float]]:
        """The best `k` (memory id, score), best first, equal scores in the tie order above
        (equal BM25 scores are common: same words, same length)."""
        ...

    def parts(self, conn: Connection, query: str, filters: Filters) -> int:
        """How many parts a search of this user for `query` is worth splitting into, each run on a
        connection of its own side by side (`search_part`, `merge_parts`); 1: search whole."""
        ...

    def search_part(self, conn: Connection, query: str, filters: Filters, k: int, part: Part) -> list[PartHit]:
        """`search` over one part of the user's memories, with each hit's tie order key."""
        ...

    def search_named(self, conn: Connection, query: str, rest: str, filters: Filters,
                     k: int) -> tuple[list[tuple[str, float]], list[tuple[str, float]]] | None:
        """The best `k` for `query` and for `rest` (the query without the names it holds) from one
        index query, where that saves time; None: `search` each."""
        ...

    def rebuild(self, conn: Connection, *, near: bool = True) -> int: ...

