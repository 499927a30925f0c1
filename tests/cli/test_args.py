"""The CLI's argument parsing: pure functions, each bad value a message naming what is accepted."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from mirix_py.cli.args import event_changes, field_assignments, local_when, memory_types, messages_or_text
from mirix_py.errors import InvalidInput
from mirix_py.records import HistoryEvent


def test_memory_types_aliases_and_the_valid_list():
    assert memory_types(["vault", "Episodic", "procedure"]) == ["knowledge_vault", "episodic", "procedural"]
    assert memory_types([]) is None
    with pytest.raises(InvalidInput, match="use one of core, episodic, semantic, procedural, resource, knowledge_vault"):
        memory_types(["vaults"])


def test_local_when_keeps_a_zone_and_gives_one_to_a_naive_time():
    assert local_when("2024-05-01T10:00:00+02:00", "x") == "2024-05-01T10:00:00+02:00"
    naive = datetime.fromisoformat(local_when("2024-05-01T10:00", "x"))
    assert naive.utcoffset() == datetime(2024, 5, 1, 10).astimezone().utcoffset()
    assert local_when(None, "x") is None
    with pytest.raises(InvalidInput, match="--start"):
        local_when("yesterday", "--start")


def test_messages_or_text():
    assert messages_or_text('[{"role": "user", "content": "hi"}]', messages=False) == [{"role": "user", "content": "hi"}]
    assert messages_or_text("[draft] notes", messages=False) == "[draft] notes"
    assert messages_or_text("[1, 2]", messages=False) == "[1, 2]"
    with pytest.raises(InvalidInput, match="JSON list"):
        messages_or_text("plain", messages=True)


def test_field_assignments():
    assert field_assignments(["summary=Tom=pilot", "tags=[\"a\"]", "limit=5"], None) == {
        "summary": "Tom=pilot", "tags": ["a"], "limit": 5}
    assert field_assignments([], '{"details": "x"}') == {"details": "x"}
    with pytest.raises(InvalidInput, match="name=value"):
        field_assignments(["summary"], None)
    with pytest.raises(InvalidInput, match="nothing to update"):
        field_assignments([], None)


def _event(op, before, after):
    return HistoryEvent(id=1, memory_id="sem_1", user_id="u", memory_type="semantic", operation=op, before=before,
                        after=after, actor="cli", input_id=None, created_at=datetime.now(timezone.utc))


def test_event_changes_say_what_changed():
    before = {"id": "sem_1", "name": "Tom", "summary": "Tom is a pilot", "tags": ["a"], "updated_at": "t1"}
    after = {**before, "summary": "Tom flies for Lufthansa", "tags": ["a", "family"], "updated_at": "t2"}
    assert event_changes(_event("update", before, after)) == [
        "~ summary: Tom is a pilot → Tom flies for Lufthansa", "~ tags: +family"]
    assert event_changes(_event("insert", None, before)) == ["+ name: Tom", "+ summary: Tom is a pilot", '+ tags: ["a"]']
    assert event_changes(_event("delete", before, None)) == ["(deleted)"]
