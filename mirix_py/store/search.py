"""Search over one user's memories: BM25, embedding, hybrid (RRF of both) and plain substring.

Ranking helpers are pure functions; `Searcher` only gathers candidate lists and loads records.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from typing import Sequence

from sqlalchemy import select
from sqlmodel import Session, col

from mirix_py.errors import InvalidInput
from mirix_py.records import MemoryType, SearchHit, SearchMethod
from mirix_py.store import neighbours
from mirix_py.store.embeddings import CachedEmbedder
from mirix_py.store.fulltext import Filters
from mirix_py.store.memories import MemoryStore
from mirix_py.store.questions import QUESTION_POOL, weigh_questions
from mirix_py.store.tables import MemoryRow

log = logging.getLogger("mirix_py.search")

# RRF's constant: 60 in the original paper. At 60, an item ranked ~50th by both legs outscores one
# ranked 1st by one leg, so deep consensus crowds out strong single-leg matches. On the LoCoMo dev
# split (750-word budget) k=60 gave 0.732 and k=3..15 all gave 0.760-0.765 (raw-turn RRF 0.727 at
# k=60, 0.741 at k=10): a plateau, so 10 is no knife-edge tuning.
RRF_K = 10


def rrf_fuse(rankings: Sequence[Sequence[str]], k: int = RRF_K,
             weights: Sequence[float] | None = None) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: sum of weight / (k + rank) over the lists an item appears in.

    Equal sums are common (ranks a and b in one list tie with b and a in the other): they go to the
    item the first ranking placed higher, then the next ranking, and only then to the id. Memory ids
    are random, so ordering ties by id made the order, and which hits `context` expands, change from
    one ingestion to the next (LoCoMo conv-30#75 lost its evidence that way)."""
    weights = weights or [1.0] * len(rankings)
    scores: dict[str, float] = {}
    positions: list[dict[str, int]] = []
    for ranking, weight in zip(rankings, weights):
        seen: dict[str, int] = {}
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + weight / (k + rank)
            seen.setdefault(item, rank)
        positions.append(seen)
    absent = max((len(r) for r in rankings), default=0) + 1
    return sorted(scores.items(),
                  key=lambda kv: (-kv[1], *(p.get(kv[0], absent) for p in positions), kv[0]))


def with_context(store: MemoryStore, hits: list[SearchHit], top: int) -> list[SearchHit]:
    """`hits` with the neighbours of the first `top` after each (see `Searcher.search`)."""
    extra = neighbours.around(store, [h.memory for h in hits], top)
    out: list[SearchHit] = []
    given: set[str] = set()
    for hit in hits:
        if hit.memory.id in given:
            continue
        out.append(hit)
        given.add(hit.memory.id)
        for n in extra.get(hit.memory.id, []):
            out.append(SearchHit(text=n.search_text(), score=hit.score, memory=n, method=hit.method,
                                 context_for=hit.memory.id))
            given.add(n.id)
    return out


