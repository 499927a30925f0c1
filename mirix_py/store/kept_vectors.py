"""A small user's vectors kept in memory and searched exactly.

An embedded Chroma builds a collection's HNSW graph afresh from its log each time a process opens it,
until it persists the graph (every 1,000 writes), and builds it in another order each time: the same
query on the same store returns a slightly different nearest list after a restart (measured in
docs/durability.md). A collection of a few thousand vectors is scanned exactly in well under a millisecond, so
for those the engine keeps the vectors (`KeptVectors`) and answers from them: the same answer in
every process, every nearest found. What is kept changes with the index's own writes; an embedded
Chroma does not see another process's writes either (`store/writer_lock.py`).
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # numpy is imported when a search first needs it: opening a store for SQL alone skips it
    import numpy as np

# A collection of at most this many vectors is searched exactly, from its vectors kept in memory.
EXACT_QUERY_MAX = 2_000
# The most vectors one process keeps for exact search (1.5 KB each at 384 dimensions); the least
# recently searched user's go first.
KEPT_VECTORS_MAX = 100_000


def _empty() -> "np.ndarray":
    import numpy as np

    return np.zeros((0, 0), dtype=np.float32)


def _unit_rows(embeddings: Any) -> "np.ndarray":
    import numpy as np

    matrix = np.asarray(embeddings, dtype=np.float32).reshape(len(embeddings), -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms > 0, norms, 1.0)


@dataclass(frozen=True)
class KeptVectors:
    """One user's vectors, rows of unit length, with each vector's memory type. Immutable: a write
    makes a new one, so a search running meanwhile reads a whole state."""

    ids: tuple[str, ...]
    types: tuple[str | None, ...]
    matrix: "np.ndarray"

    @classmethod
    def of(cls, ids: Sequence[str], embeddings: Any,
           types: Sequence[str | None]) -> "KeptVectors":
        if not (len(ids) == len(embeddings) == len(types)):
            raise ValueError("ids, embeddings and types must be as many")
        matrix = _unit_rows(embeddings) if len(ids) else _empty()
        return cls(tuple(ids), tuple(types), matrix)

    def __len__(self) -> int:
        return len(self.ids)

    def upserted(self, ids: Sequence[str], embeddings: Sequence[Sequence[float]],
                 types: Sequence[str | None]) -> "KeptVectors":
        """These vectors written: a known id's vector and type replaced, a new id's added."""
        import numpy as np

        fresh = KeptVectors.of(ids, embeddings, types)
        latest = {i: n for n, i in enumerate(fresh.ids)}  # a batch naming an id twice: its last one
        keep = [n for n, i in enumerate(self.ids) if i not in latest]
        order = sorted(latest.values())
        new_ids = [self.ids[n] for n in keep] + [fresh.ids[n] for n in order]
        new_types = [self.types[n] for n in keep] + [fresh.types[n] for n in order]
        parts = [m for m in (self.matrix[keep] if len(self) else None, fresh.matrix[order]) if m is not None and len(m)]
        matrix = np.vstack(parts) if parts else _empty()
        return KeptVectors(tuple(new_ids), tuple(new_types), matrix)

    def without(self, ids: Sequence[str]) -> "KeptVectors":
        gone = set(ids)
        keep = [n for n, i in enumerate(self.ids) if i not in gone]
        new_ids = [self.ids[n] for n in keep]
        return KeptVectors(tuple(new_ids), tuple(self.types[n] for n in keep),
                           self.matrix[keep] if keep else _empty())

    def nearest(self, query: Sequence[float], k: int,
                memory_types: Sequence[str] | None = None) -> list[tuple[str, float]]:
        """(id, cosine similarity) of the `k` nearest (of `memory_types` when given), best first,
        equal similarities by id."""
        import numpy as np

        if not len(self) or k <= 0:
            return []
        q = np.asarray(query, dtype=np.float32)
        q = q / (np.linalg.norm(q) or 1.0)
        similarity = (self.matrix * q).sum(axis=1)  # row by row: equal vectors score equal (a matrix product need not)
        candidates = np.arange(len(self))
        if memory_types:
            wanted = set(memory_types)
            candidates = np.array([n for n, t in enumerate(self.types) if t in wanted], dtype=np.int64)
            if not len(candidates):
                return []
        scores = similarity[candidates]
        if len(candidates) > k:  # the k best and any tied with the k-th, then ordered exactly
            kth = np.partition(-scores, k - 1)[k - 1]
            chosen = candidates[-scores <= kth]
        else:
            chosen = candidates
        ordered = sorted(chosen.tolist(), key=lambda n: (-float(similarity[n]), self.ids[n]))[:k]
        return [(self.ids[n], float(similarity[n])) for n in ordered]


_SHARED: "weakref.WeakValueDictionary[str, KeptVectorsCache]" = weakref.WeakValueDictionary()
_SHARED_LOCK = threading.Lock()


def shared_cache(folder: str) -> "KeptVectorsCache":
    """The cache of every embedded index of one Chroma folder in this process. Chroma shares one
    system a folder per process, so a second engine on the same data dir sees the first one's writes;
    its kept vectors must see them too. Emptied for each new opener: the folder may have been
    replaced since (what is kept is read again at the next search)."""
    with _SHARED_LOCK:
        cache = _SHARED.get(folder)
        if cache is None:
            cache = _SHARED[folder] = KeptVectorsCache()
    cache.forget()
    return cache


class KeptVectorsCache:
    """The `KeptVectors` of the users searched lately, at most `total` vectors in all (the least
    recently searched user's go first); a user found to hold more than `limit` is remembered as too
    large to keep until a deletion. The users kept or being read hold a write mark, new at each of
    their writes, so vectors read from the index while a write ran are not kept (`keep` with the mark
    `writes` gave). Marks come from one counter and are never given twice: a read that began before
    its user was dropped cannot match the mark of a read begun after."""

    def __init__(self, limit: int = EXACT_QUERY_MAX, total: int = KEPT_VECTORS_MAX) -> None:
        self.limit = limit
        self.total = total
        self._kept: OrderedDict[str, KeptVectors] = OrderedDict()
        self._held = 0  # vectors in `_kept`
        self._large: set[str] = set()
        self._writes: dict[str, int] = {}  # users kept or being read: the mark of their last write
        self._marks = itertools.count(1)
        self._lock = threading.Lock()

    def get(self, user_id: str) -> KeptVectors | None:
        with self._lock:
            kept = self._kept.get(user_id)
            if kept is not None:
                self._kept.move_to_end(user_id)
            return kept

    def is_large(self, user_id: str) -> bool:
        with self._lock:
            return user_id in self._large

    def writes(self, user_id: str) -> int:
        """The user's write mark, followed from now on: call before reading the user's vectors."""
        with self._lock:
            mark = self._writes.get(user_id)
            if mark is None:
                mark = self._writes[user_id] = next(self._marks)
            return mark

    def keep(self, user_id: str, kept: KeptVectors, writes: int) -> bool:
        """Keep `kept`, read when the user's write mark was `writes`; False when a write came since,
        or the user was dropped since."""
        with self._lock:
            if self._writes.get(user_id) != writes:
                return False
            self._store(user_id, kept)
            return True

    def mark_large(self, user_id: str) -> None:
        with self._lock:
            self._drop(user_id)
            self._large.add(user_id)

    def upserted(self, user_id: str, ids: Sequence[str], embeddings: Sequence[Sequence[float]],
                 types: Sequence[str | None]) -> None:
        with self._lock:
            if user_id in self._writes:
                self._writes[user_id] = next(self._marks)
            kept = self._kept.get(user_id)
            if kept is not None:
                self._store(user_id, kept.upserted(ids, embeddings, types))

    def deleted(self, user_id: str, ids: Sequence[str]) -> None:
        with self._lock:
            if user_id in self._writes:
                self._writes[user_id] = next(self._marks)
            self._large.discard(user_id)  # it may be small enough now: counted again at its next search
            kept = self._kept.get(user_id)
            if kept is not None:
                self._store(user_id, kept.without(ids))

    def forget(self, user_id: str | None = None) -> None:
        """Drop what is kept of `user_id` (of every user when None)."""
        with self._lock:
            users = list(self._writes) + list(self._large) if user_id is None else [user_id]
            for user in users:
                self._drop(user)
                self._large.discard(user)

    def _drop(self, user_id: str) -> None:
        """Forget the user's kept vectors; a read of them under way is not kept either."""
        dropped = self._kept.pop(user_id, None)
        if dropped is not None:
            self._held -= len(dropped)
        self._writes.pop(user_id, None)

    def _store(self, user_id: str, kept: KeptVectors) -> None:
        if len(kept) > self.limit:
            self._drop(user_id)
            self._large.add(user_id)
            return
        old = self._kept.get(user_id)
        self._held += len(kept) - (len(old) if old is not None else 0)
        self._kept[user_id] = kept
        self._kept.move_to_end(user_id)
        while self._held > self.total and len(self._kept) > 1:
            evicted, dropped = self._kept.popitem(last=False)
            self._held -= len(dropped)
            self._writes.pop(evicted, None)
