"""Only the user's words (and text on a screen) state facts: an assistant's answer, fed back into
memory as its turn, is kept as an episode and its secrets go to the vault, but it changes no fact the
user told (a chat model's made-up answer must not overwrite what the user said)."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

import pytest

from mirix_py.agents.offline import managers
from mirix_py.engine import Mirix
from mirix_py.llm.scripted import ScriptedChatCompletionClient
from mirix_py.records import InputKind, InputRecord, Message, MemoryType, Operation

WHEN = datetime(2024, 4, 2, 18, 30, tzinfo=timezone.utc)
TOLD = ["My brother Tom is a pilot.", "My bank PIN is 4921."]
MADE_UP = "Your brother Tom is a dentist now. Your bank PIN is 9931."


def _tom(mx, user_id):
    (tom,) = [m for m in mx.list(user_id=user_id, memory_types=["semantic"]) if m.name == "Tom"]
    return tom


def _vault_values(mx, user_id) -> dict[str, str]:
    """Each vault entry's id -> its value."""
    return {m.id: mx.get(m.id, user_id=user_id, reveal=True).secret_value
            for m in mx.list(user_id=user_id, memory_types=["knowledge_vault"])}


def _told(mx, user_id):
    """Ada's fact about Tom and her PIN's vault entry, as stored."""
    for text in TOLD:
        mx.add(text, user_id=user_id, occurred_at=WHEN)
    tom = _tom(mx, user_id)
    assert "pilot" in tom.search_text() and "brother" in tom.search_text()
    (pin_id,) = _vault_values(mx, user_id)
    return tom, pin_id


def _unchanged(mx, user_id, tom, pin_id) -> None:
    after = _tom(mx, user_id)
    assert (after.summary, after.details) == (tom.summary, tom.details)
    assert "dentist" not in after.search_text()
    assert [e.operation for e in mx.history(tom.id, user_id=user_id)] == [Operation.insert]
    values = _vault_values(mx, user_id)
    assert values[pin_id] == "4921"  # the user's entry as told: the assistant's secret only adds its own
    assert [e.operation for e in mx.history(pin_id, user_id=user_id)] == [Operation.insert]
    assert sorted(values.values()) == ["4921", "9931"]


def _assistant_episode(mx, user_id):
    episodes = [m for m in mx.list(user_id=user_id, memory_types=["episodic"]) if m.actor == "assistant"]
    (episode,) = episodes
    return episode


def test_an_assistant_turn_contradicting_the_user_changes_no_fact_and_is_kept_as_its_episode(mx, user_id):
    tom, pin_id = _told(mx, user_id)
    mx.add([{"role": "user", "content": "What does my brother do?"},
            {"role": "assistant", "content": MADE_UP}], user_id=user_id, occurred_at=WHEN)
    _unchanged(mx, user_id, tom, pin_id)
    episode = _assistant_episode(mx, user_id)
    assert episode.summary.startswith("Your brother Tom is a dentist now. Your bank PIN is [vault:")
    # its secret moved to the vault (the placeholder's random id may hold the digits by chance)
    assert "9931" not in re.sub(r"\[vault:[^\]]*\]", "", episode.summary)


@pytest.mark.parametrize("role", ["system", "tool"])
def test_a_system_or_tool_message_states_no_fact(mx_sqlite, user_id, role):
    tom, _ = _told(mx_sqlite, user_id)
    mx_sqlite.add([{"role": role, "content": "Tom is a dentist now. Lena lives in Oslo."}],
                  user_id=user_id, occurred_at=WHEN)
    assert _tom(mx_sqlite, user_id).search_text() == tom.search_text()
    assert [m.name for m in mx_sqlite.list(user_id=user_id, memory_types=["semantic"])] == ["Tom"]


def test_text_on_a_screen_still_states_facts():
    record = InputRecord(user_id="u", kind=InputKind.screenshot, occurred_at=WHEN,
                         metadata={"app": "Chrome", "window_title": "Team"},
                         messages=[Message(content="Team page\nTom lives in Rome.")])
    batch = managers.prepare_batch("u", [record])
    assert MemoryType.semantic in managers.route(batch)
    (op,) = managers.semantic_ops(batch, lambda name: None)
    assert op.memory.name == "Tom" and "Rome" in op.memory.search_text()


def _made_up_answers(req):
    """A chat model that answers with made-up facts; its memory managers record nothing."""
    if req.agent == "chat_agent":
        return MADE_UP
    if req.agent == "topic_extractor":
        return json.dumps({"topics": ["Tom"], "start": None, "end": None})
    if req.agent == "meta_memory_manager":
        return [("trigger_memory_managers", {"memory_types": []})]
    return [("nothing_to_record", {})]


def test_a_chat_models_made_up_answer_fed_back_changes_no_fact(tmp_path, embedder, user_id):
    client = ScriptedChatCompletionClient(_made_up_answers)
    with Mirix(tmp_path / "chat", embedder=embedder, model_client=client) as mx:
        tom, pin_id = _told(mx, user_id)
        response = mx.chat("What does my brother do?", user_id=user_id)
        assert response.mode == "llm" and response.answer == MADE_UP and response.update_input_ids
        mx.flush(timeout=60)
        assert mx.input_status(response.update_input_ids[0]).status.value == "processed"
        _unchanged(mx, user_id, tom, pin_id)
        assert _assistant_episode(mx, user_id).summary.startswith("Your brother Tom is a dentist now.")
