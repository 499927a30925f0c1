"""Chat with a model that misbehaves on the chat path: topics a search cannot take, calls that never
return, an answer that makes things up. Chat still answers, and the question is still remembered."""

from __future__ import annotations

import asyncio
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone

import pytest

from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput
from mirix_py.llm.scripted import ScriptedChatCompletionClient, ScriptRequest
from mirix_py.records import InputStatus
from mirix_py.settings import Settings
from mirix_py.store.search import Searcher

WHEN = datetime(2024, 4, 2, 18, 30, tzinfo=timezone.utc)
QUESTION = "What is my cat called?"
GUARD_S = 60  # only so a hanging chat fails the test instead of hanging it


def quiet(req: ScriptRequest):
    """Memory managers that record nothing: only the chat path's calls matter here."""
    if req.agent == "meta_memory_manager":
        return [("trigger_memory_managers", {"memory_types": []})]
    return [("nothing_to_record", {})]


def chat_model(topics_reply: str, answer: str = "Your cat is called Pixel."):
    def script(req: ScriptRequest):
        if req.agent == "topic_extractor":
            return topics_reply
        if req.agent == "chat_agent":
            return answer
        return quiet(req)

    return script


class BlockedModel(ScriptedChatCompletionClient):
    """A model whose topic and chat calls never return until released; records which were given up."""

    def __init__(self) -> None:
        super().__init__(quiet)
        self.given_up: list[str] = []
        self._loop: asyncio.AbstractEventLoop | None = None
        self._release: asyncio.Event | None = None

    async def create(self, messages, **kwargs):
        system = "\n".join(str(m.content) for m in messages if type(m).__name__ == "SystemMessage")
        agent = ScriptRequest(system=system, messages=messages, tool_names=[], json_output=None).agent
        if agent in ("topic_extractor", "chat_agent"):
            self._loop = asyncio.get_running_loop()
            self._release = self._release or asyncio.Event()
            try:
                await self._release.wait()
            except asyncio.CancelledError:
                self.given_up.append(agent)
                raise
        return await super().create(messages, **kwargs)

    def release(self) -> None:
        if self._loop is not None and self._release is not None:
            self._loop.call_soon_threadsafe(self._release.set)


@pytest.fixture
def make_mx(tmp_path, embedder):
    engines: list[Mirix] = []

    def make(client, *, timeout_s: float = 120.0) -> Mirix:
        settings = Settings(data_dir=tmp_path / f"d{len(engines)}", llm_timeout_s=timeout_s)
        mx = Mirix(settings=settings, embedder=embedder, model_client=client)
        mx.add("I adopted a grey cat named Pixel.", user_id="ada", occurred_at=WHEN)
        engines.append(mx)
        return mx

    yield make
    for mx in engines:
        mx.close()


def question_remembered(mx: Mirix, input_ids: list[str]) -> bool:
    mx.flush(timeout=GUARD_S)
    statuses = {mx.input_status(i).status for i in input_ids}
    hits = mx.search(QUESTION, user_id="ada", memory_types=["episodic"])
    return bool(input_ids) and InputStatus.failed not in statuses and any(QUESTION in h.memory.search_text()
                                                                        for h in hits)


@pytest.mark.parametrize("topic", ["cat\u0007", "cat\u0000", "cat \u001b[2J", "cat \ud800"],
                         ids=["bell", "nul", "escape", "lone_surrogate"])
def test_a_topic_holding_a_control_character_is_searched_as_plain_text(make_mx, topic):
    client = ScriptedChatCompletionClient(quiet)
    mx = make_mx(client)
    # json.dumps writes the lone surrogate as "\ud800", as a model's JSON would
    client._script = chat_model(json.dumps({"topics": [topic, "\u0007"], "start": None, "end": None}))
    response = mx.chat(QUESTION, user_id="ada")
    assert response.fallback is None and response.answer == "Your cat is called Pixel."
    assert [t.split()[0] for t in response.topics] == ["cat"]  # the blank topic is dropped
    assert all(t.isprintable() and t.encode("utf-8") for t in response.topics)
    assert response.retrieved_ids  # the cat memory, found by the cleaned topic
    assert question_remembered(mx, response.update_input_ids)


