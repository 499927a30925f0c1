"""Typed tools of the memory managers, bound to one store, one user and one batch.

Tools do not write: each call is validated (schema, ids, types, limits) and turned into an
operation collected by `OpCollector`; the manager's operations are applied afterwards in one
transaction. A rejected call raises `ToolError`, whose message goes back to the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Sequence

from autogen_core.tools import FunctionTool
from pydantic import ValidationError

from mirix_py.errors import InvalidInput, MemoryNotFound
from mirix_py.ops import DeleteOp, InsertOp, MergeOp, Op, UpdateOp
from mirix_py.records import (
    MEMORY_CLASSES, CoreMemory, MemoryBase, MemoryType,
)
from mirix_py.store.memories import IMMUTABLE_FIELDS, MemoryStore

MemoryTypeName = Literal["core", "episodic", "semantic", "procedural", "resource", "knowledge_vault"]


class ToolError(ValueError):
    """A tool call the model must correct."""


def _validation_message(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors())


@dataclass
class OpCollector:
    """Collects the validated operations of one manager for one batch."""

    store: MemoryStore
    user_id: str
    memory_type: MemoryType
    batch_source_ids: Sequence[str]
    default_occurred_at: Any = None
    ops: list[Op] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    _round_start: int = 0
    _core: dict[str, CoreMemory | None] = field(default_factory=dict)

    # ------------------------------------------------------------ rounds

    def begin_round(self) -> None:
        self._round_start = len(self.ops)
        self.errors = []

    def rollback_round(self) -> None:
        """Drop what the failed round collected: the model resends the whole corrected set."""
        del self.ops[self._round_start:]
        self._core.clear()

    def fail(self, message: str) -> None:
        self.errors.append(message)
        raise ToolError(message)

    # ------------------------------------------------------------ checks

    def _sources(self, source_ids: list[str] | None) -> list[str]:
        if not source_ids:
            return list(self.batch_source_ids)
        unknown = sorted(set(source_ids) - set(self.batch_source_ids))
        if unknown:
            self.fail(f"unknown source_ids {unknown}; use ids of this batch's messages: {list(self.batch_source_ids)}")
        return list(source_ids)

    def _owned(self, memory_id: str) -> MemoryBase:
        try:
            memory = self.store.get(memory_id, user_id=self.user_id)
        except MemoryNotFound:
            self.fail(f"unknown memory id {memory_id!r}: use an id from the listed memories")
        if memory.memory_type is not self.memory_type:
            self.fail(f"{memory_id} is a {memory.memory_type.value} memory; this manager edits "
                      f"{self.memory_type.value} memories only")
        return memory

    def _check_fields(self, current: MemoryBase, fields: dict[str, Any]) -> None:
        if not isinstance(fields, dict) or not fields:
            self.fail("fields must be a non-empty object of field names to new values")
        bad = sorted(IMMUTABLE_FIELDS & set(fields))
        if bad:
            self.fail(f"cannot change {bad}")
        try:
            type(current).model_validate({**current.model_dump(), **fields})
        except ValidationError as exc:
            self.fail(f"invalid fields: {_validation_message(exc)}")

    # ------------------------------------------------------------ generic tools

    def insert(self, **values: Any) -> str:
        source_ids = values.pop("source_ids", None)
        values = {k: v for k, v in values.items() if v is not None}
        values.setdefault("occurred_at", self.default_occurred_at)
        cls = MEMORY_CLASSES[self.memory_type]
        try:
            memory = cls(user_id=self.user_id, source_ids=self._sources(source_ids), **values)
        except ValidationError as exc:
            self.fail(f"invalid {self.memory_type.value} memory: {_validation_message(exc)}")
        self.ops.append(InsertOp(memory=memory))
        return f"ok: {self.memory_type.value} memory will be inserted"

    def update_memory(self, memory_id: str, fields: dict[str, Any]) -> str:
        """Change fields of a listed memory in place (its id stays)."""
        current = self._owned(memory_id)
        self._check_fields(current, fields)
        self.ops.append(UpdateOp(memory_id=memory_id, fields=fields, add_source_ids=list(self.batch_source_ids)))
        return f"ok: {memory_id} will be updated"

    def merge_memories(self, memory_ids: list[str], fields: dict[str, Any] | None = None) -> str:
        """Fold duplicates into the first id; the others are deleted."""
        if len(memory_ids) < 2 or len(set(memory_ids)) != len(memory_ids):
            self.fail("merge needs at least two distinct memory ids")
        first = self._owned(memory_ids[0])
        for other in memory_ids[1:]:
            self._owned(other)
        if fields:
            self._check_fields(first, fields)
        self.ops.append(MergeOp(memory_ids=memory_ids, fields=fields or {}))
        return f"ok: {len(memory_ids)} memories will be merged into {memory_ids[0]}"

    def delete_memory(self, memory_id: str) -> str:
        """Delete a listed memory that is wrong or obsolete."""
        self._owned(memory_id)
        self.ops.append(DeleteOp(memory_id=memory_id))
        return f"ok: {memory_id} will be deleted"

    # ------------------------------------------------------------ core

    def _core_block(self, label: str) -> CoreMemory | None:
        if label not in self._core:
            block = None
            for memory in self.store.list(user_id=self.user_id, memory_types=[MemoryType.core], limit=10):
                if isinstance(memory, CoreMemory) and memory.label == label:
                    block = memory
            self._core[label] = block
        return self._core[label]

    def _write_core(self, label: str, value: str) -> None:
        if label not in ("persona", "human"):
            self.fail("label must be 'persona' or 'human'")
        block = self._core_block(label)
        limit = block.limit if block else CoreMemory.model_fields["limit"].default
        if len(value) > limit:
            self.fail(f"the {label} block would hold {len(value)} characters, over its limit of {limit}: "
                      "call core_memory_rewrite with a shorter, merged block")
        if block is None:
            memory = CoreMemory(user_id=self.user_id, label=label, value=value, source_ids=list(self.batch_source_ids))
            self.ops.append(InsertOp(memory=memory))
            self._core[label] = memory
        else:
            self.ops.append(UpdateOp(memory_id=block.id, fields={"value": value},
                                     add_source_ids=list(self.batch_source_ids)))
            self._core[label] = block.model_copy(update={"value": value}) if block.id else block

    def core_memory_append(self, label: Literal["persona", "human"], text: str) -> str:
        """Append one line to a core block."""
        text = (text or "").strip()
        if not text:
            self.fail("text is empty")
        block = self._core_block(label) if label in ("persona", "human") else None
        current = block.value if block else ""
        self._write_core(label, f"{current}\n{text}" if current else text)
        return f"ok: appended to {label}"

    def core_memory_rewrite(self, label: Literal["persona", "human"], value: str) -> str:
        """Replace a core block's whole value."""
        self._write_core(label, (value or "").strip())
        return f"ok: {label} rewritten"


