"""The closed sets and defaults that tool parameters show a model, derived from the records.

Every parameter a model sees is described and, where its values are a closed set, enumerated; the
sets come from the record enums and the defaults from the record fields, so a tool never offers
what a record would refuse. No autogen or MCP import here: both surfaces build on it.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel

from mirix_py.records import (
    EpisodicMemory, KnowledgeVaultMemory, MemoryType, ProceduralMemory, ResourceMemory, SearchMethod, Sensitivity,
)


def _literal(values: tuple[str, ...]) -> Any:
    return Literal.__getitem__(values)  # type: ignore[attr-defined]  # a Literal of runtime values: no static type


MEMORY_TYPES: tuple[str, ...] = tuple(t.value for t in MemoryType)
SEARCH_METHODS: tuple[str, ...] = tuple(m.value for m in SearchMethod)
SENSITIVITIES: tuple[str, ...] = tuple(s.value for s in Sensitivity)
PROCEDURE_TYPES: tuple[str, ...] = get_args(ProceduralMemory.model_fields["entry_type"].annotation)

MemoryTypeName = _literal(MEMORY_TYPES)
SearchMethodName = _literal(SEARCH_METHODS)
SensitivityName = _literal(SENSITIVITIES)
ProcedureTypeName = _literal(PROCEDURE_TYPES)


def default(model: type[BaseModel], name: str) -> Any:
    """A record field's default: what a tool parameter defaults to."""
    value = model.model_fields[name].default
    return value.value if hasattr(value, "value") else value


EVENT_TYPE_DEFAULT: str = default(EpisodicMemory, "event_type")
ACTOR_DEFAULT: str = default(EpisodicMemory, "actor")
RESOURCE_TYPE_DEFAULT: str = default(ResourceMemory, "resource_type")
VAULT_ENTRY_TYPE_DEFAULT: str = default(KnowledgeVaultMemory, "entry_type")
SENSITIVITY_DEFAULT: str = default(KnowledgeVaultMemory, "sensitivity")
PROCEDURE_TYPE_DEFAULT: str = default(ProceduralMemory, "entry_type")
