"""A memory a model wrote reaches a reader as the turns it cites, in the speakers' words (the default),
in the room of the other hits ("keys"), or in the model's own words when asked; the model's memory is
searched either way."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from mirix_py.agents.sources_shown import as_keys, as_sources
from mirix_py.engine import Mirix
from mirix_py.llm.scripted import ScriptedChatCompletionClient
from mirix_py.records import SearchHit
from mirix_py.settings import Settings

WHEN = datetime(2024, 4, 2, 18, 30, tzinfo=timezone.utc)
PILOT = {"role": "user", "name": "Ada", "id": "m1", "content": "My brother Tom is a pilot."}
# turns that match "Tom" and "job" better than m1 does: m1 stays out of the chat's first matches (`COARSE_HITS`)
FILLER = [{"role": "user", "name": "Ada", "id": f"f{i}", "content": f"Tom's job hunt, day {i}: the job fair and Tom's job "
                                                                      "interview notes."} for i in range(12)]
FACT = "Tom suits a sky job, says Ada"  # the model's words, all in the batch (more m2's than m1's), filed as m1's


def script(req):
    if req.agent == "meta_memory_manager":
        return [("trigger_memory_managers", {"memory_types": ["semantic"]})]
    if req.agent == "semantic_memory_manager":
        if "pilot" in req.last_text:
            return [("insert_semantic", {"name": "Tom", "summary": FACT, "source_ids": ["m1"]})]
        return [("nothing_to_record", {"reason": "no lasting fact"})]
    if req.agent == "topic_extractor":
        return json.dumps({"topics": ["Tom", "job"], "start": None, "end": None})
    if req.agent == "chat_agent":
        return "Tom is a pilot."
    return [("nothing_to_record", {"reason": "nothing"})]


@pytest.fixture
def ingested(tmp_path, embedder):
    """A store where the model wrote one fact from m1, beside twelve turns the rules kept word for word."""
    client = ScriptedChatCompletionClient(script)
    with Mirix(settings=Settings(data_dir=tmp_path / "d"), embedder=embedder, model_client=client) as mx:
        mx.add([PILOT, {"role": "user", "name": "Ada", "id": "m2", "content": "A job in the sky suits him."}],
               user_id="ada", occurred_at=WHEN, wait=True)
        mx.add(FILLER, user_id="ada", occurred_at=WHEN + timedelta(days=1), wait=True)
        facts = [m for m in mx.list(user_id="ada", memory_types=["semantic"]) if m.summary == FACT]
        assert len(facts) == 1, "the scripted model's fact was not written"
    return tmp_path / "d", facts[0]


def chat_turn(data_dir, embedder, shown: str) -> tuple[str, list[str]]:
    """The chat agent's system prompt and the ids of the memories put into it."""
    client = ScriptedChatCompletionClient(script)
    settings = Settings(data_dir=data_dir, llm_memories_shown=shown)
    with Mirix(settings=settings, embedder=embedder, model_client=client) as mx:
        response = mx.chat("What is Tom's job?", user_id="ada", remember=False)
    return next(r for r in client.requests if r.agent == "chat_agent").system, response.retrieved_ids


def test_the_chat_is_handed_the_turn_a_model_fact_came_from_not_the_fact(ingested, embedder):
    data_dir, fact = ingested
    prompt, ids = chat_turn(data_dir, embedder, "sources")
    assert fact.id not in ids and FACT not in prompt
    assert "Ada: My brother Tom is a pilot." in prompt  # m1, in Ada's words, though no search ranked it
    own, own_ids = chat_turn(data_dir, embedder, "own_words")
    assert fact.id in own_ids and FACT in own and "My brother Tom is a pilot." not in own


def test_as_sources_replaces_only_model_memories_whose_turns_are_kept(ingested, embedder):
    data_dir, fact = ingested
    with Mirix(settings=Settings(data_dir=data_dir), embedder=embedder) as mx:
        turns = {m.source_ids[-1]: m for m in mx.list(user_id="ada", memory_types=["episodic"], limit=50)}
        fact_hit = SearchHit(text=fact.search_text(), score=0.7, memory=fact, method="hybrid")
        filler_hit = SearchHit(text=turns["f0"].search_text(), score=0.9, memory=turns["f0"], method="hybrid")
        managers = {"semantic_memory_manager"}

        out = as_sources([filler_hit, fact_hit], mx.store, "ada", managers)
        assert [h.memory.id for h in out] == [turns["f0"].id, turns["m1"].id]  # in the fact's place
        assert out[1].score == 0.7 and out[1].text == turns["m1"].search_text()

        m1_hit = SearchHit(text=turns["m1"].search_text(), score=0.9, memory=turns["m1"], method="hybrid")
        assert [h.memory.id for h in as_sources([m1_hit, fact_hit], mx.store, "ada", managers)] == [turns["m1"].id]

        # not a model's actor (the rules', a caller's): shown as it is
        assert as_sources([fact_hit], mx.store, "ada", {"semantic_memory_manager_rules"}) == [fact_hit]
        # a model memory whose turns memory does not hold: shown as it is
        orphan = fact.model_copy(update={"source_ids": ["gone"]})
        orphan_hit = SearchHit(text=orphan.search_text(), score=0.5, memory=orphan, method="hybrid")
        assert as_sources([orphan_hit], mx.store, "ada", managers) == [orphan_hit]