# ---------------------------------------------------------------- tool factories
# Flat, typed signatures: weak models fill flat arguments far more reliably than nested objects.


def _insert_tool(c: OpCollector) -> FunctionTool:
    t = c.memory_type
    if t is MemoryType.episodic:
        def insert_episodic(summary: str, details: str = "", event_type: str = "conversation", actor: str = "user",
                            occurred_at: str | None = None, source_ids: list[str] | None = None) -> str:
            return c.insert(summary=summary, details=details, event_type=event_type, actor=actor,
                            occurred_at=occurred_at, source_ids=source_ids)
        fn: Callable[..., str] = insert_episodic
        doc = "Record an event: who did what, when (ISO 8601 with zone)."
    elif t is MemoryType.semantic:
        def insert_semantic(name: str, summary: str, details: str = "", source: str = "",
                            source_ids: list[str] | None = None) -> str:
            return c.insert(name=name, summary=summary, details=details, source=source, source_ids=source_ids)
        fn = insert_semantic
        doc = "Record a fact about a named person, place, thing or concept."
    elif t is MemoryType.procedural:
        def insert_procedural(summary: str, steps: list[str],
                              entry_type: Literal["workflow", "guide", "script"] = "workflow",
                              source_ids: list[str] | None = None) -> str:
            return c.insert(summary=summary, steps=steps, entry_type=entry_type, source_ids=source_ids)
        fn = insert_procedural
        doc = "Record how to do something as ordered steps."
    elif t is MemoryType.resource:
        def insert_resource(title: str, summary: str, content: str, resource_type: str = "document",
                            source_ids: list[str] | None = None) -> str:
            return c.insert(title=title, summary=summary, content=content, resource_type=resource_type,
                            source_ids=source_ids)
        fn = insert_resource
        doc = "Keep a document, file, page or screen text whole."
    elif t is MemoryType.knowledge_vault:
        def insert_knowledge_vault(entry_type: str, caption: str, secret_value: str,
                                   sensitivity: Literal["low", "medium", "high"] = "high", source: str = "",
                                   source_ids: list[str] | None = None) -> str:
            return c.insert(entry_type=entry_type, caption=caption, secret_value=secret_value,
                            sensitivity=sensitivity, source=source, source_ids=source_ids)
        fn = insert_knowledge_vault
        doc = "Store an exact sensitive value; the caption must not contain it."
    else:
        raise InvalidInput("core memory has no insert tool")
    return FunctionTool(fn, description=doc, name=fn.__name__)


