"""One search default everywhere: every path that builds a reader's context (SDK, REST `/search` and
`/context`, chat's coarse retrieval, AutoGen's `MirixMemory`, MCP `search_memory`, `mirix search`) gives
the turns said around the best matches as `settings.search_context` says, and `mirix eval locomo`
measures that same setting by default.

The paths are run with the setting at 1 (`MIRIX_SEARCH_CONTEXT`), so each can be seen to follow it;
the engine runs without an embedder (full text only), so what matches is exactly the turns that share
a word with the query: the reply next to the matching question can only come as context."""

from __future__ import annotations

import asyncio
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from mirix_py.engine import Mirix
from mirix_py.settings import SEARCH_CONTEXT, Settings

T0 = datetime(2023, 8, 14, 14, 24, tzinfo=timezone.utc)
PARTY = [
    ("Caroline", "How was your daughter's birthday party? Who played at the concert?"),
    ("Melanie", "It was Matt Patterson, he is so talented! His voice and songs were amazing."),
    ("Caroline", "Wow, that sounds like an unforgettable evening."),
]
LATER = [("Melanie", "I started a new pottery class on Tuesday evenings.")]
# later talks that share one word with the question: they fill chat's per-type slots, so the reply can
# only reach a reader as the context of the question that matched
FILLERS = ["I bought a birthday card for my aunt.", "The birthday cake had lemon icing.",
           "We sang at my nephew's birthday.", "The concert hall downtown is being repainted.",
           "My cousin played chess all afternoon.", "A birthday picnic is planned for June.",
           "The concert tickets sold out in an hour.", "He played the piano at the recital."]
QUESTION = "Who played at the birthday concert?"
ANSWER = "Matt Patterson"


def remember(mx: Mirix) -> None:
    talks = [(PARTY, T0), (LATER, T0 + timedelta(days=3))]
    talks += [([("Melanie", text)], T0 + timedelta(days=4 + i)) for i, text in enumerate(FILLERS)]
    for turns, start in talks:
        messages = [{"role": "user", "name": who, "content": text, "occurred_at": start + timedelta(seconds=i)}
                    for i, (who, text) in enumerate(turns)]
        assert mx.add(messages, user_id="mel", occurred_at=start).status.value == "processed"


@pytest.fixture
def mx(tmp_path, monkeypatch):
    """An engine whose search context is 1, as a deployment sets it."""
    monkeypatch.setenv("MIRIX_SEARCH_CONTEXT", "1")
    engine = Mirix(tmp_path / "data", embedder=None)
    remember(engine)
    yield engine
    engine.close()


def answer_is_context_of_match(hits) -> bool:
    """The reply holding the answer came as context of the turn that matched."""
    by_id = {h.memory.id: h for h in hits}
    return any(ANSWER in h.text and h.context_for in by_id and "concert" in by_id[h.context_for].text for h in hits)


def ids(hits) -> list[tuple[str, str | None]]:
    return [(h.memory.id, h.context_for) for h in hits]


def test_without_the_setting_every_search_uses_the_named_default(tmp_path, monkeypatch):
    monkeypatch.delenv("MIRIX_SEARCH_CONTEXT", raising=False)
    assert Settings().search_context == Settings.from_env().search_context == SEARCH_CONTEXT
    engine = Mirix(tmp_path / "data", embedder=None)
    try:
        remember(engine)
        assert engine.chat_flow.context == SEARCH_CONTEXT
        assert ids(engine.search(QUESTION, user_id="mel", limit=1)) == \
            ids(engine.search(QUESTION, user_id="mel", limit=1, context=SEARCH_CONTEXT))
    finally:
        engine.close()


def test_sdk_search_follows_the_setting_and_a_call_overrides_it(mx):
    assert mx.settings.search_context == 1 and mx.chat_flow.context == 1
    hits = mx.search(QUESTION, user_id="mel", limit=1)
    assert answer_is_context_of_match(hits)
    plain = mx.search(QUESTION, user_id="mel", limit=1, context=0)
    assert [h.context_for for h in plain] == [None] and ANSWER not in plain[0].text


def test_a_bad_setting_is_refused(monkeypatch):
    from pydantic import ValidationError

    monkeypatch.setenv("MIRIX_SEARCH_CONTEXT", "-1")
    with pytest.raises(ValidationError, match="search_context"):
        Settings.from_env()


def test_async_search_has_the_same_default(mx):
    from mirix_py.facade.async_mirix import AsyncMirix

    wrapper = AsyncMirix.__new__(AsyncMirix)
    wrapper.sync = mx  # the coroutine facade over this engine
    assert answer_is_context_of_match(asyncio.run(wrapper.search(QUESTION, user_id="mel", limit=1)))


def test_chat_coarse_retrieval_and_context_endpoint_hold_the_neighbouring_turn(mx):
    from mirix_py.agents.chat import offline_topics
    from mirix_py.integrations.context import retrieve_context

    topics = offline_topics(QUESTION, datetime.now(timezone.utc))
    retrieval = mx.chat_flow.retrieve("mel", QUESTION, topics, mx.core_memory(user_id="mel"))
    assert answer_is_context_of_match(retrieval.hits)
    context = retrieve_context(mx, "mel", QUESTION, max_items=1)
    assert answer_is_context_of_match(context.hits) and ANSWER in context.render()
    assert sum(1 for h in context.hits if h.context_for is None) == 1  # max_items counts matches


