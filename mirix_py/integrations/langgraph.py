"""`MirixStore`: mirix-py as a LangGraph `BaseStore`, for `create_react_agent(..., store=...)`,
`graph.compile(store=...)` and LangMem-style memory tools.

    from mirix_py.integrations.langgraph import MirixStore
    store = MirixStore(mx)                         # an embedded engine (or MirixStore(data_dir="./memory"))
    store.put(("ada", "memories"), "diet", {"content": "Ada is vegetarian."})
    store.search(("ada",), query="what does she eat?")   # hybrid search over all of ada's memories

Namespaces map to users and memory types: the element at `user_position` (0 by default; 1 for
LangMem's `("memories", "{langgraph_user_id}")`) is the mirix user id, and the rest is the path.
The memories the engine itself wrote (from `add`, chat, screenshots) appear under the path
`(memory_type,)` with their id as key and `{"content", "memory_type"}` as value. An item put through
the store is kept as one memory of the type its path starts with (`semantic`, `episodic`,
`procedural` or `resource`; anything else is `semantic`), under an id derived from user, namespace
and key; its text (the `index` fields, else `content`/`text`/`memory`, else the JSON) is what
hybrid search finds, and the value itself rides along in a tag. Core blocks are read-only here and
high-sensitivity vault items are never returned (vault secrets stay masked).

TTLs are supported (`supports_ttl`): an item put with `ttl` (minutes, or the `ttl` config's
`default_ttl`) is a memory with that `expires_at`; reads leave it out once expired and the engine's
sweep deletes it. A get or search with `refresh_ttl` (the default, or the config's `refresh_on_read`)
starts the returned items' TTLs again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Iterable
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, cast

from langgraph.store.base import (
    BaseStore, GetOp, InvalidNamespaceError, Item, ListNamespacesOp, Op, PutOp, Result, SearchItem, SearchOp,
    TTLConfig,
)
from langgraph.store.base.embed import get_text_at_path
from langgraph.store.memory import _compare_values, _does_match  # the filter semantics of LangGraph's own store

from mirix_py.compat.mem0 import memory_text
from mirix_py.errors import MemoryNotFound
from mirix_py.records import (
    ID_PREFIX, EpisodicMemory, KnowledgeVaultMemory, MemoryBase, MemoryType, ProceduralMemory, ResourceMemory,
    SemanticMemory, Sensitivity, utcnow,
)

TAG = "langgraph:"
WRITABLE = {t.value: t for t in (MemoryType.semantic, MemoryType.episodic, MemoryType.procedural,
                                 MemoryType.resource)}


def _kind(m: MemoryBase) -> MemoryType:
    return MemoryType(cast(Any, m).memory_type)


def _text_of(value: dict[str, Any], index: list[str] | None) -> str:
    """What search finds an item by: the `index` fields, else its content, else its JSON."""
    if index:
        texts = [t for path in index for t in get_text_at_path(value, path)]
        if texts:
            return "\n".join(texts)
    for field in ("content", "text", "memory"):
        if isinstance(value.get(field), str) and value[field].strip():
            return value[field]
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


class MirixStore(BaseStore):
    """A LangGraph store over a mirix engine: items are memories, search is the engine's hybrid search."""

    __slots__ = ("mx", "user_position", "_owned", "ttl_config")
    supports_ttl = True

    def __init__(self, mx: Any = None, *, data_dir: str | Path | None = None, user_position: int = 0,
                 ttl: TTLConfig | None = None) -> None:
        """`ttl`: LangGraph's TTL config (`default_ttl` in minutes for puts without one,
        `refresh_on_read`); expired items are deleted by the engine's own sweep, so
        `sweep_interval_minutes` is not read."""
        self.ttl_config = ttl
        if mx is None:
            from mirix_py.engine import Mirix

            mx, self._owned = Mirix(data_dir), True
        else:
            self._owned = False
        self.mx = mx
        self.user_position = user_position

    def close(self) -> None:
        if self._owned:
            self.mx.close()

    # ------------------------------------------------------------ BaseStore

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        results: list[Result] = []
        for op in ops:
            if isinstance(op, GetOp):
                got = self._get(op.namespace, op.key)
                if got is not None and op.refresh_ttl:
                    self._refresh(self._split(op.namespace)[0], [got])
                results.append(got)
            elif isinstance(op, SearchOp):
                found = self._search(op)
                if op.refresh_ttl:
                    by_user: dict[str, list[SearchItem]] = {}
                    for item in found:
                        by_user.setdefault(self._split(item.namespace)[0], []).append(item)
                    for user, items in by_user.items():
                        self._refresh(user, items)
                results.append(found)
            elif isinstance(op, PutOp):
                self._put(op)
                results.append(None)
            elif isinstance(op, ListNamespacesOp):
                results.append(self._list_namespaces(op))
            else:
                raise ValueError(f"unknown store operation {type(op).__name__}")
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.to_thread(self.batch, list(ops))  # engine calls are thread-safe

    # ------------------------------------------------------------ namespaces

    def _split(self, namespace: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
        p = self.user_position
        if len(namespace) <= p or not namespace[p]:
            raise InvalidNamespaceError(f"namespace {namespace!r} has no user id at position {p}")
        return namespace[p], namespace[:p] + namespace[p + 1:]

    def _join(self, user: str, path: tuple[str, ...]) -> tuple[str, ...]:
        p = self.user_position
        return path[:p] + (user,) + path[p:]

    def _item_id(self, user: str, namespace: tuple[str, ...], key: str, kind: MemoryType) -> str:
        digest = hashlib.sha256(json.dumps([user, list(namespace), key]).encode("utf-8")).hexdigest()[:32]
        return f"{ID_PREFIX[kind]}_{digest}"

    @staticmethod
    def _kind_for(path: tuple[str, ...]) -> MemoryType:
        if path and path[0] in (MemoryType.core.value, MemoryType.knowledge_vault.value):
            raise InvalidNamespaceError(f"{path[0]} memories cannot be written through the store")
        return WRITABLE.get(path[0], MemoryType.semantic) if path else MemoryType.semantic

    def _as_item(self, m: MemoryBase, score: float | None = None) -> SearchItem | None:
        """A memory as a store item: put items from their tag, the engine's under (memory_type,)."""
        if isinstance(m, KnowledgeVaultMemory) and m.sensitivity is Sensitivity.high:
            return None
        for tag in m.tags:
            if tag.startswith(TAG):
                body = json.loads(tag[len(TAG):])
                return SearchItem(tuple(body["namespace"]), body["key"], body["value"], m.created_at, m.updated_at,
                                  score)
        kind = _kind(m)
        value = {"content": memory_text(m), "memory_type": kind.value}
        return SearchItem(self._join(m.user_id, (kind.value,)), m.id, value, m.created_at, m.updated_at, score)

    # ------------------------------------------------------------ operations

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        user, path = self._split(namespace)
        candidates = [self._item_id(user, namespace, key, self._kind_for(path))] if not (
            path and path[0] in (MemoryType.core.value, MemoryType.knowledge_vault.value)) else []
        if len(path) == 1 and path[0] in MemoryType._value2member_map_:
            candidates.append(key)  # a memory the engine wrote, addressed by its id
        for memory_id in candidates:
            try:
                item = self._as_item(self.mx.get(memory_id, user_id=user))
            except MemoryNotFound:
                continue
            if item is not None and item.namespace == namespace and item.key == key:
                return Item(value=item.value, key=item.key, namespace=item.namespace, created_at=item.created_at,
                            updated_at=item.updated_at)
        return None

    def _put(self, op: PutOp) -> None:
        from mirix_py.tools.ops import DeleteOp, InsertOp, UpdateOp

        user, path = self._split(op.namespace)
        kind = self._kind_for(path)
        memory_id = self._item_id(user, op.namespace, op.key, kind)
        exists = bool(self.mx.store.expiry_of([memory_id], user_id=user))  # expired or not: the id is taken
        if op.value is None:
            if exists:
                self.mx.store.apply([DeleteOp(memory_id=memory_id)], user_id=user, actor="langgraph")
            return
        value = dict(op.value)
        text = _text_of(value, op.index if isinstance(op.index, list) else None)
        body: dict[str, Any] = {"namespace": list(op.namespace), "key": op.key, "value": value}
        if op.ttl is not None:
            if not op.ttl > 0:
                raise ValueError(f"ttl must be a positive number of minutes, not {op.ttl!r}")
            body["ttl"] = op.ttl
        tag = TAG + json.dumps(body, ensure_ascii=False, sort_keys=True, default=str)
        fields: dict[str, Any] = {
            MemoryType.semantic: {"name": op.key, "summary": text},
            MemoryType.episodic: {"summary": text, "event_type": "langgraph"},
            MemoryType.procedural: {"summary": text},
            MemoryType.resource: {"title": op.key, "content": text},
        }[kind]
        fields["tags"] = [tag]
        fields["expires_at"] = None if op.ttl is None else utcnow() + timedelta(minutes=op.ttl)
        if exists:
            self.mx.store.apply([UpdateOp(memory_id=memory_id, fields=fields)], user_id=user, actor="langgraph")
            return
        cls = {MemoryType.semantic: SemanticMemory, MemoryType.episodic: EpisodicMemory,
               MemoryType.procedural: ProceduralMemory, MemoryType.resource: ResourceMemory}[kind]
        extra: dict[str, Any] = {"occurred_at": datetime.now().astimezone()} if kind is MemoryType.episodic else {}
        memory = cls(id=memory_id, user_id=user, **fields, **extra)
        self.mx.store.apply([InsertOp(memory=memory)], user_id=user, actor="langgraph")  # type: ignore[arg-type]

    def _refresh(self, user: str, items: list[Any]) -> None:
        """Start again the TTLs of these items that were put with one (the engine's own memories have none)."""
        ids = []
        for item in items:
            try:
                ids.append(self._item_id(user, item.namespace, item.key, self._kind_for(self._split(item.namespace)[1])))
            except InvalidNamespaceError:  # under core or knowledge_vault: the engine's, never put here
                continue
        ttls = {memory_id: body["ttl"] for memory_id, body in self._bodies(user, ids).items() if body.get("ttl")}
        now = utcnow()
        self.mx.store.set_expiry({m: now + timedelta(minutes=t) for m, t in ttls.items()}, user_id=user)

    def _bodies(self, user: str, memory_ids: list[str]) -> dict[str, dict[str, Any]]:
        """Memory id -> what `_put` kept in its tag (namespace, key, value, ttl), for items put here."""
        out: dict[str, dict[str, Any]] = {}
        for memory_id, m in self.mx.store.get_many(memory_ids, user_id=user).items():
            for tag in m.tags:
                if tag.startswith(TAG):
                    out[memory_id] = json.loads(tag[len(TAG):])
        return out

    def _users(self, prefix: tuple[str, ...]) -> list[str]:
        p = self.user_position
        return [prefix[p]] if len(prefix) > p and prefix[p] != "*" else list(self.mx.user_ids())

    def _types(self, prefix: tuple[str, ...]) -> list[str] | None:
        """The memory types a prefix can reach (searched on their own, so the engine's other memories
        do not crowd its items out): the one its path names, else semantic; any with no path."""
        path = prefix[:self.user_position] + prefix[self.user_position + 1:]
        if not path or path[0] == "*":
            return None
        return [path[0] if path[0] in MemoryType._value2member_map_ else MemoryType.semantic.value]

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix, want = tuple(op.namespace_prefix), op.offset + op.limit
        types = self._types(prefix)
        found: list[SearchItem] = []
        for user in self._users(prefix):
            if op.query and op.query.strip():
                pool = [(h.memory, h.score) for h in self.mx.search(
                    op.query, user_id=user, limit=max(want * 4, 20), memory_types=types)]
            else:
                pool = [(m, None) for m in self._all(user, types)]
            for m, score in pool:
                item = self._as_item(m, score)
                if item is None or item.namespace[:len(prefix)] != prefix:
                    continue
                if op.filter and not all(_compare_values(item.value.get(k), v) for k, v in op.filter.items()):
                    continue
                found.append(item)
        if op.query:
            found.sort(key=lambda i: -(i.score or 0.0))
        return found[op.offset:want]

    def _all(self, user: str, types: list[str] | None) -> list[MemoryBase]:
        out: list[MemoryBase] = []
        while True:
            page = self.mx.list(user_id=user, memory_types=types, limit=500, offset=len(out))
            out += page
            if len(page) < 500:
                return out

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        prefixes = [c.path for c in op.match_conditions or () if c.match_type == "prefix"]
        users = self._users(tuple(prefixes[0])) if prefixes else list(self.mx.user_ids())
        namespaces: set[tuple[str, ...]] = set()
        for user in users:
            for m in self._all(user, None):
                item = self._as_item(m)
                if item is not None:
                    namespaces.add(item.namespace)
        kept = [ns for ns in namespaces if all(_does_match(c, ns) for c in op.match_conditions or ())]
        if op.max_depth is not None:
            kept = list({ns[:op.max_depth] for ns in kept})
        return sorted(kept)[op.offset:op.offset + op.limit]


__all__ = ["MirixStore"]
