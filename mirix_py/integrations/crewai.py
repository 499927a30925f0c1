"""`MirixStorage`: mirix-py as a CrewAI `StorageBackend`, for `Memory(storage=...)` and so for crews.

    from crewai import Crew, Memory
    from mirix_py.integrations.crewai import MirixStorage

    storage = MirixStorage(user_id="support-crew", data_dir="./memory")   # or MirixStorage(mx=engine)
    crew = Crew(agents=[...], tasks=[...], memory=Memory(storage=storage, embedder=...))

CrewAI 1.x has one `Memory` class (its LLM picks scope, categories and importance; recall blends
similarity, recency and importance) over a pluggable storage protocol,
`crewai.memory.storage.backend.StorageBackend`; this is that protocol over an embedded engine.
Each `MemoryRecord` is kept as one semantic memory of `user_id` (name: its first category, summary:
its content), so the engine's hybrid search, viewer, export and `delete_user` see what the crew
remembered; the record itself (scope, categories, metadata, importance, dates, source, private and
CrewAI's embedding as float32) rides along in a tag, so it round-trips exactly. CrewAI hands the
backend a query *vector*, not text: `search` ranks the records in scope by cosine similarity to
it (clipped at 0), in CrewAI's embedding space, as its bundled LanceDB backend does with its own
vectors. Every call reads the user's records: meant for a crew's memory, not millions of rows.
crewai pins `mcp~=1.26` and `openai<3`, so it lives in its own venv (scripts/crewai_venv.sh).
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
from collections import Counter
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from crewai.memory.types import MemoryRecord, ScopeInfo

from mirix_py.errors import MemoryNotFound
from mirix_py.records import ID_PREFIX, MemoryBase, MemoryType, SemanticMemory
from mirix_py.store.memories import MemoryPosition

TAG = "crewai:"
PAGE = 500  # memories read per `Mirix.list` call


def _under(scope: str, prefix: str | None) -> bool:
    """Is `scope` the scope `prefix` or below it (`/a` holds `/a/b`, not `/ab`)?"""
    p = (prefix or "/").rstrip("/")
    return not p or scope == p or scope.startswith(p + "/")


def _encode(record: MemoryRecord) -> str:
    body = record.model_dump(mode="json", exclude={"embedding"})
    if record.embedding:
        body["embedding_f32"] = base64.b64encode(np.asarray(record.embedding, dtype="<f4").tobytes()).decode()
    return TAG + json.dumps(body, ensure_ascii=False, sort_keys=True)


def _decode(tag: str) -> MemoryRecord:
    body = json.loads(tag[len(TAG):])
    packed = body.pop("embedding_f32", None)
    record = MemoryRecord.model_validate(body)
    if packed:
        record.embedding = np.frombuffer(base64.b64decode(packed), dtype="<f4").astype(float).tolist()
    return record


class MirixStorage:
    """CrewAI's `StorageBackend` protocol over a mirix engine: records are semantic memories of one user."""

    def __init__(self, user_id: str = "crewai", *, mx: Any = None, data_dir: str | Path | None = None) -> None:
        if mx is None:
            from mirix_py.engine import Mirix

            mx, self._owned = Mirix(data_dir), True
        else:
            self._owned = False
        self.mx, self.user_id = mx, user_id

    def close(self) -> None:
        """Called by `Memory.close()`; closes the engine only if this storage opened it."""
        if self._owned:
            self.mx.close()

    # ------------------------------------------------------------ records

    def _memory_id(self, record_id: str) -> str:
        digest = hashlib.sha256(json.dumps([self.user_id, record_id]).encode("utf-8")).hexdigest()[:32]
        return f"{ID_PREFIX[MemoryType.semantic]}_{digest}"

    def _memories(self) -> Iterator[MemoryBase]:
        """The user's semantic memories, newest first, page after page by cursor: a record saved or
        deleted while they are read is neither read twice nor makes another one missed, as it would
        with pages counted by offset."""
        before: str | None = None
        while True:
            page = self.mx.list(user_id=self.user_id, memory_types=[MemoryType.semantic], limit=PAGE, before=before)
            yield from page
            if len(page) < PAGE:
                return
            before = MemoryPosition.of(page[-1]).cursor()

    def _records(self, scope_prefix: str | None = None) -> Iterator[MemoryRecord]:
        """The crew's records in scope (`_memories` with a CrewAI tag)."""
        for m in self._memories():
            for tag in m.tags:
                if tag.startswith(TAG):
                    record = _decode(tag)
                    if _under(record.scope, scope_prefix):
                        yield record

    def _put(self, record: MemoryRecord) -> None:
        from mirix_py.tools.ops import InsertOp, UpdateOp

        memory_id = self._memory_id(record.id)
        fields: dict[str, Any] = {"name": (record.categories or ["crewai"])[0], "summary": record.content,
                                  "tags": [_encode(record)]}
        try:
            self.mx.get(memory_id, user_id=self.user_id)
        except MemoryNotFound:
            memory = SemanticMemory(id=memory_id, user_id=self.user_id, **fields)
            self.mx.store.apply([InsertOp(memory=memory)], user_id=self.user_id, actor="crewai")
            return
        self.mx.store.apply([UpdateOp(memory_id=memory_id, fields=fields)], user_id=self.user_id, actor="crewai")

    # ------------------------------------------------------------ StorageBackend

    def save(self, records: list[MemoryRecord]) -> None:
        """Insert each record, or replace the one with its id."""
        for record in records:
            self._put(record)

    def update(self, record: MemoryRecord) -> None:
        self._put(record)

    def get_record(self, record_id: str) -> MemoryRecord | None:
        try:
            m = self.mx.get(self._memory_id(record_id), user_id=self.user_id)
        except MemoryNotFound:
            return None
        return next((_decode(t) for t in m.tags if t.startswith(TAG)), None)

    def search(self, query_embedding: list[float], scope_prefix: str | None = None,
               categories: list[str] | None = None, metadata_filter: dict[str, Any] | None = None,
               limit: int = 10, min_score: float = 0.0) -> list[tuple[MemoryRecord, float]]:
        """Records in scope with any of `categories` and every `metadata_filter` pair, best cosine first."""
        q = np.asarray(query_embedding, dtype=float)
        qn = float(np.linalg.norm(q))
        if not qn:
            return []
        scored: list[tuple[MemoryRecord, float]] = []
        for record in self._records(scope_prefix):
            if categories and not any(c in record.categories for c in categories):
                continue
            if metadata_filter and not all(record.metadata.get(k) == v for k, v in metadata_filter.items()):
                continue
            if not record.embedding or len(record.embedding) != len(q):
                continue
            v = np.asarray(record.embedding, dtype=float)
            vn = float(np.linalg.norm(v))
            score = max(0.0, float(v @ q) / (vn * qn)) if vn else 0.0
            if score >= min_score:
                scored.append((record, score))
        scored.sort(key=lambda pair: -pair[1])
        return scored[:limit]

    def delete(self, scope_prefix: str | None = None, categories: list[str] | None = None,
               record_ids: list[str] | None = None, older_than: datetime | None = None,
               metadata_filter: dict[str, Any] | None = None) -> int:
        """Delete the records matching every criterion given (none given: all of them); how many."""
        from mirix_py.tools.ops import DeleteOp

        ids = set(record_ids) if record_ids is not None else None
        doomed = [r.id for r in self._records(scope_prefix)
                  if (ids is None or r.id in ids)
                  and (not categories or any(c in r.categories for c in categories))
                  and (older_than is None or r.created_at < older_than)
                  and (not metadata_filter or all(r.metadata.get(k) == v for k, v in metadata_filter.items()))]
        if doomed:
            self.mx.store.apply([DeleteOp(memory_id=self._memory_id(i)) for i in doomed],
                                user_id=self.user_id, actor="crewai")
        return len(doomed)

    def list_records(self, scope_prefix: str | None = None, limit: int = 200, offset: int = 0) -> list[MemoryRecord]:
        records = sorted(self._records(scope_prefix), key=lambda r: r.created_at, reverse=True)
        return records[offset:offset + limit]

    def list_scopes(self, parent: str = "/") -> list[str]:
        """The immediate child scopes under `parent` that hold records (at any depth below them)."""
        base = (parent or "/").rstrip("/")
        children = set()
        for record in self._records(parent):
            rest = record.scope.rstrip("/")[len(base):].strip("/")
            if rest:
                children.add(f"{base}/{rest.split('/', 1)[0]}")
        return sorted(children)

    def get_scope_info(self, scope: str) -> ScopeInfo:
        records = list(self._records(scope))
        dates = [r.created_at for r in records]
        return ScopeInfo(path=scope, record_count=len(records),
                         categories=sorted({c for r in records for c in r.categories}),
                         oldest_record=min(dates) if dates else None, newest_record=max(dates) if dates else None,
                         child_scopes=self.list_scopes(scope))

    def list_categories(self, scope_prefix: str | None = None) -> dict[str, int]:
        return dict(Counter(c for r in self._records(scope_prefix) for c in r.categories))

    def count(self, scope_prefix: str | None = None) -> int:
        return sum(1 for _ in self._records(scope_prefix))

    def reset(self, scope_prefix: str | None = None) -> None:
        """Delete the crew's records in scope; the engine's other memories of the user stay."""
        self.delete(scope_prefix=scope_prefix)

    async def asave(self, records: list[MemoryRecord]) -> None:
        await asyncio.to_thread(self.save, records)  # engine calls are thread-safe

    async def asearch(self, query_embedding: list[float], scope_prefix: str | None = None,
                      categories: list[str] | None = None, metadata_filter: dict[str, Any] | None = None,
                      limit: int = 10, min_score: float = 0.0) -> list[tuple[MemoryRecord, float]]:
        return await asyncio.to_thread(self.search, query_embedding, scope_prefix, categories, metadata_filter,
                                       limit, min_score)

    async def adelete(self, scope_prefix: str | None = None, categories: list[str] | None = None,
                      record_ids: list[str] | None = None, older_than: datetime | None = None,
                      metadata_filter: dict[str, Any] | None = None) -> int:
        return await asyncio.to_thread(self.delete, scope_prefix, categories, record_ids, older_than,
                                       metadata_filter)


__all__ = ["MirixStorage"]
