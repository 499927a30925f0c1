"""What models see: every tool parameter described, closed sets enumerated from the records,
defaults the records' own, and the committed `schemas/tools.json` in step with the code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mirix_py.agents.tool_schemas import model_tool_schemas
from mirix_py.integrations.mcp_server import mcp_tool_schemas
from mirix_py.records import (
    KnowledgeVaultMemory, MemoryType, ProceduralMemory, ResourceMemory, SearchMethod, Sensitivity,
)
from mirix_py.cli.schemas import render, tool_schemas

MEMORY_TYPES = sorted(t.value for t in MemoryType)


def _params(schema: dict) -> dict[str, dict]:
    return (schema.get("parameters") or schema.get("input_schema") or {}).get("properties", {})


def _enum(prop: dict) -> list[str] | None:
    """The enumerated values of a property, through arrays and optional (anyOf with null) wrappers."""
    if "enum" in prop:
        return sorted(prop["enum"])
    if prop.get("type") == "array":
        return _enum(prop.get("items", {}))
    for option in prop.get("anyOf", []):
        found = _enum(option)
        if found:
            return found
    return None


def test_committed_tool_schemas_match_the_code():
    on_disk = (Path(__file__).resolve().parents[2] / "schemas" / "tools.json").read_text(encoding="utf-8")
    assert on_disk == render(tool_schemas()), "schemas/tools.json is stale: run `mirix schemas export`"


@pytest.mark.parametrize("surface", ["model", "mcp"])
def test_every_parameter_is_described_beyond_its_name(surface):
    schemas = model_tool_schemas() if surface == "model" else mcp_tool_schemas()
    assert schemas
    for tool, schema in schemas.items():
        assert (schema.get("description") or "").strip(), tool
        for name, prop in _params(schema).items():
            description = (prop.get("description") or "").strip()
            assert description and description.lower().replace(" ", "_") != name.lower(), f"{tool}.{name}"


def test_closed_sets_are_enumerated_from_the_records():
    model, mcp = model_tool_schemas(), mcp_tool_schemas()
    assert _enum(_params(model["trigger_memory_managers"])["memory_types"]) == MEMORY_TYPES
    assert _enum(_params(model["search_in_memory"])["memory_type"]) == MEMORY_TYPES
    assert _enum(_params(model["search_in_memory"])["method"]) == sorted(m.value for m in SearchMethod)
    assert _enum(_params(model["insert_knowledge_vault"])["sensitivity"]) == sorted(s.value for s in Sensitivity)
    assert _enum(_params(model["insert_procedural"])["entry_type"]) == ["guide", "script", "workflow"]
    for label in ("core_memory_append", "core_memory_rewrite"):
        assert _enum(_params(model[label])["label"]) == ["human", "persona"]
    assert _enum(_params(mcp["search_memory"])["memory_types"]) == MEMORY_TYPES
    assert _enum(_params(mcp["list_memories"])["memory_types"]) == MEMORY_TYPES
    assert _enum(_params(mcp["search_memory"])["method"]) == sorted(m.value for m in SearchMethod)


def test_defaults_are_the_records_own():
    model = model_tool_schemas()
    # a model's episode is a summary of turns kept word for word: when, what, and which turns
    assert set(_params(model["insert_episodic"])) == {"summary", "occurred_at", "source_ids"}
    assert _params(model["insert_resource"])["resource_type"]["default"] == \
        ResourceMemory.model_fields["resource_type"].default
    assert _params(model["insert_knowledge_vault"])["sensitivity"]["default"] == \
        KnowledgeVaultMemory.model_fields["sensitivity"].default.value
    assert _params(model["insert_procedural"])["entry_type"]["default"] == \
        ProceduralMemory.model_fields["entry_type"].default


def test_no_description_holds_an_id_a_model_could_copy():
    text = json.dumps(tool_schemas())
    assert "epi_3f2a" not in text and "sem_" not in text.replace("semantic", "")
