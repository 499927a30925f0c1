"""The chat flow: topics, coarse retrieval over all six types, targeted search, citations."""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone

import pytest

from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput
from mirix_py.llm.scripted import ScriptedChatCompletionClient
from mirix_py.records import InputStatus

WHEN = datetime(2024, 4, 2, 18, 30, tzinfo=timezone.utc)
# the planted card number, in any spacing; not "4111" alone, which a random hex memory id can hold
CARD = re.compile(r"4111[ -]?1111")
FACTS = [
    {"role": "user", "name": "Ada", "id": "m1", "content": "My name is Ada and I love bouldering."},
    {"role": "user", "name": "Ada", "id": "m2", "content": "My brother Tom is a pilot."},
    {"role": "user", "name": "Ada", "id": "m3", "content": "My card number is 4111 1111 1111 1111"},
]


@pytest.fixture
def offline_mx(tmp_path, embedder):
    mx = Mirix(tmp_path / "off", embedder=embedder)
    mx.add(FACTS, user_id="ada", occurred_at=WHEN)
    yield mx
    mx.close()


def test_offline_chat_returns_cited_memories_and_says_offline(offline_mx):
    response = offline_mx.chat("What does Tom do for a living?", user_id="ada")
    assert response.mode == "offline" and response.answer.startswith("Offline mode")
    assert response.memory_ids and all(i in response.answer for i in response.memory_ids)
    assert any("pilot" in line for line in response.answer.splitlines())
    assert "tom" in [t.lower() for t in response.topics]
    assert not CARD.search(response.answer)
    assert response.usage.llm_calls == 0
    offline_mx.flush()
    fed = offline_mx.input_status(response.update_input_ids[0])
    assert fed.status.value == "processed" and fed.messages[0].content == "What does Tom do for a living?"


def test_offline_chat_understands_a_time_range(offline_mx):
    response = offline_mx.chat("what happened last week?", user_id="ada", remember=False)
    assert response.start is not None and response.end is not None and response.update_input_ids == []


def test_chat_rejects_bad_input(offline_mx):
    with pytest.raises(InvalidInput):
        offline_mx.chat("  ", user_id="ada")
    with pytest.raises(InvalidInput):
        offline_mx.chat("hi", user_id="")
    with pytest.raises(InvalidInput):
        offline_mx.chat("hi", user_id="ada", history=["not a dict"])


def test_chat_refuses_a_history_role_and_a_message_memory_cannot_keep_before_any_work(tmp_path, embedder):
    from mirix_py.settings import Settings

    with Mirix(settings=Settings(data_dir=tmp_path / "small", max_input_chars=200), embedder=embedder) as mx:
        with pytest.raises(InvalidInput, match="history role 'robot'"):
            mx.chat("What does Tom do?", user_id="ada", history=[{"role": "robot", "content": "beep"}])
        long = "What does Tom do? " * 20
        with pytest.raises(InvalidInput, match="over the limit of 200 .*remember=False"):
            mx.chat(long, user_id="ada")
        assert all(mx.inputs.by_status(status, user_id="ada") == [] for status in InputStatus)  # nothing logged
        assert mx.chat(long, user_id="ada", remember=False).update_input_ids == []
        assert mx.list(user_id="ada") == []


def test_an_answer_too_long_to_keep_with_its_question_leaves_the_question_kept(tmp_path, embedder):
    """The model's long answer would put the exchange over what one input may hold: the question is
    fed back alone, instead of the chat failing after it answered."""
    from mirix_py.settings import Settings

    def script(req):
        if req.agent == "topic_extractor":
            return json.dumps({"topics": ["Tom"], "start": None, "end": None})
        if req.agent == "chat_agent":
            return "Tom flies planes. " * 30
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["episodic"]})]
        return [("nothing_to_record", {"reason": "test"})]

    settings = Settings(data_dir=tmp_path / "llm", max_input_chars=300)
    with Mirix(settings=settings, embedder=embedder, model_client=ScriptedChatCompletionClient(script)) as mx:
        response = mx.chat("What does Tom do?", user_id="ada")
        assert response.answer.startswith("Tom flies planes") and response.update_input_ids
        mx.flush()
        fed = mx.input_status(response.update_input_ids[0])
        assert [m.content for m in fed.messages] == ["What does Tom do?"]


