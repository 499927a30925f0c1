"""mem0's `Memory` API over the mirix-py engine: code written for mem0 runs with only the import changed.

    from mirix_py.compat.mem0 import Memory     # instead of: from mem0 import Memory

    m = Memory()                                # an embedded engine in MIRIX_DATA_DIR (or ~/.mirix)
    m.add([{"role": "user", "content": "I love sci-fi movies."}], user_id="alice", metadata={"category": "movies"})
    m.search("What do you know about me?", filters={"user_id": "alice"})   # {"results": [{"id", "memory", ...}]}

Both call styles of mem0 are taken: 1.x (`user_id=`, `limit=`) and 2.x (`filters={"user_id": ...}`,
`top_k=`). Results have mem0's shapes (`{"results": [...]}` with `id`, `memory`, `hash`, `metadata`,
`score`, `created_at`, `updated_at`, `user_id`, ...) plus `memory_type`. How mem0's ids map onto
ours: a mirix user is `user_id`, else `agent:<agent_id>`, else `run:<run_id>`; `agent_id`, `run_id`
and `metadata` travel with each input as its caller id (`mem0:{json}`, at most 256 characters), so
every memory made from it carries them in `source_ids`. What differs from mem0 is in
docs/integrations.md.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from typing import Any, cast

from mirix_py.boundary.inputs import parse_expiry
from mirix_py.boundary.timezones import said_offset, user_zone
from mirix_py.errors import InvalidInput, MemoryNotFound
from mirix_py.text.storable import first_problem
from mirix_py.records import (
    MEMORY_ADAPTER, CoreMemory, EpisodicMemory, HistoryEvent, KnowledgeVaultMemory, MemoryBase, MemoryType,
    Operation, ProceduralMemory, ResourceMemory, SemanticMemory,
)

TAG = "mem0:"
_EVENTS = {Operation.insert: "ADD", Operation.update: "UPDATE", Operation.merge: "UPDATE", Operation.delete: "DELETE"}
_IDS = ("user_id", "agent_id", "run_id")
# the field that holds a memory's main text, which `update(memory_id, text)` rewrites
_MAIN_FIELD: dict[MemoryType, str] = {
    MemoryType.core: "value", MemoryType.episodic: "summary", MemoryType.semantic: "summary",
    MemoryType.procedural: "summary", MemoryType.resource: "summary", MemoryType.knowledge_vault: "caption",
}


def memory_text(m: MemoryBase) -> str:
    """A memory as mem0 shows one: the statement itself, without our prompt decorations (dates, labels)."""
    if isinstance(m, CoreMemory):
        return m.value
    if isinstance(m, EpisodicMemory):
        return m.summary if not m.details or m.details == m.summary else f"{m.summary} — {m.details}"
    if isinstance(m, SemanticMemory):
        return f"{m.name}: {m.summary}" + (f" {m.details}" if m.details else "")
    if isinstance(m, ProceduralMemory):
        return m.search_text()
    if isinstance(m, ResourceMemory):
        return f"{m.title}: {m.summary}" if m.summary else m.title
    if isinstance(m, KnowledgeVaultMemory):
        return m.caption
    return m.search_text()


def _kind(m: MemoryBase) -> MemoryType:
    return MemoryType(cast(Any, m).memory_type)  # every concrete record type declares it


def _scope_tag(agent_id: str | None, run_id: str | None, metadata: dict[str, Any] | None) -> str | None:
    """The caller id an input carries: mem0's agent_id, run_id and metadata, as compact JSON."""
    body = {k: v for k, v in (("agent_id", agent_id), ("run_id", run_id), ("metadata", metadata or None)) if v}
    if not body:
        return None
    if found := first_problem(body, "scope"):  # before json.dumps: a deeply nested dict overflows its stack
        raise InvalidInput(found)
    tag = TAG + json.dumps(body, separators=(",", ":"), sort_keys=True, ensure_ascii=False, default=str)
    if len(tag) > 256:
        raise InvalidInput("agent_id, run_id and metadata together are over 256 characters of JSON "
                           "(mirix keeps them as the input's source_id)")
    return tag


