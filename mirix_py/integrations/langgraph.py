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
hybrid search finds, and the value itself rides along in a tag (as JSON). The text is made plain
(`printable`: a terminal's escape sequences and control characters are left out of it, as of a
search's query), while the value keeps them. Core blocks are read-only here and high-sensitivity
vault items are never returned (vault secrets stay masked). A batch runs as LangGraph's own stores
run one: its reads see the store as it was before the batch, then its puts are made.

Secrets: the engine's secret guard moves every secret it finds in a memory about to be written (the
tag included) into a vault entry and leaves `[vault:<id>]` in its place, so the database keeps none
in plain text. The guard reads a tag as text, where JSON escapes a quote or a line break, so the
store itself puts placeholders in the tag for the secrets the guard finds in the value's decoded
strings, their entries holding the secret as the JSON writes it. The store's caller owns its items,
so a read puts the vault's values back into the tag's text before parsing it: keys and values come
back exactly as put. Every '[' in the tag's strings is escaped, so a placeholder the caller wrote
itself is not resolved. Deleting or overwriting an item deletes the vault entries the store made for
it that no memory of the user points at any more.

TTLs are supported (`supports_ttl`): an item put with `ttl` (minutes, or the `ttl` config's
`default_ttl`) is a memory with that `expires_at`; reads leave it out once expired and the engine's
sweep deletes it. A get or search with `refresh_ttl` (the default, or the config's `refresh_on_read`)
starts the returned items' TTLs again.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import math
import re
import uuid
from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any, cast

from langgraph.store.base import (
    BaseStore, GetOp, InvalidNamespaceError, Item, ListNamespacesOp, Op, PutOp, Result, SearchItem, SearchOp,
    TTLConfig,
)
from langgraph.store.base.embed import get_text_at_path
from langgraph.store.memory import _compare_values, _does_match  # the filter semantics of LangGraph's own store
from sqlmodel import Session

from mirix_py.boundary.inputs import check_user
from mirix_py.boundary.timezones import said_offset, user_zone
from mirix_py.compat.mem0 import memory_text
from mirix_py.errors import InvalidInput, MemoryNotFound
from mirix_py.records import (
    ID_PREFIX, EpisodicMemory, KnowledgeVaultMemory, MemoryBase, MemoryType, Operation, ProceduralMemory,
    ResourceMemory, SemanticMemory, Sensitivity, memory_id_problem, utcnow,
)
from mirix_py.secrets.guard import Known, Secret, guarded_fields
from mirix_py.store.memories import MemoryPosition
from mirix_py.text.storable import MAX_NESTING, printable, problem, strings
from mirix_py.tools.ops import DeleteOp, InsertOp, Op as MemoryOp, UpdateOp

log = logging.getLogger("mirix_py.langgraph")

TAG = "langgraph:"
ACTOR = "langgraph"  # the actor of the store's writes in each memory's history
PAGE = 500  # memories read per `Mirix.list` call
WRITABLE = {t.value: t for t in (MemoryType.semantic, MemoryType.episodic, MemoryType.procedural,
                                 MemoryType.resource)}
READ_ONLY = (MemoryType.core.value, MemoryType.knowledge_vault.value)
VAULT_REF = re.compile(r"\[vault:([A-Za-z0-9][A-Za-z0-9_.:-]{0,199})\]")  # the guard's placeholder
# What a tag writes as `\uXXXX` in its strings beyond JSON's own escapes: every '[' (a placeholder the
# caller wrote is then no placeholder a read resolves) and DEL and the C1 controls (a terminal printing
# the tag would run them). Each character is written alike wherever it stands, so a string's text in
# the tag is the same whatever surrounds it.
_TAG_ESCAPES = {c: f"\\u{c:04x}" for c in (ord("["), *range(0x7F, 0xA0))}
VAULT_VALUE_CAPTION = "a value of the vault, in a LangGraph item"  # a known value the rules did not find
WRITE_TRIES = 5  # a put racing another put or delete of the same key tries again (last writer wins)


def _kind(m: MemoryBase) -> MemoryType:
    return MemoryType(cast(Any, m).memory_type)


def _plain(value: Any) -> Any:
    """`value` with each string as plain text (`printable`): what the engine indexes of it."""
    if isinstance(value, str):
        return printable(value)
    if isinstance(value, dict):
        return {printable(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _text_of(value: dict[str, Any], index: list[str] | None) -> str:
    """What search finds an item by, as plain text (a control character or a terminal's escape
    sequence in a value is kept in the value, not in the text the engine indexes): the `index`
    fields, else its content, else its JSON."""
    if index:
        texts = [printable(t) for path in index for t in get_text_at_path(value, path)]
        if any(t.strip() for t in texts):
            return "\n".join(texts)
    for field in ("content", "text", "memory"):
        if isinstance(value.get(field), str) and (text := printable(value[field])).strip():
            return text
    return json.dumps(_plain(value), ensure_ascii=False, sort_keys=True)


def _json_problem(value: Any, where: str, depth: int = 0) -> str | None:
    """Why `value` is not JSON that reads back as put (a datetime, a set, NaN, a non-string key, a lone
    surrogate, nesting deeper than MAX_NESTING), or None. LangGraph's Postgres store refuses such values
    too; a tuple reads back as a list. A NUL or another control character is kept (the tag's JSON
    escapes it), as LangGraph's in-memory store keeps it."""
    if isinstance(value, str):
        found = problem(value.replace("\x00", ""), controls=False)
        return f"{where} {found}" if found else None
    if value is None or isinstance(value, (bool, int)):
        return None
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{where} is {value!r}, which JSON cannot hold"
    if isinstance(value, (dict, list, tuple)) and depth >= MAX_NESTING:
        return f"{where[:60]}{'…' if len(where) > 60 else ''} is nested more than {MAX_NESTING} levels deep"
    if isinstance(value, dict):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{where} has the key {key!r}, not a string (JSON keys are strings)"
            found = _json_problem(key, f"{where} key") or _json_problem(item, f"{where}.{key}", depth + 1)
            if found:
                return found
        return None
    if isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            if found := _json_problem(item, f"{where}[{i}]", depth + 1):
                return found
        return None
    return f"{where} is a {type(value).__name__}, not JSON (str, number, bool, None, list or dict)"


def _json_text(value: Any) -> str:
    """`value` as JSON with sorted keys, each string's characters escaped alike wherever they stand
    (`_TAG_ESCAPES`): a string that holds a secret holds it as `_json_text(secret)[1:-1]` here too."""
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False).translate(_TAG_ESCAPES)
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_json_text(k)}: {_json_text(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(_json_text(v) for v in value) + "]"
    return json.dumps(value, allow_nan=False)


def _expiry(ttl: Any) -> datetime | None:
    """When an item put now with `ttl` minutes expires (None: never); InvalidInput for a ttl that is
    not a positive number of minutes a date can hold."""
    if ttl is None:
        return None
    if isinstance(ttl, bool) or not isinstance(ttl, (int, float)) or not math.isfinite(ttl) or ttl <= 0:
        raise InvalidInput(f"ttl must be a positive number of minutes, not {ttl!r}")
    try:
        return utcnow() + timedelta(minutes=ttl)
    except OverflowError as exc:
        raise InvalidInput(f"ttl of {ttl!r} minutes ends after the last date that can be stored") from exc


def _item_tags(m: MemoryBase) -> list[str]:
    """The tags that may hold a store item (the guard may have taken even the prefix for a secret)."""
    return [t for t in m.tags if t.startswith(TAG) or t.startswith("[vault:")]


def _vault_ids(memories: Iterable[MemoryBase]) -> set[str]:
    """The vault entries the placeholders in these memories' texts point at."""
    return {i for m in memories
            for i in VAULT_REF.findall(json.dumps(guarded_fields(m.model_dump(mode="json"))))}


def _user_ok(user: str) -> bool:
    """Whether a stored user id passes the engine's rule (one stored before the store checked it may not)."""
    try:
        check_user(user)
    except InvalidInput:
        log.debug("user id %r breaks the engine's user id rule: its items are left out", user)
        return False
    return True


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
        """As LangGraph's own stores run a batch: its reads see the store as it was before the batch,
        then its puts are made, the last put of a key winning. Every put is checked before anything
        is written."""
        ops = list(ops)
        puts = {(op.namespace, op.key): op for op in ops if isinstance(op, PutOp)}
        for put in puts.values():
            self._check(put)
        results = [None if isinstance(op, PutOp) else self._read(op) for op in ops]
        for put in puts.values():
            self._put(put)
        return results

    def _read(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            got = self._get(op.namespace, op.key)
            if got is not None and op.refresh_ttl:
                self._refresh(self._split(op.namespace)[0], [got])
            return got
        if isinstance(op, SearchOp):
            found = self._search(op)
            if op.refresh_ttl:
                by_user: dict[str, list[SearchItem]] = {}
                for item in found:
                    by_user.setdefault(self._split(item.namespace)[0], []).append(item)
                for user, items in by_user.items():
                    self._refresh(user, items)
            return found
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise ValueError(f"unknown store operation {type(op).__name__}")

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
        if path and path[0] in READ_ONLY:
            raise InvalidNamespaceError(f"{path[0]} memories cannot be written through the store")
        return WRITABLE.get(path[0], MemoryType.semantic) if path else MemoryType.semantic

    # ------------------------------------------------------------ memories as items

    def _bodies(self, user: str, memories: Sequence[MemoryBase]) -> dict[str, dict[str, Any]]:
        """Memory id -> what `_put` kept in its tag (namespace, key, value, ttl), with the vault's
        values back in place of the guard's placeholders, for the memories that are this store's items."""
        refs = {i for m in memories for t in _item_tags(m) for i in VAULT_REF.findall(t)}
        secrets = self.mx.store.vault_values(refs, user_id=user)
        out: dict[str, dict[str, Any]] = {}
        for m in memories:
            body = self._body(m, secrets)
            if body is not None:
                out[m.id] = body
        return out

    def _body(self, m: MemoryBase, secrets: dict[str, str]) -> dict[str, Any] | None:
        """The item `m` holds, or None when it holds none that checks out (no tag, a tag that does not
        parse, or one naming another user's namespace or another key than its id was made from)."""
        for tag in _item_tags(m):
            text = VAULT_REF.sub(lambda g: secrets.get(g.group(1), g.group(0)), tag)
            if not text.startswith(TAG):
                continue
            try:
                body = json.loads(text[len(TAG):])
            except ValueError:
                log.warning("memory %s has a store tag that does not parse (a vault entry it needs is gone?)", m.id)
                return None
            return body if self._owns(m, body) else None
        return None

    def _owns(self, m: MemoryBase, body: Any) -> bool:
        """Whether a tag's item is `m`'s: a namespace of `m`'s user in this store's layout, and the id
        derived from it and the key is `m`'s (a tag edited through the API names some other)."""
        if not isinstance(body, dict):
            return False
        namespace, key = body.get("namespace"), body.get("key")
        if not (isinstance(namespace, list) and all(isinstance(n, str) for n in namespace) and isinstance(key, str)
                and isinstance(body.get("value"), dict)):
            return False
        p = self.user_position
        if len(namespace) <= p or namespace[p] != m.user_id:
            return False
        try:
            kind = self._kind_for(tuple(namespace[:p] + namespace[p + 1:]))
        except InvalidNamespaceError:
            return False
        return m.id == self._item_id(m.user_id, tuple(namespace), key, kind)

    def _items(self, user: str, found: Sequence[tuple[MemoryBase, float | None]]) -> list[tuple[MemoryBase, SearchItem]]:
        """The user's memories as store items (put items from their tag, the engine's under (memory_type,))."""
        bodies = self._bodies(user, [m for m, _ in found])
        out = []
        for m, score in found:
            item = self._as_item(m, bodies.get(m.id), score)
            if item is not None:
                out.append((m, item))
        return out

    def _as_item(self, m: MemoryBase, body: dict[str, Any] | None, score: float | None = None) -> SearchItem | None:
        if body is not None:
            return SearchItem(tuple(body["namespace"]), body["key"], body["value"], m.created_at, m.updated_at, score)
        if isinstance(m, KnowledgeVaultMemory) and m.sensitivity is Sensitivity.high:
            return None
        kind = _kind(m)
        value = {"content": memory_text(m), "memory_type": kind.value}
        return SearchItem(self._join(m.user_id, (kind.value,)), m.id, value, m.created_at, m.updated_at, score)

    def _at(self, user: str, namespace: tuple[str, ...], key: str, *,
            expired: bool = False) -> dict[str, tuple[MemoryBase, SearchItem]]:
        """Memory id -> (memory, item) for what is at (namespace, key): the item put there, and the
        engine's own memory when the namespace is (user, memory_type) and the key its id. `expired`:
        those past their expiry that the sweep has not deleted yet too (what a write replaces)."""
        path = self._split(namespace)[1]
        ids = [] if path and path[0] in READ_ONLY else [self._item_id(user, namespace, key, self._kind_for(path))]
        if len(path) == 1 and path[0] in MemoryType._value2member_map_ and not memory_id_problem(key):
            ids.append(key)
        memories = self.mx.store.get_many(ids, user_id=user, include_expired=expired)
        return {m.id: (m, item) for m, item in self._items(user, [(memories[i], None) for i in ids if i in memories])
                if item.namespace == namespace and item.key == key}

    # ------------------------------------------------------------ get, put, delete

    def _get(self, namespace: tuple[str, ...], key: str) -> Item | None:
        user = self._split(namespace)[0]
        check_user(user)
        for _, item in self._at(user, namespace, key).values():  # the item put there first
            return Item(value=item.value, key=item.key, namespace=item.namespace, created_at=item.created_at,
                        updated_at=item.updated_at)
        return None

    def _check_put(self, op: PutOp, user: str) -> None:
        """InvalidInput, before anything is written, for what the engine could not store or give back."""
        try:
            check_user(user)
        except InvalidInput as exc:
            raise InvalidInput(f"namespace {op.namespace!r}: {exc}") from exc
        for label in op.namespace:
            if found := problem(label):
                raise InvalidInput(f"namespace label {label!r} {found}")
        if not op.key:
            raise InvalidInput("key must be a non-empty string")
        if found := problem(op.key):
            raise InvalidInput(f"key {found}")
        if not isinstance(op.value, dict):
            raise InvalidInput(f"value must be a dict, not {type(op.value).__name__}")
        if found := _json_problem(op.value, "value"):
            raise InvalidInput(found)

    def _check(self, op: PutOp) -> None:
        """InvalidInput or InvalidNamespaceError for a put (or delete) that cannot be made: a batch
        checks all of its puts before it writes any."""
        user, path = self._split(op.namespace)
        if op.value is None:
            if path and path[0] in READ_ONLY:
                raise InvalidNamespaceError(f"{path[0]} memories cannot be deleted through the store")
            if found := problem(user):
                raise InvalidInput(f"namespace {op.namespace!r}: user_id {found}")
            return
        self._check_put(op, user)
        self._kind_for(path)
        _expiry(op.ttl)

    def _put(self, op: PutOp) -> None:
        user, path = self._split(op.namespace)
        if op.value is None:
            self._delete(user, path, op.namespace, op.key)
            return
        self._check_put(op, user)
        kind = self._kind_for(path)
        memory_id = self._item_id(user, op.namespace, op.key, kind)
        expires_at = _expiry(op.ttl)
        value = dict(op.value)
        body: dict[str, Any] = {"namespace": list(op.namespace), "key": op.key, "value": value}
        if op.ttl is not None:
            body["ttl"] = op.ttl
        fields: dict[str, Any] = {
            MemoryType.semantic: {"name": op.key},
            MemoryType.episodic: {"event_type": "langgraph"},
            MemoryType.procedural: {},
            MemoryType.resource: {"title": op.key},
        }[kind]
        text = _text_of(value, op.index if isinstance(op.index, list) else None)
        tag, vault = self._tag(user, body, text)
        fields.update({"content" if kind is MemoryType.resource else "summary": text, "tags": [tag],
                       "expires_at": expires_at})
        self._write(user, op.namespace, op.key, memory_id, kind, fields, vault)

    def _tag(self, user: str, body: dict[str, Any], text: str) -> tuple[str, list[KnowledgeVaultMemory]]:
        """The tag an item rides in (its JSON) and the vault entries to insert with it. Each secret the
        guard finds in a string of the item, or in the `text` it is indexed by, is a placeholder in the
        tag, its entry holding the secret as the JSON writes it: a read puts it back before parsing,
        as for the placeholders the guard leaves in the tag's JSON. (The guard reads the JSON's text,
        where a quote or a line break is escaped, and misses secrets it finds in the decoded string.)"""
        tag = _json_text(body)
        guard = self.mx.store.guard
        if guard is None:
            return TAG + tag, []
        known = self._known(user)
        found: dict[str, Secret | None] = {}  # secret -> the rule's match (None: a value already in the vault)
        pattern = known.pattern()
        for string in [text, *strings(body)]:
            for match in guard.matches(string):
                found.setdefault(match.value, match)
            for hit in pattern.finditer(string) if pattern is not None else ():
                found.setdefault(hit.group(), None)
        refs: dict[str, str] = {}  # a secret as the tag writes it -> its vault entry
        vault: list[KnowledgeVaultMemory] = []
        for secret, match in found.items():
            written = _json_text(secret)[1:-1]
            if written in refs or written not in tag:
                continue
            if (vault_id := known.ids.get(written)) is None:
                vault_id = f"kv_{uuid.uuid4().hex}"
                vault.append(KnowledgeVaultMemory(
                    id=vault_id, user_id=user, secret_value=written,
                    entry_type=match.entry_type if match else "credential",
                    sensitivity=Sensitivity(match.sensitivity) if match else Sensitivity.high,
                    caption=match.caption if match else VAULT_VALUE_CAPTION))
                known.add(written, vault_id)
            refs[written] = vault_id
        if refs:
            secrets = re.compile("|".join(re.escape(w) for w in sorted(refs, key=len, reverse=True)))
            tag = secrets.sub(lambda g: f"[vault:{refs[g.group()]}]", tag)
        return TAG + tag, vault

    def _known(self, user: str) -> Known:
        """The values in the user's vault, and their entries."""
        with Session(self.mx.store.engine) as session:
            return cast(Known, self.mx.store.known_secrets(session, user))

    def _write(self, user: str, namespace: tuple[str, ...], key: str, memory_id: str, kind: MemoryType,
               fields: dict[str, Any], vault: Sequence[KnowledgeVaultMemory] = ()) -> None:
        """Insert or update the item's memory (with the new `vault` entries its tag points at),
        replacing an engine memory at the same (namespace, key) and deleting the vault entries only the
        old state used, in one write; a write that lost a race with another put or delete of the key
        tries again."""
        for attempt in range(1, WRITE_TRIES + 1):
            before = {i: m for i, (m, _) in self._at(user, namespace, key, expired=True).items()}
            refs = _vault_ids(before.values())
            freed = self._freed(user, refs, set(before), fields)
            exists = bool(self.mx.store.expiry_of([memory_id], user_id=user))  # expired or not: the id is taken
            ops: list[MemoryOp] = [DeleteOp(memory_id=i) for i in [*freed, *(i for i in before if i != memory_id)]]
            ops += [InsertOp(memory=entry) for entry in vault]
            ops.append(UpdateOp(memory_id=memory_id, fields=fields) if exists else InsertOp(
                memory=self._new(kind, memory_id, user, fields,
                                 user_zone(self.mx.settings.timezone))))  # type: ignore[arg-type]
            try:
                self.mx.store.apply(ops, user_id=user, actor=ACTOR)
            except MemoryNotFound:  # deleted meanwhile
                if attempt == WRITE_TRIES:
                    raise
                continue
            except InvalidInput:  # inserted meanwhile ("already exists"): update it instead
                if exists or attempt == WRITE_TRIES or not self.mx.store.expiry_of([memory_id], user_id=user):
                    raise
                continue
            self._drop_orphans(user, refs - set(freed))  # kept for a value the new text holds, yet not used
            return

    @staticmethod
    def _new(kind: MemoryType, memory_id: str, user: str, fields: dict[str, Any], zone: tzinfo | None) -> MemoryBase:
        """A new memory put through the store; an episode is said now, its text on the user's clock
        (`zone`: MIRIX_TIMEZONE's, None for UTC)."""
        cls = {MemoryType.semantic: SemanticMemory, MemoryType.episodic: EpisodicMemory,
               MemoryType.procedural: ProceduralMemory, MemoryType.resource: ResourceMemory}[kind]
        now = datetime.now(timezone.utc)
        extra: dict[str, Any] = {"occurred_at": now, "said_offset_minutes": said_offset(None, now, zone)} \
            if kind is MemoryType.episodic else {}
        return cls(id=memory_id, user_id=user, **fields, **extra)

    def _delete(self, user: str, path: tuple[str, ...], namespace: tuple[str, ...], key: str) -> None:
        """Delete what is at (namespace, key): the item put there and the engine's memory shown there.
        A user id the engine's rule refuses is taken here, so that items stored before the rule was
        checked can still be deleted."""
        if path and path[0] in READ_ONLY:
            raise InvalidNamespaceError(f"{path[0]} memories cannot be deleted through the store")
        if found := problem(user):
            raise InvalidInput(f"namespace {namespace!r}: user_id {found}")
        if problem(key):
            return  # no such key can have been stored
        memory_id = self._item_id(user, namespace, key, self._kind_for(path))
        for attempt in range(1, WRITE_TRIES + 1):
            before = {i: m for i, (m, _) in self._at(user, namespace, key, expired=True).items()}
            ids = set(before) | set(self.mx.store.expiry_of([memory_id], user_id=user))
            if not ids:
                return
            freed = self._freed(user, _vault_ids(before.values()), ids, {})
            try:
                self.mx.store.apply([DeleteOp(memory_id=i) for i in [*sorted(ids), *freed]], user_id=user, actor=ACTOR)
            except MemoryNotFound:  # deleted meanwhile
                if attempt == WRITE_TRIES:
                    raise
                continue
            return

    # ------------------------------------------------------------ the vault entries of items

    def _freed(self, user: str, vault_ids: set[str], rewritten: set[str], fields: dict[str, Any]) -> list[str]:
        """The vault entries among these that a write of `fields` over the memories `rewritten` leaves
        unused, to delete in that same write: made by this store, pointed at by no other memory of the
        user nor by the new fields, their value not in the new fields (which the guard would point at
        them again). (The guard names a new entry after the memory, field and place of its secret: an
        old entry left there until after the write would hold the name a new secret in the same place
        needs.) Entries the engine made (a secret the user told in a chat, which an item repeated) are
        the user's: they stay."""
        if not vault_ids:
            return []
        text = "\n".join(str(t) for v in fields.values() for t in (v if isinstance(v, list) else [v]))  # tags as written
        secrets = self.mx.store.vault_values(vault_ids, user_id=user)
        return sorted(v for v in vault_ids if v in secrets and secrets[v] not in text and f"[vault:{v}]" not in text
                      and self._made_here(user, v) and not self._referenced(user, v, rewritten))

    def _drop_orphans(self, user: str, vault_ids: set[str]) -> None:
        """Delete the vault entries among these that this store made and no memory of the user points at."""
        orphans = sorted(v for v in vault_ids if not self._referenced(user, v, set()) and self._made_here(user, v))
        if not orphans:
            return
        try:
            self.mx.store.apply([DeleteOp(memory_id=v) for v in orphans], user_id=user, actor=ACTOR)
        except MemoryNotFound:  # one deleted meanwhile: the others one at a time
            for v in orphans:
                try:
                    self.mx.store.apply([DeleteOp(memory_id=v)], user_id=user, actor=ACTOR)
                except MemoryNotFound:
                    continue

    def _referenced(self, user: str, vault_id: str, besides: set[str]) -> bool:
        """Whether a memory of the user other than `besides` (expired ones too) holds the placeholder
        of this vault entry."""
        # a loose match ('_' in an id matches any one character): at worst an entry is kept
        return self.mx.store.one_mentioning(f"[vault:{vault_id}]", user_id=user,
                                            besides={vault_id, *besides}) is not None

    def _made_here(self, user: str, vault_id: str) -> bool:
        """Whether the vault entry was inserted by one of this store's writes."""
        try:
            first = self.mx.store.history(vault_id, user_id=user)[0]
        except MemoryNotFound:
            return False
        return first.operation is Operation.insert and first.actor == ACTOR and first.memory_type is \
            MemoryType.knowledge_vault

    # ------------------------------------------------------------ TTL

    def _refresh(self, user: str, items: list[Any]) -> None:
        """Start again the TTLs of these items that were put with one (the engine's own memories have none)."""
        ids = []
        for item in items:
            try:
                ids.append(self._item_id(user, item.namespace, item.key, self._kind_for(self._split(item.namespace)[1])))
            except InvalidNamespaceError:  # under core or knowledge_vault: the engine's, never put here
                continue
        bodies = self._bodies(user, list(self.mx.store.get_many(ids, user_id=user).values()))
        now = utcnow()
        expiries = {}
        for memory_id, body in bodies.items():
            ttl = body.get("ttl")
            if isinstance(ttl, (int, float)) and not isinstance(ttl, bool) and math.isfinite(ttl) and ttl > 0:
                try:
                    expiries[memory_id] = now + timedelta(minutes=ttl)
                except OverflowError:  # ends past the last date: it keeps the expiry it has
                    continue
        self.mx.store.set_expiry(expiries, user_id=user)

    # ------------------------------------------------------------ search and listing

    def _users(self, prefix: tuple[str, ...]) -> list[str]:
        p = self.user_position
        if len(prefix) > p and prefix[p] != "*":
            return [prefix[p]]
        return [u for u in self.mx.user_ids() if _user_ok(u)]

    def _types(self, prefix: tuple[str, ...]) -> list[str] | None:
        """The memory types a prefix can reach (searched on their own, so the engine's other memories
        do not crowd its items out): the one its path names, else semantic; any with no path."""
        path = prefix[:self.user_position] + prefix[self.user_position + 1:]
        if not path or path[0] == "*":
            return None
        return [path[0] if path[0] in MemoryType._value2member_map_ else MemoryType.semantic.value]

    @staticmethod
    def _passes(item: SearchItem, op: SearchOp) -> bool:
        prefix = tuple(op.namespace_prefix)
        if item.namespace[:len(prefix)] != prefix:
            return False
        return not op.filter or all(_compare_values(item.value.get(k), v) for k, v in op.filter.items())

    def _search(self, op: SearchOp) -> list[SearchItem]:
        prefix, want = tuple(op.namespace_prefix), op.offset + op.limit
        types = self._types(prefix)
        found: list[SearchItem] = []
        plain = printable(op.query) if op.query else ""  # as the items' texts were indexed
        query = plain if plain.strip() else None
        for user in self._users(prefix):
            found += self._ranked(user, op, query, types, want) if query else [
                i for _, i in self._listed(user, op, types)]
        if query:
            found.sort(key=lambda i: (i.score is None, -(i.score or 0.0)))  # the unscored last, as they came
        return found[op.offset:want]

    def _ranked(self, user: str, op: SearchOp, query: str, types: list[str] | None, want: int) -> list[SearchItem]:
        """The user's first `want` items under the prefix that pass the filter, for the query: first as the
        engine ranks them among its best results for the whole user, then, when those hold too few (better
        matches in other namespaces crowd them out), the prefix's other items, nearest the query's
        embedding first (the engine's vector leg on them alone; all of them rank below the first, as
        they did for the engine), unscored as LangGraph's in-memory store leaves items it has no vector of."""
        found, exhausted = self._hits(user, op, query, types, max(want * 4, 20))
        if len(found) >= want:
            return found
        seen = {(i.namespace, i.key) for i in found}
        rest = [(m, i) for m, i in self._listed(user, op, types) if (i.namespace, i.key) not in seen]
        if not exhausted:  # else the engine ranked every memory it has a vector or a word of
            rest = self._nearest(user, query, rest)
        return found + [i for _, i in rest[:want - len(found)]]

    def _nearest(self, user: str, query: str,
                 found: list[tuple[MemoryBase, SearchItem]]) -> list[tuple[MemoryBase, SearchItem]]:
        """These memories by their vectors' cosine to the query's embedding, highest first; those with no
        vector (or one of another embedder) after, in the order given."""
        store = self.mx.store
        if not found or store.embedder is None or store.vectors is None:
            return found
        try:
            (target,) = store.embedder.embed([query])
            vectors = store.vectors.get(user, [m.id for m, _ in found])
        except Exception as exc:  # an embedder or index outage: the order given stands
            log.warning("ranking a namespace's items by their vectors failed (%s)", type(exc).__name__)
            return found
        norm = math.sqrt(sum(x * x for x in target)) or 1.0

        def cosine(pair: tuple[MemoryBase, SearchItem]) -> float:
            vector = vectors.get(pair[0].id)
            if vector is None or len(vector) != len(target):
                return -2.0
            return sum(a * b for a, b in zip(target, vector)) / (norm * (math.sqrt(sum(x * x for x in vector)) or 1.0))

        return sorted(found, key=cosine, reverse=True)

    def _hits(self, user: str, op: SearchOp, query: str, types: list[str] | None,
              limit: int) -> tuple[list[SearchItem], bool]:
        """The items among the engine's first `limit` results that pass, and whether it had no more."""
        hits = self.mx.search(query, user_id=user, limit=limit, memory_types=types, context=0)
        return [i for _, i in self._items(user, [(h.memory, h.score) for h in hits]) if self._passes(i, op)], \
            len(hits) < limit

    def _listed(self, user: str, op: SearchOp, types: list[str] | None) -> list[tuple[MemoryBase, SearchItem]]:
        """The user's items under the prefix that pass the filter (with their memories), newest first."""
        return [(m, i) for m, i in self._items(user, [(m, None) for m in self._all(user, types)]) if self._passes(i, op)]

    def _all(self, user: str, types: list[str] | None) -> list[MemoryBase]:
        """The user's memories of these types, newest first, read page after page by cursor: one
        written or deleted meanwhile is neither read twice nor makes another one missed, as it would
        with pages counted by offset."""
        out: list[MemoryBase] = []
        before: str | None = None
        while True:
            page = self.mx.list(user_id=user, memory_types=types, limit=PAGE, before=before)
            out += page
            if len(page) < PAGE:
                return out
            before = MemoryPosition.of(page[-1]).cursor()

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        prefixes = [c.path for c in op.match_conditions or () if c.match_type == "prefix"]
        users = self._users(tuple(prefixes[0])) if prefixes else self._users(())
        namespaces: set[tuple[str, ...]] = set()
        for user in users:
            namespaces.update(item.namespace for _, item in self._items(user, [(m, None) for m in self._all(user, None)]))
        kept = [ns for ns in namespaces if all(_does_match(c, ns) for c in op.match_conditions or ())]
        if op.max_depth is not None:
            kept = list({ns[:op.max_depth] for ns in kept})
        return sorted(kept)[op.offset:op.offset + op.limit]


__all__ = ["MirixStore"]