def chat_script(search: bool):
    def script(req):
        if req.agent == "topic_extractor":
            return json.dumps({"topics": ["Tom", "job"], "start": None, "end": None})
        if req.agent == "chat_agent":
            if search and "search_in_memory" in req.tool_names and "(no matching" not in req.last_text \
                    and not any(getattr(m, "type", "") == "FunctionExecutionResultMessage" for m in req.messages):
                return [("search_in_memory", {"memory_type": "semantic", "query": "Tom pilot", "method": "bm25"})]
            ids = re.findall(r"\[(m[0-9]+)\][^\n]*pilot",
                             req.system + " ".join(str(m.content) for m in req.messages))
            return f"Tom is a pilot [{ids[0]}]." if ids else "I don't know."
        if req.agent == "meta_memory_manager":
            return [("trigger_memory_managers", {"memory_types": ["episodic"]})]
        if req.agent == "episodic_memory_manager":
            return [("insert_episodic", {"summary": "Ada asked about Tom's job", "actor": "Ada"})]
        raise AssertionError(req.agent)
    return script


@pytest.fixture
def llm_mx(tmp_path, embedder):
    mx = Mirix(tmp_path / "llm", embedder=embedder)  # offline ingestion of the facts first
    mx.add(FACTS, user_id="ada", occurred_at=WHEN)
    mx.close()
    engines = []

    def make(search: bool):
        client = ScriptedChatCompletionClient(chat_script(search))
        engine = Mirix(tmp_path / "llm", embedder=embedder, model_client=client)
        engines.append(engine)
        return engine, client

    yield make
    for engine in engines:
        engine.close()


def test_llm_chat_two_rounds_cites_and_feeds_back(llm_mx):
    mx, client = llm_mx(search=False)
    response = mx.chat("What does Tom do?", user_id="ada")
    assert response.mode == "llm" and "pilot" in response.answer
    assert response.topics == ["Tom", "job"]
    # the turn that says it, in Ada's words: the rules' fact drawn from that turn alone stays out of the prompt
    assert len(response.memory_ids) == 1 and response.memory_ids[0].startswith("epi_")
    assert response.usage.llm_calls == 2 and response.usage.sequential_rounds == 2
    chat_request = next(r for r in client.requests if r.agent == "chat_agent")
    assert "name: Ada" in chat_request.system  # core memory is always in the prompt
    tom_facts = [m.id for m in mx.list(user_id="ada", memory_types=["semantic"]) if "m2" in m.source_ids]
    assert tom_facts and not any(i in chat_request.system for i in tom_facts)
    # each memory cited by its reference in the turn, not its id; the answer's citation is the id
    cited_by = re.findall(r"^\[([^\]]+)\] ", chat_request.system, re.M)
    assert cited_by and all(re.fullmatch(r"m[0-9]+", c) for c in cited_by) and "m1" in cited_by
    assert response.memory_ids[0] in response.answer and "[m" not in response.answer
    assert not CARD.search(chat_request.system)  # a high-sensitivity vault item never enters a prompt
    mx.flush(timeout=60)
    assert any("asked about Tom" in m.summary for m in mx.list(user_id="ada", memory_types=["episodic"]))
    assert mx.stats(user_id="ada")["llm_usage"]["chat"]["llm_calls"] == 2


def test_llm_chat_targeted_search(llm_mx):
    mx, client = llm_mx(search=True)
    response = mx.chat("What does Tom do?", user_id="ada", remember=False)
    assert "pilot" in response.answer and response.memory_ids
    assert [r.agent for r in client.requests].count("chat_agent") == 2  # tool call, then the answer
    assert response.usage.llm_calls == 3


def test_an_answer_written_with_html_character_references_reaches_the_reader_as_text(tmp_path, embedder):
    """A local server's reply carries "&#39;" where the prompt holds "'": the user reads the character."""
    def script(req):
        if req.agent == "topic_extractor":
            return json.dumps({"topics": ["Tom"], "start": None, "end": None})
        if req.agent == "chat_agent":
            return "I&#39;m sure Tom is a pilot &amp; flies for &quot;Air Ada&quot;."
        raise AssertionError(req.agent)

    with Mirix(tmp_path / "llm", embedder=embedder) as mx:  # the facts ingested offline first
        mx.add(FACTS[:2], user_id="ada", occurred_at=WHEN)
    with Mirix(tmp_path / "llm", embedder=embedder, model_client=ScriptedChatCompletionClient(script)) as mx:
        response = mx.chat("What does Tom do?", user_id="ada", remember=False)
    assert response.mode == "llm" and response.answer == 'I\'m sure Tom is a pilot & flies for "Air Ada".'


def test_a_character_reference_the_model_was_shown_stays_as_written():
    from mirix_py.agents.chat import decoded_references

    shown = "Retrieved memories:\n- [epi_1] Ada wrote the markup &lt;b&gt; in her notes"
    assert decoded_references("She wrote &lt;b&gt; &#39;bold&#39;", shown) == "She wrote &lt;b&gt; 'bold'"
    assert decoded_references("Tom &amp Ada, 5 & 6", shown) == "Tom &amp Ada, 5 & 6"  # no reference: as sent