class Searcher:
    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        inner = store.embedder
        self.embedder = None if inner is None else (inner if isinstance(inner, CachedEmbedder) else CachedEmbedder(inner))
        self._warned = False
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def _workers(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="mirix-search")
            return self._pool

    def close(self) -> None:
        with self._pool_lock:
            if self._pool is not None:
                self._pool.shutdown(wait=True)
                self._pool = None

    @property
    def vector_ready(self) -> bool:
        return self.embedder is not None and self.store.vectors is not None

    def search(self, query: str, *, user_id: str, limit: int = 10, memory_types: Sequence[MemoryType | str] | None = None,
               start: datetime | None = None, end: datetime | None = None,
               method: SearchMethod | str = SearchMethod.hybrid, context: int = 0) -> list[SearchHit]:
        """The best `limit` matches; with `context` N, each of the first N that is an episode is
        followed by the turns said just before and after it in the same input (`store.neighbours`),
        marked `context_for` and not counted in `limit` (a match already given as context is not
        repeated)."""
        query = (query or "").strip()
        if not query:
            raise InvalidInput("search query is empty")
        if limit <= 0:
            raise InvalidInput("limit must be positive")
        if context < 0:
            raise InvalidInput("context must be zero or positive")
        try:
            method = SearchMethod(method)
        except ValueError as exc:
            raise InvalidInput(f"unknown search method {method!r}: use {[m.value for m in SearchMethod]}") from exc
        types = [MemoryType(t).value for t in memory_types] if memory_types else None
        filters = Filters(user_id=user_id, memory_types=types, start=start, end=end)

        if method in (SearchMethod.hybrid, SearchMethod.embedding) and not self.vector_ready:
            if not self._warned:
                log.warning("no embedder loaded: %s search runs on full text (BM25) only", method.value)
                self._warned = True
            method_used = SearchMethod.bm25
        else:
            method_used = method

        depth = max(limit * 3, 30)
        pool = limit + QUESTION_POOL  # a few more, so facts weighed against chat questions can move up
        if method_used is SearchMethod.bm25:
            ranked = self._bm25(query, filters, pool)
        elif method_used is SearchMethod.embedding:
            ranked = self._vector(query, filters, pool)
        elif method_used is SearchMethod.string:
            ranked = self._substring(query, filters, pool)
        else:
            # The legs run side by side: the full-text leg in a worker thread (SQLite releases the GIL),
            # the query embedding here on one torch thread (the MiniLM embedder uses one for a short
            # text). With torch on two threads the legs fought over both cores and p95 got ten times worse.
            lexical_leg = self._workers().submit(self._bm25, query, filters, depth)
            try:
                semantic = [i for i, _ in self._vector(query, filters, depth)]
            finally:
                lexical = [i for i, _ in lexical_leg.result()]
            ranked = rrf_fuse([lexical, semantic])[:pool]
        records = self.store.get_many([i for i, _ in ranked], user_id=user_id)
        ranked = weigh_questions(ranked, records)[:limit]
        hits = []
        for memory_id, score in ranked:
            memory = records.get(memory_id)
            if memory is None:  # a vector whose row is gone: skip, `doctor` cleans it
                continue
            hits.append(SearchHit(text=memory.search_text(), score=score, memory=memory, method=method))
        return with_context(self.store, hits, context) if context else hits

    def _bm25(self, query: str, filters: Filters, k: int) -> list[tuple[str, float]]:
        with self.store.engine.connect() as conn:
            return self.store.fulltext.search(conn, query, filters, k)

    def _vector(self, query: str, filters: Filters, k: int) -> list[tuple[str, float]]:
        assert self.embedder is not None and self.store.vectors is not None
        embedding = self.embedder.embed_query(query)
        timed = filters.start is not None or filters.end is not None
        fetch = k * 4 if timed else k
        hits = self.store.vectors.query(filters.user_id, embedding, fetch, filters.memory_types)
        if timed and hits:
            allowed = self._within_time([i for i, _ in hits], filters)
            hits = [h for h in hits if h[0] in allowed]
        return hits[:k]

    def _within_time(self, ids: list[str], filters: Filters) -> set[str]:
        query = select(col(MemoryRow.id), col(MemoryRow.user_id), col(MemoryRow.occurred_at)) \
            .where(col(MemoryRow.id).in_(ids))
        with Session(self.store.engine) as session:  # by primary key; see MemoryStore.get_many
            rows = session.execute(query).all()
        return {i for i, user, when in rows if user == filters.user_id and when is not None
                and (filters.start is None or when >= filters.start) and (filters.end is None or when < filters.end)}

    def _substring(self, query: str, filters: Filters, k: int) -> list[tuple[str, float]]:
        stmt = select(col(MemoryRow.id)).where(col(MemoryRow.user_id) == filters.user_id, col(MemoryRow.text).ilike(
            "%" + query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%", escape="\\"))
        if filters.memory_types:
            stmt = stmt.where(col(MemoryRow.memory_type).in_(list(filters.memory_types)))
        if filters.start is not None:
            stmt = stmt.where(col(MemoryRow.occurred_at) >= filters.start)
        if filters.end is not None:
            stmt = stmt.where(col(MemoryRow.occurred_at) < filters.end)
        stmt = stmt.order_by(col(MemoryRow.occurred_at).desc()).limit(k)
        with Session(self.store.engine) as session:
            ids = list(session.execute(stmt).scalars())
        return [(i, 1.0 / rank) for rank, i in enumerate(ids, start=1)]
