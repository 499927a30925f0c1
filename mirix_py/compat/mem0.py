"""mem0's `Memory` API over the mirix-py engine: code written for mem0 runs with only the import changed.

    from mirix_py.compat.mem0 import Memory     # instead of: from mem0 import Memory

    m = Memory()                                # an embedded engine in MIRIX_DATA_DIR (or ~/.mirix)
    m.add([{"role": "user", "content": "I love sci-fi movies."}], user_id="alice", metadata={"category": "movies"})
    m.search("What do you know about me?", filters={"user_id": "alice"})   # {"results": [{"id", "memory", ...}]}

Both call styles of mem0 are taken: 1.x (`user_id=`, `limit=`) and 2.x (`filters={"user_id": ...}`,
`top_k=`). Results have mem0's shapes (`{"results": [...]}` with `id`, `memory`, `hash`, `metadata`,
`score`, `created_at`, `updated_at`, `user_id`, ...) plus `memory_type`. How mem0's ids map onto
ours: an add writes to the mirix user `user_id`, else `agent:<agent_id>`, else `run:<run_id>`;
`agent_id`, `run_id` and `metadata` (JSON values only: `compat.mem0_values`) travel with each input as
its caller id (`mem0:{json}`, at most 256 characters), so every memory made from it carries them in
`source_ids`. A read or delete with `user_id` stays within that user; one without reaches every
user's memories that carry its `agent_id` / `run_id`, as mem0 filters them across users (`Scope`;
`reach` narrows it to the users a server's caller may act for). What differs from mem0 is in
docs/integrations.md.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone
from pathlib import Path
from typing import Any, Callable, Sequence, cast

from sqlalchemy import String, select
from sqlalchemy import cast as sql_cast
from sqlmodel import col

from mirix_py.boundary.inputs import parse_expiry
from mirix_py.boundary.timezones import said_offset, user_zone
from mirix_py.compat.mem0_metadata import vaulted_metadata
from mirix_py.compat.mem0_values import least_json_chars, plain_metadata
from mirix_py.errors import InvalidInput, MemoryNotFound
from mirix_py.text.storable import first_problem
from mirix_py.records import (
    MEMORY_ADAPTER, CoreMemory, EpisodicMemory, HistoryEvent, KnowledgeVaultMemory, MemoryBase, MemoryType,
    Operation, ProceduralMemory, ResourceMemory, SearchHit, SemanticMemory,
)
from mirix_py.store.memories import IDS_PER_QUERY
from mirix_py.store.search import MAX_SEARCH_HITS
from mirix_py.store.tables import MemoryRow

TAG = "mem0:"
MAX_TAG_CHARS = 256  # agent_id, run_id and metadata as JSON, kept as each input's source_id
_EVENTS = {Operation.insert: "ADD", Operation.update: "UPDATE", Operation.merge: "UPDATE", Operation.delete: "DELETE"}
_IDS = ("user_id", "agent_id", "run_id")
_ADDED_KEYS = ("id", "memory", "metadata", "memory_type")
# the field that holds a memory's main text, which `update(memory_id, text)` rewrites
_MAIN_FIELD: dict[MemoryType, str] = {
    MemoryType.core: "value", MemoryType.episodic: "summary", MemoryType.semantic: "summary",
    MemoryType.procedural: "summary", MemoryType.resource: "summary", MemoryType.knowledge_vault: "caption",
}
SEARCH_TOP_K = 20  # mem0's search default (1.x and 2.x)
GET_ALL_TOP_K = 20  # mem0 2.x's get_all default (`top_k`)
GET_ALL_LIMIT_1X = 100  # mem0 1.x's get_all default (`limit`), for a call in 1.x's style
WIDEN = 4  # a filtered search that found too few asks for this many times more


class MemoryNotFoundError(MemoryNotFound, ValueError):
    """No memory has this id: mirix's MemoryNotFound (a LookupError) and the ValueError mem0 raises,
    so code written for mem0 (`except ValueError`) catches it."""


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


def entity_id(value: Any, name: str) -> str | None:
    """One of mem0's ids (`user_id`, `agent_id`, `run_id`) trimmed, as mem0 trims them; None stays None.
    An empty one or one that is not a string is refused (ValueError, as mem0's)."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"Invalid {name}: must be a string, not {type(value).__name__}")
    trimmed = value.strip()
    if not trimmed:
        raise ValueError(f"Invalid {name}: cannot be empty or whitespace-only. Provide a valid identifier.")
    return trimmed


def _scope_tag(agent_id: str | None, run_id: str | None, metadata: dict[str, Any] | None) -> str | None:
    """The caller id an input carries: mem0's agent_id, run_id and metadata, as compact JSON."""
    body = {k: v for k, v in (("agent_id", agent_id), ("run_id", run_id), ("metadata", metadata or None)) if v}
    if not body:
        return None
    if found := first_problem(body, "scope"):  # before json.dumps: a deeply nested dict overflows its stack
        raise InvalidInput(found)
    tag = TAG + json.dumps(body, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    if len(tag) > MAX_TAG_CHARS:
        raise InvalidInput("agent_id, run_id and metadata together are over 256 characters of JSON "
                           "(mirix keeps them as the input's source_id)")
    return tag


def _tags(source_ids: Sequence[str]) -> list[dict[str, Any]]:
    """The mem0 caller ids among a memory's source ids, read back."""
    bodies: list[dict[str, Any]] = []
    for source in source_ids:
        if not source.startswith(TAG):
            continue
        try:
            body = json.loads(source[len(TAG):])
        except ValueError:
            continue
        if isinstance(body, dict):
            bodies.append(body)
    return bodies


def _scope_of(source_ids: Sequence[str]) -> dict[str, Any]:
    """agent ids, run ids and merged metadata of every mem0 input a memory came from."""
    agents: list[str] = []
    runs: list[str] = []
    metadata: dict[str, Any] = {}
    for body in _tags(source_ids):
        if body.get("agent_id") and body["agent_id"] not in agents:
            agents.append(body["agent_id"])
        if body.get("run_id") and body["run_id"] not in runs:
            runs.append(body["run_id"])
        metadata.update(body.get("metadata") or {})
    return {"agent_ids": agents, "run_ids": runs, "metadata": metadata}


def user_for(user_id: str | None, agent_id: str | None, run_id: str | None) -> str:
    """The mirix user an add with mem0's ids writes to: `user_id`, else `agent:<agent_id>`, else
    `run:<run_id>` (each trimmed)."""
    user, agent, run = (entity_id(v, name) for v, name in zip((user_id, agent_id, run_id), _IDS))
    if user:
        return user
    if agent:
        return f"agent:{agent}"
    if run:
        return f"run:{run}"
    raise ValueError("at least one of user_id, agent_id, run_id is required (top level or in filters)")


@dataclass(frozen=True)
class Scope:
    """What one mem0 read or delete reaches. With `user` it stays within that mirix user (users are the
    engine's isolation unit). Without, it reaches every user's memories whose mem0 inputs carried
    `agent` / `run`, as mem0 filters those ids across users: memories added with only `agent_id` live
    in the user `agent:<id>`, and those added with `user_id` and `agent_id` in the user's own."""

    user: str | None
    agent: str | None = None
    run: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def narrowed(self) -> bool:
        return bool(self.agent or self.run or self.metadata)

    def admits(self, source_ids: Sequence[str]) -> bool:
        """Whether a memory citing these ids is in the scope: one of its mem0 inputs carried the agent
        and run asked for, and its metadata passes the filters."""
        if not self.narrowed:
            return True
        tags = _tags(source_ids)
        if (self.agent or self.run) and not any(
                (self.agent is None or t.get("agent_id") == self.agent) and (self.run is None or t.get("run_id") == self.run)
                for t in tags):
            return False
        metadata = _scope_of(source_ids)["metadata"]
        return all(_matches(metadata.get(k), w) for k, w in self.metadata.items())

    def own_user(self) -> str | None:
        """The mirix user that is wholly this scope's: `agent:<id>` for an agent alone, `run:<id>` for a run alone."""
        if self.user is not None or self.metadata or (self.agent and self.run):
            return None
        return f"agent:{self.agent}" if self.agent else f"run:{self.run}"


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _item(m: MemoryBase, *, score: float | None = None) -> dict[str, Any]:
    """mem0's memory item (`MemoryItem` plus the promoted ids), with our `memory_type`."""
    text = memory_text(m)
    scope = _scope_of(m.source_ids)
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


def _added(m: MemoryBase, event: str = "ADD") -> dict[str, Any]:
    """An item of `add`'s results: mem0's `id`, `memory`, `metadata`, `event`, with our `memory_type`."""
    item = _item(m)
    return {k: item[k] for k in _ADDED_KEYS if k in item} | {"event": event}


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


def how_many(limit: Any, top_k: Any, default: int) -> int:
    """mem0's `limit` (1.x) or `top_k` (2.x), else `default`. 0 asks for no result (mem0 takes any
    count from 0 up); a negative count or one that is not a whole number is refused."""
    value = limit if limit is not None else top_k
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"top_k / limit must be a whole number, not {value!r}")
    if value < 0:
        raise ValueError(f"Invalid top_k / limit: {value}. Must be a non-negative integer.")
    return value


_OPS: dict[str, Callable[[Any, Any], bool]] = {
    "eq": lambda v, w: v == w, "ne": lambda v, w: v != w,
    "in": lambda v, w: v in w, "nin": lambda v, w: v not in w,
    "contains": lambda v, w: isinstance(v, str) and w in v,
    "icontains": lambda v, w: isinstance(v, str) and w.lower() in v.lower(),
}


def _check_filters(metadata: dict[str, Any]) -> None:
    """Refuse an operator this surface does not take, whether or not a memory would be tested with it."""
    for want in metadata.values():
        unknown = set(want) - set(_OPS) if isinstance(want, dict) else set()
        if unknown:
            raise ValueError(f"filter operators {sorted(unknown)} are not supported by mirix's mem0 surface")


def _matches(value: Any, want: Any) -> bool:
    """One of mem0's metadata filters: a value, "*", or {"eq"|"ne"|"in"|"nin"|"contains"|"icontains": ...}."""
    if want == "*":
        return value is not None
    if not isinstance(want, dict):
        return bool(value == want)
    _check_filters({"": want})
    try:
        return all(_OPS[op](value, w) for op, w in want.items())
    except TypeError as exc:  # "in" with no list, "contains" with no string, ...
        raise ValueError(f"filter {want!r} does not fit the value {value!r}: {exc}") from exc


class Memory:
    """mem0's `Memory` backed by an embedded mirix engine (pass `mx` to share one).

    `reach`: which mirix users a read or delete without `user_id` may touch (a server passes its
    caller's key's check); None: every user of the engine, as mem0 does."""

    def __init__(self, data_dir: str | Path | None = None, *, mx: Any = None, database_url: str | None = None,
                 chroma_url: str | None = None, reach: Callable[[str], bool] | None = None) -> None:
        if mx is None:
            from mirix_py.engine import Mirix

            mx = Mirix(data_dir, database_url=database_url, chroma_url=chroma_url)
            self._owned = True
        else:
            self._owned = False
        self.mx = mx
        self.reach = reach

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
        """Remember a string, a message dict or a list of messages; system messages are not memories
        (mem0 skips them too). `infer=False` keeps each other message as one memory as it is; else the
        engine extracts memories (its rules or its model). `expiration_date` ("YYYY-MM-DD", UTC,
        inclusive): the memories are not read after that day, and are then deleted (`Mirix.add`'s
        `expires_at`). `metadata` takes JSON values (a date or date-time as ISO 8601 text), anything
        else is refused naming its key (`compat.mem0_values`); a secret in it goes to the user's vault,
        as one in the text does."""
        user = user_for(user_id, agent_id, run_id)
        agent_id, run_id = entity_id(agent_id, "agent_id"), entity_id(run_id, "run_id")
        expires_at = parse_expiry(expiry_of_date(expiration_date))
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        elif isinstance(messages, dict):
            messages = [messages]
        if not isinstance(messages, list):
            raise InvalidInput("messages must be str, dict, or list[dict]")
        metadata = plain_metadata(metadata) if metadata is not None else None
        tag, vault = self._tag(user, agent_id, run_id, metadata, expires_at)
        if not infer:
            return {"results": self._add_raw(messages, user, tag, expires_at, vault)}
        kept = [{k: v for k, v in m.items() if k in ("role", "content", "name", "occurred_at")} for m in messages
                if isinstance(m, dict) and m.get("role") != "system"]
        if not kept:
            return {"results": []}
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
                results.append(_added(self.mx.get(change.memory_id, user_id=user), event))
            except MemoryNotFound:  # changed again later in the same batch
                continue
        return {"results": results + self._insert_vault(vault, user)}

    def _tag(self, user: str, agent_id: str | None, run_id: str | None, metadata: dict[str, Any] | None,
             expires_at: datetime | None) -> tuple[str | None, list[KnowledgeVaultMemory]]:
        """The caller id an input carries, with the secrets of `metadata` moved into vault entries (to
        insert, attributed to the same caller id): the caller id is kept in plain columns."""
        vault: list[KnowledgeVaultMemory] = []
        if metadata:
            if found := first_problem({"metadata": metadata}, "scope"):  # before walking it: nested too deep, ...
                raise InvalidInput(found)
            least = least_json_chars({"metadata": metadata}) + len(TAG)
            if least > MAX_TAG_CHARS:  # before the secret rules read every key and value (100,000 keys: 6.5 s)
                raise InvalidInput(f"metadata is at least {least:,} characters of JSON, over the {MAX_TAG_CHARS} "
                                   "mirix keeps with agent_id and run_id as the input's source_id")
            metadata, vault = vaulted_metadata(self.mx.store, metadata, user)
        tag = _scope_tag(agent_id, run_id, metadata)
        guard = self.mx.store.guard
        if tag and guard is not None and guard.matches(tag):
            raise InvalidInput("agent_id or run_id reads as holding a secret: mirix keeps them in plain text "
                               "(put secrets in the messages, which go to the vault)")
        return tag, [e.model_copy(update={"source_ids": [tag] if tag else [], "expires_at": expires_at})
                     for e in vault]

    def _insert_vault(self, vault: list[KnowledgeVaultMemory], user: str) -> list[dict[str, Any]]:
        from mirix_py.tools.ops import InsertOp

        if not vault:
            return []
        changes = self.mx.store.apply([InsertOp(memory=e) for e in vault], user_id=user, actor="mem0")
        return [_added(self.mx.get(c.memory_id, user_id=user)) for c in changes]

    def _add_raw(self, messages: list[Any], user: str, tag: str | None, expires_at: datetime | None,
                 vault: list[KnowledgeVaultMemory]) -> list[dict[str, Any]]:
        from mirix_py.tools.ops import InsertOp

        now = datetime.now(timezone.utc)
        offset = said_offset(None, now, user_zone(self.mx.settings.timezone))  # its day on the user's clock
        kept = [(str(m["content"]).strip(), str(m.get("name") or m["role"])) for m in messages
                if isinstance(m, dict) and m.get("role") not in (None, "system") and str(m.get("content") or "").strip()]
        if not kept:
            return []
        total, limit = sum(len(text) for text, _ in kept), self.mx.settings.max_input_chars
        if total > limit:  # as `Mirix.add` refuses an inferred add's
            raise InvalidInput(f"input is {total} characters, over the limit of {limit} (settings.max_input_chars)")
        ops = [InsertOp(memory=EpisodicMemory(user_id=user, summary=text, occurred_at=now, said_offset_minutes=offset,
                                              actor=actor, source_ids=[tag] if tag else [], expires_at=expires_at))
               for text, actor in kept]
        changes = self.mx.store.apply([InsertOp(memory=e) for e in vault] + ops, user_id=user, actor="mem0")
        return [_added(self.mx.get(c.memory_id, user_id=user)) for c in changes]

    def update(self, memory_id: str, text: str | None = None, metadata: dict[str, Any] | None = None,
               data: str | None = None, **_mem0_only: Any) -> dict[str, str]:
        """Rewrite a memory's main text (`data` is mem0's older name for `text`); its id stays.
        `expiration_date` ("YYYY-MM-DD", or None to clear it) sets when it expires. An unknown id
        raises `MemoryNotFoundError` (a ValueError, as mem0's)."""
        text = text if text is not None else data
        expiry = "expiration_date" in _mem0_only
        if text is None and metadata is None and not expiry:
            raise ValueError("At least one of text or metadata must be provided.")
        metadata = plain_metadata(metadata) if metadata is not None else None
        m = self._find(memory_id)
        fields: dict[str, Any] = {}
        if expiry:
            fields["expires_at"] = parse_expiry(expiry_of_date(_mem0_only["expiration_date"]))
        if text is not None:
            fields[_MAIN_FIELD[_kind(m)]] = text
            if _kind(m) in (MemoryType.episodic, MemoryType.semantic):
                fields["details"] = ""
        vault: list[KnowledgeVaultMemory] = []
        if metadata is not None:
            tags, vault = self._retagged(m, metadata, fields.get("expires_at", m.expires_at))
            fields["source_ids"] = [s for s in m.source_ids if not s.startswith(TAG)] + tags
        try:
            self.mx.update(memory_id, fields, user_id=m.user_id, actor="mem0")
        except MemoryNotFound as exc:  # expired or deleted since `_find`
            raise MemoryNotFoundError(memory_id) from exc
        self._insert_vault(vault, m.user_id)
        return {"message": "Memory updated successfully!"}

    def _retagged(self, m: MemoryBase, metadata: dict[str, Any],
                  expires_at: datetime | None) -> tuple[list[str], list[KnowledgeVaultMemory]]:
        """The memory's mem0 caller ids with `metadata` merged into its own: each agent and run it came
        from kept, the merged metadata on the first."""
        pairs = list(dict.fromkeys((t.get("agent_id"), t.get("run_id")) for t in _tags(m.source_ids))) or [(None, None)]
        merged = {**_scope_of(m.source_ids)["metadata"], **metadata}
        first, vault = self._tag(m.user_id, pairs[0][0], pairs[0][1], merged, expires_at)
        rest = [_scope_tag(agent, run, None) for agent, run in pairs[1:]]
        return [t for t in (first, *rest) if t], vault

    def delete(self, memory_id: str) -> dict[str, str]:
        """Delete one memory. An unknown id raises `MemoryNotFoundError` (a ValueError, as mem0's)."""
        m = self._find(memory_id)
        try:
            self.mx.delete(memory_id, user_id=m.user_id, actor="mem0")
        except MemoryNotFound as exc:  # expired or deleted since `_find`
            raise MemoryNotFoundError(memory_id) from exc
        return {"message": "Memory deleted successfully!"}

    def delete_all(self, user_id: str | None = None, agent_id: str | None = None,
                   run_id: str | None = None) -> dict[str, str]:
        """Every memory of a user (with its history and inputs), or every memory an agent or a run
        reads (`get_all` with the same ids): within the user given, else across users (`Scope`); the
        user `agent:<id>` or `run:<id>` of an agent or a run alone goes whole."""
        scope = self._scope(None, user_id, agent_id, run_id)
        if scope.user is not None and not scope.narrowed:
            self.mx.delete_user(scope.user)
            return {"message": "Memories deleted successfully!"}
        own = scope.own_user()
        own = own if own is not None and self._reaches(own) else None
        for user, memory_id in self._ids_in(scope):
            if user == own:
                continue
            try:
                self.mx.delete(memory_id, user_id=user, actor="mem0")
            except MemoryNotFound:  # expired, or deleted meanwhile
                continue
        if own is not None:
            self.mx.delete_user(own)
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
        """The memories in the scope, newest first: at most `top_k` (mem0 2.x, 20 by default) or
        `limit` (1.x; a call naming its ids as arguments, 1.x's style, gets 1.x's 100 by default)."""
        scope = self._scope(filters, user_id, agent_id, run_id)
        style_1x = any(v is not None for v in (user_id, agent_id, run_id))
        count = how_many(limit, top_k, GET_ALL_LIMIT_1X if style_1x else GET_ALL_TOP_K)
        if count == 0:
            return {"results": []}
        return {"results": [_item(m) for m in self._scoped(scope, count)]}

    def search(self, query: str, *, user_id: str | None = None, agent_id: str | None = None,
               run_id: str | None = None, limit: int | None = None, top_k: int | None = None,
               filters: dict[str, Any] | None = None, threshold: float | None = None,
               **_mem0_only: Any) -> dict[str, Any]:
        """Hybrid search (BM25 + vectors, fused by rank): the best matches among the memories in the
        scope. Scores are fused-rank scores (about 0.01-0.1), not cosine similarities: `threshold`
        applies to them as they are."""
        scope = self._scope(filters, user_id, agent_id, run_id)
        count = how_many(limit, top_k, SEARCH_TOP_K)
        if not isinstance(query, str) or not query.strip():
            raise ValueError("query must be a non-empty string")
        if count == 0:
            return {"results": []}
        if scope.user is not None and not scope.narrowed:
            hits = self._ranked(query, scope.user, None, count, threshold)
        else:
            wanted: dict[str, set[str]] = {}
            for user, memory_id in self._ids_in(scope):
                wanted.setdefault(user, set()).add(memory_id)
            hits = [h for user, ids in wanted.items() for h in self._ranked(query, user, ids, count, threshold)]
            hits = sorted(hits, key=lambda h: h.score, reverse=True)  # stable: a context turn stays by its match
        return {"results": [_item(h.memory, score=h.score) for h in hits[:count]]}

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
        try:
            return self.mx.store.get(memory_id)  # mem0 addresses memories by id alone
        except MemoryNotFound as exc:
            raise MemoryNotFoundError(memory_id) from exc

    def _reaches(self, user: str) -> bool:
        return self.reach is None or self.reach(user)

    @staticmethod
    def _scope(filters: dict[str, Any] | None, user_id: str | None, agent_id: str | None,
               run_id: str | None) -> Scope:
        """The scope of a read or delete: mem0's ids (arguments or `filters`, trimmed) and the rest of
        `filters` as metadata filters."""
        rest = dict(filters or {})
        given = {k: rest.pop(k, None) for k in _IDS}
        if any(k in rest for k in ("AND", "OR", "NOT")):
            raise ValueError("AND/OR/NOT filters are not supported by mirix's mem0 surface")
        user, agent, run = (entity_id(arg if arg is not None else given[k], k)
                            for arg, k in zip((user_id, agent_id, run_id), _IDS))
        if not (user or agent or run):
            raise ValueError("at least one of user_id, agent_id, run_id is required (top level or in filters)")
        _check_filters(rest)
        return Scope(user=user, agent=agent, run=run, metadata=rest)

    def _ids_in(self, scope: Scope) -> list[tuple[str, str]]:
        """(user, memory id) of every memory in a narrowed scope, in `list`'s order, read from the mem0
        caller ids in the memories' source ids; a scope without user only in users `reach` allows."""
        query = (select(col(MemoryRow.id), col(MemoryRow.user_id), col(MemoryRow.source_ids))
                 .order_by(col(MemoryRow.occurred_at).desc(), col(MemoryRow.created_at).desc()))
        if scope.agent or scope.run:  # only what a mem0 input tagged carries them (metadata "ne" passes the rest)
            query = query.where(sql_cast(col(MemoryRow.source_ids), String).like(f"%{TAG}%"))
        if scope.user is not None:
            query = query.where(col(MemoryRow.user_id) == scope.user)
        with self.mx.store.engine.connect() as conn:
            rows = conn.execute(query).all()
        return [(user, memory_id) for memory_id, user, source_ids in rows
                if scope.admits(source_ids or []) and (scope.user is not None or self._reaches(user))]

    def _scoped(self, scope: Scope, limit: int) -> list[MemoryBase]:
        """At most `limit` memories of the scope, in `list`'s order across users (expired ones left out)."""
        if scope.user is not None and not scope.narrowed:
            return self.mx.list(user_id=scope.user, limit=limit)
        ids = self._ids_in(scope)
        out: list[MemoryBase] = []
        for start in range(0, len(ids), IDS_PER_QUERY):
            chunk = ids[start:start + IDS_PER_QUERY]
            found: dict[str, MemoryBase] = {}
            for user in dict.fromkeys(u for u, _ in chunk):
                found.update(self.mx.store.get_many([i for u, i in chunk if u == user], user_id=user))
            out += [found[i] for _, i in chunk if i in found]
            if len(out) >= limit:
                break
        return out[:limit]

    def _ranked(self, query: str, user: str, wanted: set[str] | None, limit: int,
                threshold: float | None) -> list[SearchHit]:
        """The user's best `limit` hits for `query` among the `wanted` ids (None: any). A filtered
        search asks for more hits, `WIDEN` times more each round, until `limit` pass, every wanted
        memory was found, the user's matches run out, or the hits fall below `threshold`."""
        fetch = limit if wanted is None else min(limit * 5, MAX_SEARCH_HITS)
        while True:
            hits = self.mx.search(query, user_id=user, limit=fetch)
            kept = [h for h in hits if (wanted is None or h.memory.id in wanted)
                    and (threshold is None or h.score >= threshold)]
            matches = [h for h in hits if h.context_for is None]  # a match's context turns are not counted
            if (wanted is None or len(kept) >= limit or len(matches) < fetch or fetch >= MAX_SEARCH_HITS
                    or wanted <= {h.memory.id for h in hits}
                    or (threshold is not None and matches and matches[-1].score < threshold)):
                return kept[:limit]
            fetch = min(fetch * WIDEN, MAX_SEARCH_HITS)


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


__all__ = ["AsyncMemory", "Memory", "MemoryNotFoundError", "Scope", "memory_text"]
