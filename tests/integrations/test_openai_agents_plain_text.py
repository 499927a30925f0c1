"""MirixSession against the SDK's own SQLiteSession: a run whose user message or reply holds control
characters (a PDF's form feed, a terminal's colour codes) ends as it does there, the items come back
exactly as added and the memories are plain text; `session_settings` as SQLiteSession takes it."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agents import Agent, Runner, RunConfig, SQLiteSession, set_tracing_disabled
from agents.memory import SessionSettings
from test_openai_agents import ScriptedModel

from mirix_py.engine import Mirix
from mirix_py.integrations.openai_agents import MirixSession
from mirix_py.text.storable import CONTROL

set_tracing_disabled(True)  # nothing leaves the machine


@pytest.fixture
def mx(tmp_path, embedder):
    engine = Mirix(tmp_path / "data", embedder=embedder)
    yield engine
    engine.close()


def converse(session: Any, turns: list[tuple[str, str]], settings: SessionSettings | None = None) -> list[str]:
    """Run each (user message, scripted reply) on `session`; the final outputs."""
    replies = [reply for _, reply in turns]
    model = ScriptedModel(lambda items: replies.pop(0))
    agent = Agent(name="assistant", model=model)
    config = RunConfig(session_settings=settings) if settings else None
    return [asyncio.run(Runner.run(agent, text, session=session, run_config=config)).final_output
            for text, _ in turns]


def memory_texts(mx: Mirix) -> list[str]:
    return [m.search_text() for m in mx.list(user_id="ada", limit=100)]


TURNS = [("Summarise this:\nPage 1 text\x0cPage 2 text", "Build \x1b[31mFAILED\x1b[0m on both pages."),
         ("Thanks\x07", "You're welcome\x85")]


def test_a_run_with_control_characters_ends_as_with_sqlite_session(mx):
    reference = SQLiteSession("s")
    session = MirixSession("s", user_id="ada", mx=mx)
    assert converse(session, TURNS) == converse(reference, TURNS)
    # the items come back as added (the SDK matches them by content), as SQLiteSession's do
    assert asyncio.run(session.get_items()) == asyncio.run(reference.get_items())
    assert asyncio.run(MirixSession("s", user_id="ada", mx=mx).get_items()) == asyncio.run(reference.get_items())

    # the memories are the turns' words as plain text
    said = memory_texts(mx)
    assert any("Page 1 text" in t and "Page 2 text" in t for t in said)
    assert any("Build FAILED on both pages." in t for t in said) and any("welcome" in t for t in said)
    assert not any(ch in CONTROL for t in said for ch in t) and not any("[31m" in t for t in said)
    session.close()


def test_an_item_of_controls_alone_is_kept_and_remembers_nothing_of_it(mx):
    session = MirixSession("s", user_id="ada", mx=mx)
    items = [{"role": "user", "content": "\x1b[2J\x00"}, {"role": "assistant", "content": "Cleared."}]
    asyncio.run(session.add_items(items))
    assert asyncio.run(session.get_items()) == items
    assert [t for t in memory_texts(mx) if "Cleared." in t] and not any("\x1b" in t for t in memory_texts(mx))
    session.close()


def test_session_settings_as_sqlite_session_takes_them(mx):
    items = [{"role": "user", "content": f"message {i}"} for i in range(5)]
    for settings in (SessionSettings(limit=2), {"limit": 2}):
        reference = SQLiteSession("s", session_settings=settings)
        session = MirixSession(f"s-{type(settings).__name__}", user_id="ada", mx=mx, remember=False,
                               session_settings=settings)
        for s in (reference, session):
            asyncio.run(s.add_items(items))
        assert session.session_settings.limit == 2
        assert asyncio.run(session.get_items()) == asyncio.run(reference.get_items()) == items[-2:]
        assert asyncio.run(session.get_items(limit=4)) == items[-4:]  # a call's limit comes first
    assert MirixSession("t", user_id="ada", mx=mx).session_settings == SessionSettings()


def test_runner_replays_as_much_history_as_the_session_settings_allow(mx):
    turns = [("Hi, I'm Ada.", "Hello Ada."), ("I live in Porto.", "Nice."), ("What's my name?", "Ada.")]
    settings = SessionSettings(limit=2)
    models: dict[str, ScriptedModel] = {}
    for label, session in (("sqlite", SQLiteSession("s", session_settings=settings)),
                           ("mirix", MirixSession("s", user_id="ada", mx=mx, session_settings=settings))):
        replies = [reply for _, reply in turns]
        models[label] = ScriptedModel(lambda items, replies=replies: replies.pop(0))
        agent = Agent(name="assistant", model=models[label])
        for text, _ in turns:
            asyncio.run(Runner.run(agent, text, session=session))
    assert [len(i) for i in models["mirix"].inputs] == [len(i) for i in models["sqlite"].inputs] == [1, 3, 3]