def test_a_long_memory_enters_the_answer_as_the_lines_about_the_question(tmp_path, embedder):
    filler = " ".join(f"Item {i} of the agenda covers the office plants and the kitchen rota." for i in range(8))
    doc = f"Team notes\n\n{filler} The Heron launch moved to Friday 21 June. {filler}"
    with Mirix(tmp_path / "long", embedder=embedder) as mx:
        mx.add([{"role": "user", "content": doc, "id": "doc1"}], user_id="ada", occurred_at=WHEN)
        (hit,) = mx.search("Heron launch", user_id="ada")  # one long episode: the whole message
        assert len(hit.text.split()) > 200
        response = mx.chat("When is the Heron launch?", user_id="ada", remember=False)
        line = next(item for item in response.answer.split("\n- ") if hit.memory.id in item)
        assert "Friday 21 June" in line
        assert len(line.split()) < len(hit.text.split()) and "…" in line
        assert "21 June" in mx.get(hit.memory.id, user_id="ada").summary  # the record is whole


def test_every_reader_is_shown_each_day_once_with_its_memories_under_it(tmp_path, embedder):
    """The chat's prompt, an agent's context (`/context`, MirixMemory) and the memory tools group dated
    memories under their day: a day is stated once with the clock of its first memory, which the
    memories said at that minute leave to the heading."""
    import asyncio

    from mirix_py.integrations.context import retrieve_context
    from mirix_py.integrations.tools import memory_tools

    june = datetime(2024, 6, 9, 8, 15, tzinfo=timezone.utc)

    def script(req):
        if req.agent == "topic_extractor":
            return json.dumps({"topics": ["Tom", "pilot"], "start": None, "end": None})
        if req.agent == "chat_agent":
            return "Tom is a pilot."
        raise AssertionError(req.agent)

    with Mirix(tmp_path / "days", embedder=embedder) as mx:  # two turns on each of two days, offline
        mx.add([{"role": "user", "name": "Ada", "content": "Tom the pilot flew to Oslo."},
                {"role": "user", "name": "Ada", "content": "Tom the pilot loves Oslo."}], user_id="ada", occurred_at=WHEN)
        mx.add([{"role": "user", "name": "Ada", "content": "Tom the pilot flew to Rome."},
                {"role": "user", "name": "Ada", "content": "Tom the pilot loves Rome."}], user_id="ada", occurred_at=june)
        shown = {
            "context": retrieve_context(mx, "ada", "Tom the pilot").render(),
            "tool": asyncio.run(memory_tools(mx, "ada")[0]("Tom the pilot", 10)),
        }
    client = ScriptedChatCompletionClient(script)
    with Mirix(tmp_path / "days", embedder=embedder, model_client=client) as mx:
        mx.chat("Where did Tom the pilot fly?", user_id="ada", remember=False)
    shown["chat"] = next(r for r in client.requests if r.agent == "chat_agent").system
    for reader, text in shown.items():
        lines = text.splitlines()
        for day in ("2 April 2024", "9 June 2024"):
            assert text.count(day) == 1, (reader, text)
        april = lines.index("2 April 2024, 18:30:")
        june_at = lines.index("9 June 2024, 08:15:")
        under = {"Oslo": april, "Rome": june_at}
        for place, heading in under.items():  # each turn under its own day, its clock the heading's
            at = [i for i, line in enumerate(lines) if place in line and "Ada:" in line]
            assert len(at) == 2, (reader, text)
            other = june_at if heading == april else april
            assert all(heading < i and (i < other or other < heading) for i in at), (reader, text)
            assert not any(re.search(r"\[\d\d:\d\d\]", lines[i]) for i in at), (reader, text)


def test_a_models_search_with_a_day_alone_searches_that_day_on_the_users_clock(tmp_path, embedder):
    """A model asked for "an ISO 8601 date" writes "2026-01-01": the tool said "start has no time
    zone" and found nothing. A day alone is that whole day in MIRIX_TIMEZONE's zone."""
    from mirix_py.settings import Settings

    settings = Settings(data_dir=tmp_path / "d", timezone="America/Los_Angeles")
    with Mirix(settings=settings, embedder=embedder) as mx:
        mx.add("I cooked lasagna for Priya tonight.", user_id="maya", occurred_at="2026-01-01T23:30:00-08:00")
        mx.add("We had lasagna at the party.", user_id="maya", occurred_at="2026-01-02T12:00:00-08:00")
        search_in_memory = mx.readers.side("maya").chat._search_fn("maya", [])
        found = search_in_memory("episodic", "lasagna", "bm25", start="2026-01-01", end="2026-01-01")
        later = search_in_memory("episodic", "lasagna", "bm25", start="2026-01-02T00:00")
    assert "Priya" in found and "party" not in found
    assert "party" in later and "Priya" not in later