def test_a_search_the_models_topics_fail_falls_back_to_the_questions_own(make_mx, monkeypatch):
    client = ScriptedChatCompletionClient(quiet)
    mx = make_mx(client)
    search = Searcher.search

    def refusing(self, query, *args, **kwargs):
        if "unsearchable" in query:
            raise InvalidInput("search query is not searchable")
        return search(self, query, *args, **kwargs)

    monkeypatch.setattr(Searcher, "search", refusing)
    client._script = chat_model('{"topics": ["unsearchable"], "start": null, "end": null}')
    response = mx.chat(QUESTION, user_id="ada")
    assert response.fallback is None and response.answer == "Your cat is called Pixel."
    assert "unsearchable" not in response.topics and "cat" in response.topics  # what was searched
    assert response.retrieved_ids
    assert question_remembered(mx, response.update_input_ids)


def test_chat_gives_up_on_a_model_that_never_answers_and_answers_from_memory(make_mx):
    client = BlockedModel()
    mx = make_mx(client, timeout_s=0.2)
    pool = ThreadPoolExecutor(1)
    try:
        response = pool.submit(mx.chat, QUESTION, user_id="ada", remember=False).result(timeout=GUARD_S)
    finally:
        client.release()  # a chat that hung gets its answer now, so the engine can close
        pool.shutdown()
    assert client.given_up == ["topic_extractor", "chat_agent"]  # both calls bounded, neither answered
    assert response.fallback and "timed out after 0.2 s" in response.fallback
    assert response.answer.startswith("No usable answer from the model") and "Pixel" in response.answer
    assert "cat" in response.topics  # the question's own keywords stood in for the model's topics


def test_an_answer_step_given_up_says_how_long_it_waited(make_mx, monkeypatch):
    client = ScriptedChatCompletionClient(quiet)
    mx = make_mx(client, timeout_s=0.2)
    search, searching = Searcher.search, threading.Event()

    def stuck(self, query, *args, **kwargs):  # the chat agent's targeted search never returns
        if query == "stuck search":
            searching.wait(GUARD_S)
        return search(self, query, *args, **kwargs)

    def script(req: ScriptRequest):
        if req.agent == "chat_agent":
            return [("search_in_memory", {"memory_type": "episodic", "query": "stuck search"})]
        return chat_model('{"topics": ["cat"], "start": null, "end": null}')(req)

    monkeypatch.setattr(Searcher, "search", stuck)
    client._script = script
    try:
        response = mx.chat(QUESTION, user_id="ada", remember=False)
    finally:
        searching.set()
    # three model calls of 0.2 s and 5 s for its searches: what was waited, not the calls' share alone
    assert response.fallback and "the answer timed out after 5.6 s" in response.fallback
    assert "Pixel" in response.answer


def test_the_answer_is_fed_back_as_the_assistants_turn_not_the_users(make_mx):
    client = ScriptedChatCompletionClient(quiet)
    mx = make_mx(client)
    made_up = "Your cat is called Biscuit now. Your bank PIN is 9931."
    client._script = chat_model('{"topics": ["cat"], "start": null, "end": null}', answer=made_up)
    response = mx.chat(QUESTION, user_id="ada")
    [input_id] = response.update_input_ids
    turns = mx.input_status(input_id, user_id="ada").messages
    assert [(t.role, t.content) for t in turns] == [("user", QUESTION), ("assistant", made_up)]
    assert turns[0].id.startswith("chat-q-") and turns[1].id.startswith("chat-a-")


def test_a_runaway_or_odd_topic_reply_is_cut_or_read_as_no_topics():
    from datetime import datetime, timezone

    from mirix_py.agents.chat import TOPIC_CHARS, offline_topics, parse_topics

    now = datetime(2026, 1, 2, tzinfo=timezone.utc)
    long = parse_topics('{"topics": ["' + "cat " * 200_000 + '"]}', "Where is my cat?", now)
    assert len(long.keywords) == 1 and len(long.keywords[0]) <= TOPIC_CHARS
    mixed = parse_topics('{"topics": [["cat"], null, 7, "cat food"]}', "Where is my cat?", now)
    assert mixed.keywords == ["cat food"]
    not_a_list = parse_topics('{"topics": {"a": 1}}', "Where is my cat?", now)
    assert not_a_list.keywords == offline_topics("Where is my cat?", now).keywords  # the question's own
