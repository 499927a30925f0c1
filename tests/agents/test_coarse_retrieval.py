"""Chat's coarse retrieval (also `/context` and the framework adapters): one ranking of every memory
type, searched with the message as asked offline, then the first match of each type it left out."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from mirix_py.agents.chat import COARSE_HITS, Topics, offline_topics
from mirix_py.engine import Mirix
from mirix_py.integrations.context import retrieve_context
from mirix_py.records import KnowledgeVaultMemory, MemoryType, ProceduralMemory, Sensitivity
from mirix_py.tools.ops import InsertOp

T0 = datetime(2024, 5, 6, 9, 0, tzinfo=timezone.utc)
QUESTION = "How do I water the tomato seedlings in the greenhouse?"
# more chat turns about the question than the ranking holds, each an input of its own
TURNS = [f"I watered the tomato seedlings in the greenhouse on day {n}, they looked {mood}."
         for n, mood in enumerate(["fine", "thirsty", "tall", "green", "droopy", "strong", "pale", "happy",
                                   "small", "leafy", "bushy", "wilted", "fresh", "sturdy"])]


@pytest.fixture
def mx(tmp_path):
    engine = Mirix(tmp_path / "data", embedder=None)  # full text only: the ranking is the shared words
    for i, text in enumerate(TURNS):
        engine.add([{"role": "user", "name": "Ada", "content": text}], user_id="ada",
                   occurred_at=T0 + timedelta(days=i))
    # a procedure that shares one word with the question: far down a ranking of the turns
    engine.store.apply([InsertOp(memory=ProceduralMemory(user_id="ada", summary="Greenhouse vents",
                                                         steps=["open the roof vents at noon"]))],
                         user_id="ada", actor="test")
    yield engine
    engine.close()


def matches(hits):
    return [h.memory.id for h in hits if h.context_for is None]


def test_offline_topics_search_the_message_as_asked():
    topics = offline_topics(QUESTION, T0)
    assert topics.query == QUESTION and topics.keywords  # the keywords are still reported
    assert Topics(["tomato", "greenhouse"]).query is None  # a model's topics are searched themselves


def test_the_ranking_is_the_searchs_then_each_type_it_left_out(mx):
    ranked = mx.search(QUESTION, user_id="ada", limit=COARSE_HITS,
                       memory_types=[t for t in MemoryType if t is not MemoryType.core])
    assert all(h.memory.memory_type is MemoryType.episodic for h in ranked) and len(ranked) == COARSE_HITS
    retrieval = mx.chat_flow.retrieve("ada", QUESTION, offline_topics(QUESTION, T0), mx.core_memory(user_id="ada"))
    found = matches(retrieval.hits)
    assert found[:COARSE_HITS] == [h.memory.id for h in ranked]
    assert [mx.get(i, user_id="ada").memory_type for i in found[COARSE_HITS:]] == [MemoryType.procedural]


def test_context_keeps_its_first_max_items_matches_of_the_ranking(mx):
    context = retrieve_context(mx, "ada", QUESTION, max_items=12)
    ranked = mx.search(QUESTION, user_id="ada", limit=12,
                       memory_types=[t for t in MemoryType if t is not MemoryType.core])
    assert matches(context.hits) == [h.memory.id for h in ranked]
    few = retrieve_context(mx, "ada", QUESTION, max_items=3)
    assert matches(few.hits) == [h.memory.id for h in ranked[:3]]


def test_a_type_with_no_match_adds_nothing(mx):
    retrieval = mx.chat_flow.retrieve("ada", "seedlings", offline_topics("seedlings", T0),
                                      mx.core_memory(user_id="ada"))
    assert {mx.get(i, user_id="ada").memory_type for i in matches(retrieval.hits)} == {MemoryType.episodic}


def test_the_ranking_alone_leaves_out_the_types_it_did_not_rank(mx):
    flow, topics = mx.chat_flow, offline_topics(QUESTION, T0)
    retrieval = flow.retrieval("ada", QUESTION, topics, mx.core_memory(user_id="ada"),
                               flow.ranking("ada", QUESTION, topics))
    ranked = mx.search(QUESTION, user_id="ada", limit=COARSE_HITS,
                       memory_types=[t for t in MemoryType if t is not MemoryType.core])
    assert matches(retrieval.hits) == [h.memory.id for h in ranked]


def test_context_fills_the_place_of_a_withheld_vault_entry_with_the_type_left_out(mx):
    """A high-sensitivity vault entry ranks first and is never handed out: the first match of each type
    the ranking left out (the procedure) takes the place it leaves."""
    mx.store.apply([InsertOp(memory=KnowledgeVaultMemory(
        user_id="ada", caption="How to water the tomato seedlings in the greenhouse: the watering code",
        secret_value="4711", sensitivity=Sensitivity.high))], user_id="ada", actor="test")
    ranked = mx.search(QUESTION, user_id="ada", limit=10, memory_types=[t for t in MemoryType if t is not MemoryType.core])
    assert ranked[0].memory.memory_type is MemoryType.knowledge_vault
    context = retrieve_context(mx, "ada", QUESTION, max_items=10)
    kinds = [mx.get(i, user_id="ada").memory_type for i in matches(context.hits)]
    assert kinds == [MemoryType.episodic] * 9 + [MemoryType.procedural]