def test_as_keys_gives_the_cited_turns_the_model_memorys_rank_and_no_more_room(ingested, embedder):
    data_dir, fact = ingested
    with Mirix(settings=Settings(data_dir=data_dir), embedder=embedder) as mx:
        turns = {m.source_ids[-1]: m for m in mx.list(user_id="ada", memory_types=["episodic"], limit=50)}
        hit = lambda m, score: SearchHit(text=m.search_text(), score=score, memory=m, method="hybrid")  # noqa: E731
        fact_hit = hit(fact, 0.7)
        managers = {"semantic_memory_manager"}

        hits = [hit(turns["f0"], 0.9), fact_hit, hit(turns["f1"], 0.5), hit(turns["f2"], 0.4)]
        assert [h.memory.id for h in as_sources(hits, mx.store, "ada", managers)] == \
            [turns[k].id for k in ("f0", "m1", "f1", "f2")]
        keys = as_keys(hits, mx.store, "ada", managers)
        assert [h.memory.id for h in keys] == [turns[k].id for k in ("f0", "m1", "f1")]  # f2 gives way
        assert keys[1].score == 0.7

        # the cited turn already shown: nothing added, nothing cut
        hits = [hit(turns["m1"], 0.9), fact_hit, hit(turns["f1"], 0.5)]
        assert [h.memory.id for h in as_keys(hits, mx.store, "ada", managers)] == [turns["m1"].id, turns["f1"].id]
        # no model memory among the hits, or one whose turns memory does not hold: the hits as they are
        assert as_keys(hits[::2], mx.store, "ada", managers) == hits[::2]
        orphan_hit = hit(fact.model_copy(update={"source_ids": ["gone"]}), 0.5)
        assert as_keys([orphan_hit], mx.store, "ada", managers) == [orphan_hit]


def test_with_keys_the_chat_is_handed_turns_only_and_no_more_memories_than_besides_the_model(ingested, embedder):
    data_dir, fact = ingested
    own_prompt, own_ids = chat_turn(data_dir, embedder, "own_words")
    assert fact.id in own_ids
    keys_prompt, keys_ids = chat_turn(data_dir, embedder, "keys")
    assert fact.id not in keys_ids and FACT not in keys_prompt
    assert len(keys_ids) == len(own_ids) - 1
    with Mirix(settings=Settings(data_dir=data_dir), embedder=embedder) as mx:
        actors = mx.store.inserted_as(keys_ids, user_id="ada")
    assert len(actors) == len(keys_ids) and "semantic_memory_manager" not in actors.values()


def test_a_model_memory_is_shown_the_turn_of_its_own_input_when_a_caller_reuses_message_ids(ingested, embedder):
    data_dir, fact = ingested
    client = ScriptedChatCompletionClient(script)
    with Mirix(settings=Settings(data_dir=data_dir), embedder=embedder, model_client=client) as mx:
        # a later add whose message carries the id m1 again; the model writes nothing from it
        mx.add([{"role": "user", "name": "Ada", "id": "m1", "content": "My sister Eve is a chef."}],
               user_id="ada", occurred_at=WHEN + timedelta(days=2), wait=True)
        both = [m for m in mx.list(user_id="ada", memory_types=["episodic"], limit=50) if "m1" in m.source_ids]
        assert len(both) == 2
        fact_hit = SearchHit(text=fact.search_text(), score=0.7, memory=fact, method="hybrid")
        shown = as_sources([fact_hit], mx.store, "ada", {"semantic_memory_manager"})
    assert len(shown) == 1 and PILOT["content"] in shown[0].text


def test_with_none_the_chat_is_handed_no_model_memory_nor_its_turns(ingested, embedder):
    data_dir, fact = ingested
    own_prompt, own_ids = chat_turn(data_dir, embedder, "own_words")
    none_prompt, none_ids = chat_turn(data_dir, embedder, "none")
    assert FACT in own_prompt and FACT not in none_prompt
    assert none_ids == [i for i in own_ids if i != fact.id]  # the other hits as they were, none added
    with Mirix(settings=Settings(data_dir=data_dir, llm_memories_shown="none"), embedder=embedder) as mx:
        assert fact.id in [h.memory.id for h in mx.search("Tom job sky", user_id="ada", limit=20)]  # search keeps it
