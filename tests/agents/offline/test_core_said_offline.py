"""The offline rules date each core line on the clock of the message that said it, so a user far from
UTC reads the day they said it ("(said 1 January 2026)" for 23:30 on 1 January in Los Angeles) in the
chat's prompt, `/context` and the memory tools, as the episode of the same message states it."""

from __future__ import annotations

import asyncio
import json

import pytest

from mirix_py.engine import Mirix
from mirix_py.integrations.context import retrieve_context
from mirix_py.integrations.tools import memory_tools
from mirix_py.llm.scripted import ScriptedChatCompletionClient
from mirix_py.settings import Settings

LA = "America/Los_Angeles"
LATE_ON_NEW_YEARS_DAY = "2026-01-02T07:30:00Z"  # 23:30 on 1 January in Los Angeles


@pytest.fixture
def mx_utc(tmp_path, embedder):
    """An engine whose user's zone is not set (MIRIX_TIMEZONE unset): UTC unless a time carries its offset."""
    with Mirix(settings=Settings(data_dir=tmp_path / "utc"), embedder=embedder) as engine:
        yield engine


def _chat_prompt(settings: Settings, embedder, user: str, question: str) -> str:
    """The system prompt a model answering `question` is given (its core memory in it)."""
    def script(req):
        if req.agent == "topic_extractor":
            return json.dumps({"topics": ["job"], "start": None, "end": None})
        if req.agent == "chat_agent":
            return "You work as a nurse."
        raise AssertionError(req.agent)

    client = ScriptedChatCompletionClient(script)
    with Mirix(settings=settings, embedder=embedder, model_client=client) as mx:
        mx.chat(question, user_id=user, remember=False)
    return next(r for r in client.requests if r.agent == "chat_agent").system


def test_a_line_said_late_in_los_angeles_reads_that_day_wherever_the_block_is_read(tmp_path, embedder):
    settings = Settings(data_dir=tmp_path / "d", timezone=LA)
    with Mirix(settings=settings, embedder=embedder) as mx:
        mx.add([{"role": "user", "content": "I work as a nurse."}], user_id="maya", occurred_at=LATE_ON_NEW_YEARS_DAY)
        (episode,) = mx.list(user_id="maya", memory_types=["episodic"])
        assert episode.search_text().startswith("[1 January 2026, 23:30]")
        assert retrieve_context(mx, "maya", "what is my job?").core == {"human": "works as a nurse (said 1 January 2026)"}
        read_core = memory_tools(mx, "maya")[2]
        assert asyncio.run(read_core()) == "[human] works as a nurse (said 1 January 2026)"
    prompt = _chat_prompt(settings, embedder, "maya", "What is my job?")
    assert "<human>\nworks as a nurse (said 1 January 2026)\n</human>" in prompt


def test_each_line_of_a_batch_is_dated_on_the_clock_of_its_own_message(mx_utc):
    mx_utc.add([{"role": "user", "content": "I work as a nurse."},
                   {"role": "user", "content": "I live in Lisbon.", "occurred_at": "2026-01-02T16:31:00+09:00"}],
                  user_id="maya", occurred_at="2026-01-01T23:30:00-08:00")
    block = mx_utc.core_memory(user_id="maya")["human"]
    assert block.said_offsets == {"works as a nurse": -480, "lives in Lisbon": 540}
    assert block.dated_lines() == ["lives in Lisbon (said 2 January 2026)", "works as a nurse (said 1 January 2026)"]


def test_a_held_line_keeps_its_clock_when_the_block_is_rewritten_and_a_removed_line_loses_its(mx_utc):
    mx_utc.add("I work as a nurse.", user_id="maya", occurred_at="2026-01-01T23:30:00-08:00")
    mx_utc.add("I live in Lisbon.", user_id="maya", occurred_at="2026-01-02T16:31:00+09:00")
    mx_utc.add("I work as a teacher now.", user_id="maya", occurred_at="2026-04-01T10:00:00+02:00")
    block = mx_utc.core_memory(user_id="maya")["human"]
    assert block.value.splitlines() == ["lives in Lisbon", "is a teacher"]
    assert block.said_offsets == {"lives in Lisbon": 540, "is a teacher": 120}
    assert block.dated_lines() == ["is a teacher (said 1 April 2026)", "lives in Lisbon (said 2 January 2026)"]


def test_without_a_zone_the_block_reads_in_utc_as_before(mx_utc):
    mx_utc.add("I work as a nurse.", user_id="maya", occurred_at=LATE_ON_NEW_YEARS_DAY)
    block = mx_utc.core_memory(user_id="maya")["human"]
    assert block.said_offsets == {}
    assert retrieve_context(mx_utc, "maya", "what is my job?").core == {
        "human": "works as a nurse (said 2 January 2026)"}