def _scope_of(m: MemoryBase) -> dict[str, Any]:
    """agent ids, run ids and merged metadata of every mem0 input a memory came from."""
    agents: list[str] = []
    runs: list[str] = []
    metadata: dict[str, Any] = {}
    for source in m.source_ids:
        if not source.startswith(TAG):
            continue
        try:
            body = json.loads(source[len(TAG):])
        except ValueError:
            continue
        if body.get("agent_id") and body["agent_id"] not in agents:
            agents.append(body["agent_id"])
        if body.get("run_id") and body["run_id"] not in runs:
            runs.append(body["run_id"])
        metadata.update(body.get("metadata") or {})
    return {"agent_ids": agents, "run_ids": runs, "metadata": metadata}


def user_for(user_id: str | None, agent_id: str | None, run_id: str | None) -> str:
    """The mirix user mem0's ids name: `user_id`, else `agent:<agent_id>`, else `run:<run_id>`."""
    if user_id:
        return user_id
    if agent_id:
        return f"agent:{agent_id}"
    if run_id:
        return f"run:{run_id}"
    raise ValueError("at least one of user_id, agent_id, run_id is required (top level or in filters)")


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _item(m: MemoryBase, *, score: float | None = None) -> dict[str, Any]:
    """mem0's memory item (`MemoryItem` plus the promoted ids), with our `memory_type`."""
    text = memory_text(m)
    scope = _scope_of(m)
    item: dict[str, Any] = {
        "id": m.id, "memory": text, "hash": hashlib.md5(text.encode("utf-8")).hexdigest(),
        "created_at": _iso(m.created_at), "updated_at": _iso(m.updated_at),
    }
    if score is not None:
        item["score"] = score
    user = m.user_id
    if not user.startswith(("agent:", "run:")):
        item["user_id"] = user
    if scope["agent_ids"]:
        item["agent_id"] = scope["agent_ids"][0]
    if scope["run_ids"]:
        item["run_id"] = scope["run_ids"][0]
    if scope["metadata"]:
        item["metadata"] = scope["metadata"]
    item["memory_type"] = _kind(m).value
    if m.expires_at is not None:
        item["expiration_date"] = (m.expires_at - timedelta(microseconds=1)).date().isoformat()
    return item


def expiry_of_date(value: Any) -> datetime | None:
    """mem0's `expiration_date` ("YYYY-MM-DD", in UTC, the day itself included): the memory expires at
    the start of the next day. None: it never expires."""
    if value is None:
        return None
    if not isinstance(value, str) or len(value.strip()) != 10:
        raise InvalidInput(f"expiration_date must be a YYYY-MM-DD date, not {value!r}")
    try:
        day = date.fromisoformat(value.strip())
    except ValueError as exc:
        raise InvalidInput(f"expiration_date must be a YYYY-MM-DD date, not {value!r}") from exc
    return datetime.combine(day + timedelta(days=1), time.min, tzinfo=timezone.utc)


def _matches(value: Any, want: Any) -> bool:
    """One of mem0's metadata filters: a value, "*", or {"eq"|"ne"|"in"|"nin"|"contains"|"icontains": ...}."""
    if want == "*":
        return value is not None
    if not isinstance(want, dict):
        return bool(value == want)
    ops = {
        "eq": lambda v, w: v == w, "ne": lambda v, w: v != w,
        "in": lambda v, w: v in w, "nin": lambda v, w: v not in w,
        "contains": lambda v, w: isinstance(v, str) and w in v,
        "icontains": lambda v, w: isinstance(v, str) and w.lower() in v.lower(),
    }
    unknown = set(want) - set(ops)
    if unknown:
        raise ValueError(f"filter operators {sorted(unknown)} are not supported by mirix's mem0 surface")
    try:
        return all(ops[op](value, w) for op, w in want.items())
    except TypeError as exc:  # "in" with no list, "contains" with no string, ...
        raise ValueError(f"filter {want!r} does not fit the value {value!r}: {exc}") from exc


