"""MirixContextProvider in a run whose input or reply holds control characters (a PDF's form feed, a
terminal's colour codes): the run answers as it does without the provider, memory is looked up and
the turns are remembered as plain text."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from agent_framework import Agent, BaseChatClient, ChatResponse, Message

from mirix_py.engine import Mirix
from mirix_py.integrations.agent_framework import MirixContextProvider
from mirix_py.text.storable import CONTROL


class ReplyClient(BaseChatClient):
    """Replies with a fixed text; records the messages of every call."""

    def __init__(self, reply: str) -> None:
        super().__init__()
        self.reply, self.calls = reply, []

    async def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> ChatResponse:
        self.calls.append(list(messages))
        return ChatResponse(messages=[Message(role="assistant", contents=[self.reply])], response_id="r")


@pytest.fixture
def mx(tmp_path, embedder):
    engine = Mirix(tmp_path / "data", embedder=embedder)
    yield engine
    engine.close()


def run(mx: Mirix, text: str, reply: str) -> tuple[str, ReplyClient]:
    client = ReplyClient(reply)
    agent = Agent(client=client, instructions="Be brief.", context_providers=[MirixContextProvider(user_id="ada", mx=mx)])
    result = asyncio.run(agent.run(text, session=agent.create_session(session_id="s1")))
    return result.text, client


def test_a_reply_with_colour_codes_is_answered_and_remembered_plain(mx):
    answer, _ = run(mx, "How did the build go?", "Build \x1b[31mFAILED\x1b[0m at step 3.")
    assert answer == "Build \x1b[31mFAILED\x1b[0m at step 3."  # the run's own reply is the model's
    said = [m.search_text() for m in mx.list(user_id="ada")]
    assert any("Build FAILED at step 3." in t for t in said) and any("How did the build go?" in t for t in said)
    assert not any(ch in CONTROL for t in said for ch in t)


def test_an_input_with_a_form_feed_finds_memory_and_is_remembered_plain(mx):
    mx.add("My brother Tom is a pilot for a regional airline.", user_id="ada")
    answer, client = run(mx, "Page 1\x0cWhat does my brother\x85 Tom do?", "He flies.")
    assert answer == "He flies."
    block = next(m.text for m in client.calls[0] if m.text.startswith("## Memories"))
    assert "pilot" in block
    said = [m.search_text() for m in mx.list(user_id="ada", memory_types=["episodic"])]
    assert any("Page 1" in t and "What does my brother" in t for t in said)
    assert not any(ch in CONTROL for t in said for ch in t)


def test_messages_of_controls_alone_remember_nothing_and_fail_nothing(mx):
    answer, client = run(mx, "\x1b[0m\x07", "\x1b[2J")
    assert answer == "\x1b[2J" and not any(m.text.startswith("## Memories") for m in client.calls[0])
    assert mx.list(user_id="ada") == []