def test_rest_search_and_context(mx):
    from fastapi.testclient import TestClient

    from mirix_py.server import create_app

    client = TestClient(create_app(mx, auth=False))
    ctx = client.post("/v1/users/mel/context", json={"message": QUESTION, "max_items": 1})
    assert ctx.status_code == 200, ctx.text
    hits = ctx.json()["hits"]
    match = next(h for h in hits if h["context_for"] is None)
    assert any(ANSWER in h["text"] and h["context_for"] == match["memory"]["id"] for h in hits)
    assert ANSWER in ctx.json()["prompt"]
    found = client.post("/v1/users/mel/search", json={"query": QUESTION, "limit": 1}).json()
    assert any(ANSWER in h["text"] and h["context_for"] for h in found)
    plain = client.post("/v1/users/mel/search", json={"query": QUESTION, "limit": 1, "context": 0}).json()
    assert [h["context_for"] for h in plain] == [None]
    assert client.post("/v1/users/mel/search", json={"query": QUESTION, "context": -1}).status_code == 422


def test_autogen_memory_puts_the_neighbouring_turn_in_the_model_context(mx):
    from autogen_core.model_context import BufferedChatCompletionContext
    from autogen_core.models import UserMessage

    from mirix_py.integrations.autogen import MirixMemory

    async def main():
        memory = MirixMemory("mel", mx=mx, max_items=1)
        model_context = BufferedChatCompletionContext(buffer_size=10)
        await model_context.add_message(UserMessage(content=QUESTION, source="user"))
        result = await memory.update_context(model_context)
        messages = await model_context.get_messages()
        queried = await memory.query(QUESTION, limit=1)
        return result, messages, queried

    result, messages, queried = asyncio.run(main())
    assert any(ANSWER in str(m.content) for m in result.memories.results)
    assert any(ANSWER in str(m.content) for m in messages)
    assert any(ANSWER in str(m.content) for m in queried.results)


def test_mcp_search_memory_returns_the_neighbouring_turn(mx):
    pytest.importorskip("mcp")
    from mirix_py.integrations.mcp_server import build_mcp_server

    server = build_mcp_server(mx, users=["mel"])
    result = asyncio.run(server.call_tool("search_memory", {"query": QUESTION, "limit": 1}))
    payload = result.structured_content if getattr(result, "structured_content", None) is not None else None
    if isinstance(payload, dict) and set(payload) == {"result"}:
        payload = payload["result"]
    if payload is None:
        payload = json.loads(result.content[0].text)
    match = next(h for h in payload if "context_for" not in h)
    assert any(ANSWER in h["text"] and h.get("context_for") == match["id"] for h in payload)


def test_cli_search_lists_context_turns_after_their_match(mx):
    from typer.testing import CliRunner

    from mirix_py.cli.commands import app

    data = str(mx.settings.data_dir)
    mx.close()
    runner = CliRunner()
    env = {"MIRIX_EMBEDDER": "none", "MIRIX_SEARCH_CONTEXT": "1"}
    found = runner.invoke(app, ["search", QUESTION, "-u", "mel", "-n", "1", "--json", "-d", data], env=env)
    assert found.exit_code == 0, found.output
    hits = json.loads(found.stdout)
    assert hits[0]["context_for"] is None and any(ANSWER in h["text"] and h["context_for"] == hits[0]["memory"]["id"]
                                                  for h in hits[1:])
    table = runner.invoke(app, ["search", QUESTION, "-u", "mel", "-n", "1", "-d", data], env=env)
    assert table.exit_code == 0, table.output
    assert "turn(s) of context" in table.stdout and "│ context" in table.stdout
    plain = runner.invoke(app, ["search", QUESTION, "-u", "mel", "-n", "1", "--context", "0", "--json", "-d", data],
                          env=env)
    assert [h["context_for"] for h in json.loads(plain.stdout)] == [None]


def test_eval_locomo_measures_the_sdk_default(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    import mirix_py.eval.locomo_eval as locomo_eval
    from mirix_py.cli.commands import app
    from mirix_py.eval.locomo_eval import LocomoEvalConfig

    assert LocomoEvalConfig(data=tmp_path / "x.json").context == Settings().search_context == SEARCH_CONTEXT
    seen: list[int] = []

    def fake_run(config, **kwargs):
        seen.append(config.context)
        raise ValueError("stop here")

    monkeypatch.setattr(locomo_eval, "run_locomo", fake_run)
    data = Path(__file__).parent / "fixtures" / "locomo_mini.json"
    run = ["eval", "locomo", "--data", str(data), "--out", str(tmp_path / "out"), "--cache-dir", str(tmp_path / "c")]
    for env, flag in (({}, []), ({"MIRIX_SEARCH_CONTEXT": "2"}, []), ({"MIRIX_SEARCH_CONTEXT": "2"}, ["--context", "0"])):
        monkeypatch.delenv("MIRIX_SEARCH_CONTEXT", raising=False)
        result = CliRunner().invoke(app, run + flag, env={"MIRIX_EMBEDDER": "none", **env})
        assert "stop here" in result.output, result.output
    assert seen == [SEARCH_CONTEXT, 2, 0]


def test_whole_hits_comes_from_the_environment_and_a_bad_value_is_refused(tmp_path, monkeypatch):
    from pydantic import ValidationError

    from mirix_py.text.small_talk import WHOLE_HITS

    monkeypatch.delenv("MIRIX_WHOLE_HITS", raising=False)
    assert Settings.from_env().whole_hits == WHOLE_HITS
    monkeypatch.setenv("MIRIX_WHOLE_HITS", "100")
    engine = Mirix(tmp_path / "data", embedder=None)
    try:
        assert engine.searcher.whole_hits == 100 and engine.describe()["whole_hits"] == 100
    finally:
        engine.close()
    monkeypatch.setenv("MIRIX_WHOLE_HITS", "-1")
    with pytest.raises(ValidationError, match="whole_hits"):
        Settings.from_env()
