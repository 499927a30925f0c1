"""The offline rules leave a framework store's items as the app put them: an item is kept by its key and
read back as put, so a fact the rules read about its name is their own memory beside it, and a window's
screenshots are their own resource. Memories an import brought in stay the rules' to update, and an
imported item stays the app's."""

from __future__ import annotations

import hashlib
import io
import json

import pytest

from mirix_py.engine import Mirix
from mirix_py.integrations.langgraph import MirixStore
from mirix_py.records import Operation, SemanticMemory
from mirix_py.tools.ops import InsertOp

BROTHER = "My brother Tom lives in Lyon and flies for a regional airline."


def _named(mx, user_id, name):
    return [m for m in mx.list(user_id=user_id, memory_types=["semantic"]) if m.name == name]


def _operations(mx, user_id, memory_id):
    return [e.operation for e in mx.history(memory_id, user_id=user_id)]


def _item_id(store, user_id, key):
    """The id of the one memory named `key`: the item just put, before any add."""
    (memory,) = _named(store.mx, user_id, key)
    return memory.id


def test_an_add_leaves_a_langgraph_item_as_put_and_keeps_its_own_fact(mx_sqlite, user_id):
    store = MirixStore(mx_sqlite)
    store.put((user_id, "semantic"), "Tom", {"content": "Tom is a pilot."})
    item_id = _item_id(store, user_id, "Tom")

    mx_sqlite.add(BROTHER, user_id=user_id)
    assert mx_sqlite.get(item_id, user_id=user_id).search_text() == "Tom: Tom is a pilot."
    assert _operations(mx_sqlite, user_id, item_id) == [Operation.insert]
    (own,) = [m for m in _named(mx_sqlite, user_id, "Tom") if m.id != item_id]
    assert "Tom lives in Lyon" in own.search_text() and "brother" in own.search_text()
    hits = mx_sqlite.search("where does Tom live?", user_id=user_id, limit=3)
    assert own.id in [h.memory.id for h in hits]
    assert not [h for h in hits if h.memory.id == item_id and "Lyon" in h.text]

    mx_sqlite.add("Tom lives in Paris now.", user_id=user_id)  # the rules' own fact changes, beside the item
    assert {m.id for m in _named(mx_sqlite, user_id, "Tom")} == {item_id, own.id}
    moved = mx_sqlite.get(own.id, user_id=user_id).search_text()
    assert "Tom lives in Paris" in moved and "Lyon" not in moved
    assert mx_sqlite.get(item_id, user_id=user_id).search_text() == "Tom: Tom is a pilot."

    store.put((user_id, "semantic"), "Tom", {"content": "Tom is a senior pilot."})  # the app updates its item
    assert mx_sqlite.get(item_id, user_id=user_id).search_text() == "Tom: Tom is a senior pilot."
    assert store.get((user_id, "semantic"), "Tom").value == {"content": "Tom is a senior pilot."}


def test_screenshots_leave_a_langgraph_item_with_the_windows_title_as_put(mx_sqlite, user_id):
    store = MirixStore(mx_sqlite)
    store.put((user_id, "resource"), "Screenshot of screen", {"content": "The app's note about its screens."})
    item = store.get((user_id, "resource"), "Screenshot of screen")

    mx_sqlite.add("Inbox\nMeeting at 10\nLunch with Bo", user_id=user_id, kind="screenshot")
    mx_sqlite.add("Inbox\nMeeting at 10\nLunch with Bo\nCall Ann at 3", user_id=user_id, kind="screenshot")
    resources = mx_sqlite.list(user_id=user_id, memory_types=["resource"])
    (item_memory,) = [m for m in resources if m.content == "The app's note about its screens."]
    assert _operations(mx_sqlite, user_id, item_memory.id) == [Operation.insert]
    (window,) = [m for m in resources if m.id != item_memory.id]
    assert window.title == "Screenshot of screen" and "Call Ann at 3" in window.content
    assert store.get((user_id, "resource"), "Screenshot of screen").value == item.value


def _crewai_record_memory(user_id: str, record_id: str, category: str, content: str) -> SemanticMemory:
    """What `integrations.crewai.MirixStorage` saves for a CrewAI `MemoryRecord` (crewai is not in this
    venv): a semantic memory named after the record's first category, the content its summary and the
    record in a "crewai:" tag, under the id made from the user and the record's id."""
    record = {"id": record_id, "content": content, "scope": "/", "categories": [category], "metadata": {},
              "importance": 0.5, "source": None, "private": False}
    digest = hashlib.sha256(json.dumps([user_id, record_id]).encode("utf-8")).hexdigest()[:32]
    return SemanticMemory(id=f"sem_{digest}", user_id=user_id, name=category, summary=content,
                          tags=["crewai:" + json.dumps(record, ensure_ascii=False, sort_keys=True)])


def test_an_add_leaves_a_crewai_record_as_saved(mx_sqlite, user_id):
    record = _crewai_record_memory(user_id, "r1", "Acme", "Acme ships orders within two days.")
    mx_sqlite.store.apply([InsertOp(memory=record)], user_id=user_id, actor="crewai")

    mx_sqlite.add("Acme was founded in 1999.", user_id=user_id)
    kept = mx_sqlite.get(record.id, user_id=user_id)
    assert kept.search_text() == "Acme: Acme ships orders within two days." and kept.tags == record.tags
    assert _operations(mx_sqlite, user_id, record.id) == [Operation.insert]
    (own,) = [m for m in _named(mx_sqlite, user_id, "Acme") if m.id != record.id]
    assert own.summary == "Acme was founded in 1999"


@pytest.fixture
def exported(tmp_path, embedder, user_id):
    """A data dir's export (the turn's episode, the rules' fact about Tom and a LangGraph item about
    Ada), and the engine it is imported into."""
    source = Mirix(tmp_path / "source", embedder=embedder)
    try:
        source.add("My brother Tom is a pilot.", user_id=user_id)
        MirixStore(source).put((user_id, "semantic"), "Ada", {"content": "Ada is a chemist."})
        out = io.StringIO()
        source.export(out, user_id=user_id)
    finally:
        source.close()
    target = Mirix(tmp_path / "target", embedder=embedder)
    assert target.import_(io.StringIO(out.getvalue()))["imported"] == 3
    yield target
    target.close()


def test_an_imported_fact_is_still_updated_by_a_later_add(exported, user_id):
    (tom,) = _named(exported, user_id, "Tom")
    exported.add("Tom lives in Lyon.", user_id=user_id)
    (after,) = _named(exported, user_id, "Tom")
    assert after.id == tom.id and "Tom lives in Lyon" in after.search_text() and "pilot" in after.search_text()
    assert _operations(exported, user_id, tom.id) == [Operation.insert, Operation.update]


def test_an_imported_langgraph_item_stays_as_put(exported, user_id):
    store = MirixStore(exported)
    item_id = _item_id(store, user_id, "Ada")
    exported.add("Ada lives in Porto.", user_id=user_id)
    assert store.get((user_id, "semantic"), "Ada").value == {"content": "Ada is a chemist."}
    assert exported.get(item_id, user_id=user_id).search_text() == "Ada: Ada is a chemist."
    (own,) = [m for m in _named(exported, user_id, "Ada") if m.id != item_id]
    assert "Ada lives in Porto" in own.search_text()
