"""Short references for the memories in a chat turn's prompts, and the ids they stand for."""

from __future__ import annotations

import json

from mirix_py.agents.prompt_refs import PromptRefs
from mirix_py.engine import Mirix
from mirix_py.llm.scripted import ScriptedChatCompletionClient

EPI, SEM = "epi_" + "a" * 32, "sem_" + "b" * 32


def refs_for(*ids: str) -> PromptRefs:
    refs = PromptRefs()
    for memory_id in ids:
        refs.ref(memory_id)
    return refs


def test_a_memory_keeps_its_reference_in_the_order_first_shown():
    refs = PromptRefs()
    assert [refs.ref(EPI), refs.ref(SEM), refs.ref(EPI)] == ["m1", "m2", "m1"]
    assert refs.memory_id("m2") == SEM and refs.memory_id("m3") is None and refs.memory_id("x1") is None


def test_citations_are_written_back_as_ids():
    refs = refs_for(EPI, SEM)
    assert refs.decoded("Tom is a pilot [m1].") == f"Tom is a pilot [{EPI}]."
    assert refs.decoded("Both [m1, m2] and (m2).") == f"Both [{EPI}, {SEM}] and [{SEM}]."
    assert refs.decoded("[m2][m1]") == f"[{SEM}][{EPI}]"


def test_what_is_no_citation_of_this_turn_stays_as_written():
    refs = refs_for(EPI)
    text = "Room m1 on floor [m7], a BMW m3 (m1 and more), [m1 x]"
    assert refs.decoded(text) == text
    assert refs.decoded(f"already an id [{EPI}]") == f"already an id [{EPI}]"


FACTS = [
    {"role": "user", "name": "Ada", "id": "m1", "content": "My name is Ada and I love bouldering."},
    {"role": "user", "name": "Ada", "id": "m2", "content": "My brother Tom is a pilot."},
]


def script(req):
    if req.agent == "topic_extractor":
        return json.dumps({"topics": ["Tom", "job"], "start": None, "end": None})
    return "Tom is a pilot [m1]."


def test_two_stores_holding_the_same_memories_hand_the_answerer_the_same_prompt(tmp_path, embedder):
    """Memory ids are random: shown as ids, the same memories made two different prompts."""
    prompts, answers = [], []
    for name in ("one", "two"):
        with Mirix(tmp_path / name, embedder=embedder) as mx:
            mx.add(FACTS, user_id="ada", occurred_at="2024-04-02T18:30:00Z")
        client = ScriptedChatCompletionClient(script)
        with Mirix(tmp_path / name, embedder=embedder, model_client=client) as mx:
            response = mx.chat("What does Tom do?", user_id="ada", remember=False)
            prompts.append(next(r.system for r in client.requests if r.agent == "chat_agent"))
            answers.append((response.answer, response.memory_ids))
    assert prompts[0] == prompts[1]
    (first, first_ids), (second, second_ids) = answers
    assert first_ids and second_ids and first_ids != second_ids  # each store's own id cited
    assert first == f"Tom is a pilot [{first_ids[0]}]." and second == f"Tom is a pilot [{second_ids[0]}]."
