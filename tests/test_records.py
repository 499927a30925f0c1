"""Records validate what callers and models hand in; the committed JSON Schemas match the models."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest
from pydantic import ValidationError

from mirix_py.records import (
    MASK, MEMORY_ADAPTER, EpisodicMemory, KnowledgeVaultMemory, Message, ProceduralMemory, ResourceMemory,
)
from mirix_py.cli.schemas import all_schemas, default_schema_dir, render


def test_discriminated_union_picks_the_type():
    memory = MEMORY_ADAPTER.validate_python({"memory_type": "procedural", "user_id": "u", "summary": "Deploy",
                                             "steps": ["build", "ship"]})
    assert isinstance(memory, ProceduralMemory)
    with pytest.raises(ValidationError):
        MEMORY_ADAPTER.validate_python({"memory_type": "dreams", "user_id": "u"})


def test_naive_datetimes_and_unknown_fields_are_rejected():
    with pytest.raises(ValidationError, match="timezone-aware"):
        EpisodicMemory(user_id="u", summary="x", occurred_at=datetime(2024, 1, 1))
    with pytest.raises(ValidationError):
        EpisodicMemory(user_id="u", summary="x", colour="red")
    with pytest.raises(ValidationError):
        Message(role="user", content="")


def test_prompt_text_of_each_type():
    when = datetime(2024, 1, 2, 3, 4, tzinfo=timezone.utc)
    assert EpisodicMemory(user_id="u", summary="Met Bo", actor="Ada", occurred_at=when).search_text() == \
        "[2 January 2024, 03:04] Ada: Met Bo"
    assert EpisodicMemory(user_id="u", summary="Met Bo", actor="Ada", occurred_at=when).embedding_text() == "Ada: Met Bo"
    assert ProceduralMemory(user_id="u", summary="Tea", steps=["boil"]).embedding_text() == "Tea: 1. boil"
    assert ProceduralMemory(user_id="u", summary="Tea", steps=["boil", "steep"]).search_text() == "Tea: 1. boil 2. steep"
    vault = KnowledgeVaultMemory(user_id="u", caption="gym locker code", secret_value="4321")
    assert "4321" not in vault.search_text()
    assert vault.masked().secret_value == MASK
    content = "Page 1\n\n" + "word " * 1000 + "\nPage 9: the   boiler code is in the red binder\n"
    resource = ResourceMemory(user_id="u", title="Notes", content=content)
    # all of it is searchable, as it is; the vector reads the opening only
    assert resource.search_text() == "Notes (text):\n" + content
    assert len(resource.embedding_text()) < 1100 and "boiler" not in resource.embedding_text()


def test_committed_schemas_match_the_models():
    folder = default_schema_dir()
    expected = all_schemas()
    on_disk = {p.name.removesuffix(".schema.json"): p.read_text() for p in folder.glob("*.schema.json")}
    assert set(on_disk) == set(expected), "run `mirix schemas export`"
    for name, schema in expected.items():
        assert on_disk[name] == render(schema), f"schemas/{name}.schema.json is stale: run `mirix schemas export`"
