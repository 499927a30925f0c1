"""Write operations: the typed tool calls that memory managers (LLM or offline rules) emit.

The store applies a manager's list of operations in one transaction, so the offline rules and the
LLM agents share one write path, one history and one set of checks.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from mirix_py.records import Memory


class InsertOp(BaseModel):
    model_config = ConfigDict(extra="forbid")
    op: Literal["insert"] = "insert"
    memory: Memory


class UpdateOp(BaseModel):
    """Change fields of a memory in place; its id stays."""

    model_config = ConfigDict(extra="forbid")
    op: Literal["update"] = "update"
    memory_id: str
    fields: dict[str, Any] = Field(default_factory=dict)
    add_source_ids: list[str] = Field(default_factory=list)


class MergeOp(BaseModel):
    """Fold several memories of one type into the first: it keeps its id, takes `fields`, and the
    union of source ids; the others are deleted."""

    model_config = ConfigDict(extra="forbid")
    op: Literal["merge"] = "merge"
    memory_ids: list[str] = Field(min_length=2)
    fields: dict[str, Any] = Field(default_factory=dict)


class DeleteOp(BaseModel):
    model_config = ConfigDict(extra="forbid")
    op: Literal["delete"] = "delete"
    memory_id: str


Op = Annotated[Union[InsertOp, UpdateOp, MergeOp, DeleteOp], Field(discriminator="op")]