class Memory:
    """mem0's `Memory` backed by an embedded mirix engine (pass `mx` to share one)."""

    def __init__(self, data_dir: str | Path | None = None, *, mx: Any = None, database_url: str | None = None,
                 chroma_url: str | None = None) -> None:
        if mx is None:
            from mirix_py.engine import Mirix

            mx = Mirix(data_dir, database_url=database_url, chroma_url=chroma_url)
            self._owned = True
        else:
            self._owned = False
        self.mx = mx

    @classmethod
    def from_config(cls, config_dict: dict[str, Any] | None = None, **kwargs: Any) -> "Memory":
        """mem0's provider sections (llm, embedder, vector_store, ...) do not apply and are ignored;
        `data_dir`, `database_url` and `chroma_url` are read."""
        config = {**(config_dict or {}), **kwargs}
        return cls(config.get("data_dir"), database_url=config.get("database_url"),
                   chroma_url=config.get("chroma_url"))

    # ------------------------------------------------------------ writing

    def add(self, messages: Any, *, user_id: str | None = None, agent_id: str | None = None,
            run_id: str | None = None, metadata: dict[str, Any] | None = None, infer: bool = True,
            expiration_date: str | None = None, **_mem0_only: Any) -> dict[str, Any]:
        """Remember a string, a message dict or a list of messages. `infer=False` keeps each non-system
        message as one memory as it is; else the engine extracts memories (its rules or its model).
        `expiration_date` ("YYYY-MM-DD", UTC, inclusive): the memories are not read after that day, and
        are then deleted (`Mirix.add`'s `expires_at`)."""
        user = user_for(user_id, agent_id, run_id)
        expires_at = parse_expiry(expiry_of_date(expiration_date))
        tag = _scope_tag(agent_id, run_id, metadata)
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        elif isinstance(messages, dict):
            messages = [messages]
        if not isinstance(messages, list):
            raise InvalidInput("messages must be str, dict, or list[dict]")
        if not infer:
            return {"results": self._add_raw(messages, user, tag, expires_at)}
        kept = [{k: v for k, v in m.items() if k in ("role", "content", "name", "occurred_at")} for m in messages
                if isinstance(m, dict)]
        result = self.mx.add(kept, user_id=user, source_id=tag, wait=True, expires_at=expires_at)
        results: list[dict[str, Any]] = []
        seen: set[str] = set()
        for change in result.changes:
            if change.memory_id in seen:
                continue
            seen.add(change.memory_id)
            event = _EVENTS[change.operation]
            if event == "DELETE":
                results.append({"id": change.memory_id, "memory": "", "event": event})
                continue
            try:
                item = _item(self.mx.get(change.memory_id, user_id=user))
            except MemoryNotFound:  # changed again later in the same batch
                continue
            results.append({k: item[k] for k in ("id", "memory", "metadata", "memory_type") if k in item}
                           | {"event": event})
        return {"results": results}

    def _add_raw(self, messages: list[Any], user: str, tag: str | None,
                 expires_at: datetime | None) -> list[dict[str, Any]]:
        from mirix_py.tools.ops import InsertOp

        now = datetime.now(timezone.utc)
        offset = said_offset(None, now, user_zone(self.mx.settings.timezone))  # its day on the user's clock
        ops = [InsertOp(memory=EpisodicMemory(user_id=user, summary=str(m["content"]).strip(), occurred_at=now,
                                              said_offset_minutes=offset, actor=str(m.get("name") or m["role"]),
                                              source_ids=[tag] if tag else [], expires_at=expires_at))
               for m in messages if isinstance(m, dict) and m.get("role") not in (None, "system")
               and str(m.get("content") or "").strip()]
        changes = self.mx.store.apply(ops, user_id=user, actor="mem0") if ops else []
        items = [_item(self.mx.get(c.memory_id, user_id=user)) for c in changes]
        return [{k: i[k] for k in ("id", "memory", "metadata", "memory_type") if k in i} | {"event": "ADD"}
                for i in items]

    def update(self, memory_id: str, text: str | None = None, metadata: dict[str, Any] | None = None,
               data: str | None = None, **_mem0_only: Any) -> dict[str, str]:
        """Rewrite a memory's main text (`data` is mem0's older name for `text`); its id stays.
        `expiration_date` ("YYYY-MM-DD", or None to clear it) sets when it expires."""
        text = text if text is not None else data
        expiry = "expiration_date" in _mem0_only
        if text is None and metadata is None and not expiry:
            raise ValueError("At least one of text or metadata must be provided.")
        m = self._find(memory_id)
        fields: dict[str, Any] = {}
        if expiry:
            fields["expires_at"] = parse_expiry(expiry_of_date(_mem0_only["expiration_date"]))
        if text is not None:
            fields[_MAIN_FIELD[_kind(m)]] = text
            if _kind(m) in (MemoryType.episodic, MemoryType.semantic):
                fields["details"] = ""
        if metadata is not None:
            scope = _scope_of(m)
            tag = _scope_tag(scope["agent_ids"][0] if scope["agent_ids"] else None,
                             scope["run_ids"][0] if scope["run_ids"] else None, {**scope["metadata"], **metadata})
            fields["source_ids"] = [s for s in m.source_ids if not s.startswith(TAG)] + ([tag] if tag else [])
        self.mx.update(memory_id, fields, user_id=m.user_id, actor="mem0")
        return {"message": "Memory updated successfully!"}

    def delete(self, memory_id: str) -> dict[str, str]:
        m = self._find(memory_id)
        self.mx.delete(memory_id, user_id=m.user_id, actor="mem0")
        return {"message": "Memory deleted successfully!"}

    def delete_all(self, user_id: str | None = None, agent_id: str | None = None,
                   run_id: str | None = None) -> dict[str, str]:
        """Every memory of a user (with its history and inputs), or of one agent or run within it."""
        user, agent, run, _ = self._split(None, user_id, agent_id, run_id)
        if not (agent or run):
            self.mx.delete_user(user)
        else:
            for m in self._scoped(user, agent, run, {}, limit=None):
                self.mx.delete(m.id, user_id=user, actor="mem0")
        return {"message": "Memories deleted successfully!"}

    def reset(self) -> None:
        """Forget everything: every user's memories, history and inputs."""
        for user in self.mx.user_ids():
            self.mx.delete_user(user)

    # ------------------------------------------------------------ reading

    def get(self, memory_id: str) -> dict[str, Any] | None:
        try:
            return _item(self._find(memory_id))
        except MemoryNotFound:
            return None

    def get_all(self, *, user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None,
                filters: dict[str, Any] | None = None, limit: int | None = None, top_k: int | None = None,
                **_mem0_only: Any) -> dict[str, Any]:
        user, agent, run, meta = self._split(filters, user_id, agent_id, run_id)
        limit = limit or top_k or 100
        return {"results": [_item(m) for m in self._scoped(user, agent, run, meta, limit=limit)]}

    def search(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
               run_id: str | None = None, limit: int | None = None, top_k: int | None = None,
               filters: dict[str, Any] | None = None, threshold: float | None = None,
               **_mem0_only: Any) -> dict[str, Any]:
        """Hybrid search (BM25 + vectors, fused by rank). Scores are fused-rank scores (about 0.01-0.1),
        not cosine similarities: `threshold` applies to them as they are."""
        user, agent, run, meta = self._split(filters, user_id, agent_id, run_id)
        limit = limit or top_k or 20
        if not query or not query.strip():
            raise ValueError("query must be a non-empty string")
        narrowed = bool(agent or run or meta)
        hits = self.mx.search(query, user_id=user, limit=limit * 5 if narrowed else limit)
        results = [_item(h.memory, score=h.score) for h in hits
                   if self._in_scope(h.memory, agent, run, meta) and (threshold is None or h.score >= threshold)]
        return {"results": results[:limit]}

    def history(self, memory_id: str, *, user_id: str | None = None) -> list[dict[str, Any]]:
        """Changes of one memory, oldest first, in mem0's history shape; with `user_id`, that user's
        changes only (an id an import reused can carry another user's deleted memory's history)."""
        events: list[HistoryEvent] = self.mx.store.history(memory_id, user_id=user_id)
        return [{
            "id": e.id, "memory_id": e.memory_id, "old_memory": _text_of(e.before), "new_memory": _text_of(e.after),
            "event": _EVENTS[e.operation], "created_at": _iso(e.created_at),
            "updated_at": _iso(e.created_at) if e.operation is not Operation.insert else None,
            "is_deleted": e.operation is Operation.delete, "actor_id": e.actor, "role": None,
        } for e in sorted(events, key=lambda e: e.id)]

    def close(self) -> None:
        if self._owned:
            self.mx.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ helpers

    def _find(self, memory_id: str) -> MemoryBase:
        return self.mx.store.get(memory_id)  # mem0 addresses memories by id alone

    @staticmethod
    def _split(filters: dict[str, Any] | None, user_id: str | None, agent_id: str | None,
               run_id: str | None) -> tuple[str, str | None, str | None, dict[str, Any]]:
        rest = dict(filters or {})
        ids = {k: rest.pop(k, None) for k in _IDS}
        user_id, agent_id, run_id = user_id or ids["user_id"], agent_id or ids["agent_id"], run_id or ids["run_id"]
        if any(k in rest for k in ("AND", "OR", "NOT")):
            raise ValueError("AND/OR/NOT filters are not supported by mirix's mem0 surface")
        user = user_for(user_id, agent_id, run_id)
        # an agent or run that is the mirix user itself needs no narrowing
        return (user, agent_id if user != f"agent:{agent_id}" else None,
                run_id if user != f"run:{run_id}" else None, rest)

    @staticmethod
    def _in_scope(m: MemoryBase, agent: str | None, run: str | None, meta: dict[str, Any]) -> bool:
        if not (agent or run or meta):
            return True
        scope = _scope_of(m)
        return ((agent is None or agent in scope["agent_ids"]) and (run is None or run in scope["run_ids"])
                and all(_matches(scope["metadata"].get(k), w) for k, w in meta.items()))

    def _scoped(self, user: str, agent: str | None, run: str | None, meta: dict[str, Any],
                *, limit: int | None) -> list[MemoryBase]:
        out: list[MemoryBase] = []
        offset = 0
        while True:
            page = self.mx.list(user_id=user, limit=500, offset=offset)
            out += [m for m in page if self._in_scope(m, agent, run, meta)]
            if len(page) < 500 or (limit is not None and len(out) >= limit):
                return out[:limit] if limit is not None else out
            offset += 500


def _text_of(dump: dict[str, Any] | None) -> str | None:
    if dump is None:
        return None
    try:
        return memory_text(MEMORY_ADAPTER.validate_python(dump))
    except ValueError:
        return None


class AsyncMemory:
    """mem0's `AsyncMemory`: the same calls, awaited (each runs on a worker thread)."""

    def __init__(self, data_dir: str | Path | None = None, **kwargs: Any) -> None:
        self.sync = Memory(data_dir, **kwargs)

    def __getattr__(self, name: str) -> Any:
        method = getattr(self.sync, name)
        if not callable(method) or name.startswith("_"):
            return method

        async def call(*args: Any, **kwargs: Any) -> Any:
            return await asyncio.to_thread(method, *args, **kwargs)
        return call


__all__ = ["AsyncMemory", "Memory", "memory_text"]
