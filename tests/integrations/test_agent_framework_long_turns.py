"""MirixContextProvider in a run whose input and reply are longer than the engine's `max_input_chars`:
the run answers as it does without the provider, the model gets the input as given, and every word
said is remembered (in consecutive inputs), so a later search finds the last ones."""

from __future__ import annotations

import asyncio

import pytest
from agent_framework import Agent
from test_agent_framework_plain_text import ReplyClient

from long_messages import DIARY, LIMIT
from mirix_py.integrations.agent_framework import MirixContextProvider

REPLY = " ".join(f"Point {n}: the walks were calm." for n in range(1, 61)) + " Finally, pack the marmalade sandwiches."


@pytest.fixture
def mx(limited_mx):
    return limited_mx


def answer(client: ReplyClient, context_providers: list[MirixContextProvider]) -> str:
    agent = Agent(client=client, instructions="Be brief.", context_providers=context_providers)
    return asyncio.run(agent.run(DIARY, session=agent.create_session(session_id="s1"))).text


def test_a_run_with_messages_over_the_limit_answers_as_without_the_provider(mx):
    assert mx.settings.max_input_chars == LIMIT < min(len(DIARY), len(REPLY))
    client = ReplyClient(REPLY)
    assert answer(client, [MirixContextProvider(user_id="ada", mx=mx)]) == answer(ReplyClient(REPLY), []) == REPLY
    assert DIARY in [m.text for m in client.calls[0]]  # the model got the input as given

    # words only the end of each long message holds are found
    assert "zeppelin landed beside the lighthouse" in mx.search("zeppelin lighthouse", user_id="ada")[0].text
    assert "marmalade sandwiches" in mx.search("marmalade sandwiches", user_id="ada")[0].text
    said = " ".join(m.search_text() for m in mx.list(user_id="ada", memory_types=["episodic"], limit=100))
    assert all(f"Day {n}." in said for n in range(1, 31)) and all(f"Point {n}:" in said for n in range(1, 61))