def manager_tools(collector: OpCollector, names: Sequence[str]) -> list[FunctionTool]:
    """The FunctionTools named by an agent definition, bound to one collector."""
    c = collector
    factories: dict[str, Callable[[], FunctionTool]] = {
        f"insert_{c.memory_type.value}": lambda: _insert_tool(c),
        "update_memory": lambda: FunctionTool(c.update_memory, description=c.update_memory.__doc__ or "",
                                              name="update_memory"),
        "merge_memories": lambda: FunctionTool(c.merge_memories, description=c.merge_memories.__doc__ or "",
                                               name="merge_memories"),
        "delete_memory": lambda: FunctionTool(c.delete_memory, description=c.delete_memory.__doc__ or "",
                                              name="delete_memory"),
        "core_memory_append": lambda: FunctionTool(c.core_memory_append, description="Append one line to a core block.",
                                                   name="core_memory_append"),
        "core_memory_rewrite": lambda: FunctionTool(c.core_memory_rewrite, description="Replace a core block's value.",
                                                    name="core_memory_rewrite"),
    }
    tools = []
    for name in names:
        if name not in factories:
            raise InvalidInput(f"tool {name!r} is not available to the {c.memory_type.value} manager")
        tools.append(factories[name]())
    return tools


@dataclass
class RouteCollector:
    """The meta memory manager's single tool."""

    chosen: list[MemoryType] | None = None
    errors: list[str] = field(default_factory=list)

    def trigger_memory_managers(self, memory_types: list[str]) -> str:
        """Start the memory managers of these memory types for this batch."""
        valid = {t.value for t in MemoryType}
        unknown = sorted({t for t in memory_types if t not in valid})
        if unknown:
            message = f"unknown memory type(s) {unknown}; choose from {sorted(valid)}"
            self.errors.append(message)
            raise ToolError(message)
        self.chosen = list(dict.fromkeys(MemoryType(t) for t in memory_types))
        return "ok: " + ", ".join(t.value for t in self.chosen)

    def tool(self) -> FunctionTool:
        return FunctionTool(self.trigger_memory_managers, name="trigger_memory_managers",
                            description="Start the memory managers of these memory types for this batch.")
