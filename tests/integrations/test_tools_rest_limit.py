"""The adapters over REST keep to the server's own `max_input_chars` (`input_limit` of a `MirixClient`:
read from its /health), not the default: against a server that takes short inputs, a run or an add with
a message longer than that completes and every word said is remembered, so a search finds the end."""

from __future__ import annotations

import asyncio

import pytest
from agent_framework import Agent
from agents import SQLiteSession, set_tracing_disabled
from autogen_core.memory import MemoryContent, MemoryMimeType
from test_agent_framework_plain_text import ReplyClient
from test_openai_agents_plain_text import converse

from long_messages import DIARY, LIMIT
from mirix_py.engine import Mirix
from mirix_py.integrations.agent_framework import MirixContextProvider
from mirix_py.integrations.autogen import MirixMemory
from mirix_py.integrations.openai_agents import MirixSession
from mirix_py.server import KeyStore, create_app
from mirix_py.server.thread import ServerThread

set_tracing_disabled(True)  # nothing leaves the machine

REPLY = " ".join(f"Point {n}: the walks were calm." for n in range(1, 61)) + " Finally, pack the marmalade sandwiches."


@pytest.fixture
def server(limited_mx):
    """(url, ada's key) of a real server over the `limited_mx` engine: inputs of at most LIMIT characters."""
    keys = KeyStore(limited_mx.engine)
    with ServerThread(create_app(limited_mx, keys=keys)) as running:
        yield running.url, keys.create(["ada"]).key


def assert_all_remembered(mx: Mirix) -> None:
    """Words only the end of each long message holds are found, and every part of both was kept."""
    assert "zeppelin landed beside the lighthouse" in mx.search("zeppelin lighthouse", user_id="ada")[0].text
    assert "marmalade sandwiches" in mx.search("marmalade sandwiches", user_id="ada")[0].text
    said = " ".join(m.search_text() for m in mx.list(user_id="ada", memory_types=["episodic"], limit=100))
    assert all(f"Day {n}." in said for n in range(1, 31)) and all(f"Point {n}:" in said for n in range(1, 61))


def test_an_openai_agents_session_over_rest_remembers_turns_over_the_servers_limit(limited_mx, server):
    assert limited_mx.settings.max_input_chars == LIMIT < min(len(DIARY), len(REPLY))
    url, key = server
    turns = [(DIARY, REPLY), ("Thanks!", "You're welcome.")]
    reference = SQLiteSession("s")
    session = MirixSession("s", user_id="ada", base_url=url, api_key=key)
    assert converse(session, turns) == converse(reference, turns)
    assert asyncio.run(session.get_items()) == asyncio.run(reference.get_items())
    session.close()
    assert_all_remembered(limited_mx)


def test_an_agent_framework_provider_over_rest_remembers_a_run_over_the_servers_limit(limited_mx, server):
    url, key = server
    provider = MirixContextProvider(user_id="ada", base_url=url, api_key=key)
    agent = Agent(client=ReplyClient(REPLY), instructions="Be brief.", context_providers=[provider])
    assert asyncio.run(agent.run(DIARY, session=agent.create_session(session_id="s1"))).text == REPLY
    provider.close()
    assert_all_remembered(limited_mx)


def test_an_autogen_memory_over_rest_remembers_text_and_chat_over_the_servers_limit(limited_mx, server):
    url, key = server
    chat = [{"role": "user", "content": REPLY}, {"role": "assistant", "content": "Noted."}]

    async def main():
        memory = MirixMemory("ada", base_url=url, api_key=key)
        await memory.add(MemoryContent(content=DIARY, mime_type=MemoryMimeType.TEXT))
        await memory.add(MemoryContent(content={"messages": chat}, mime_type=MemoryMimeType.JSON))
        found = await memory.query("zeppelin lighthouse")
        await memory.close()
        return found

    assert "zeppelin landed beside the lighthouse" in asyncio.run(main()).results[0].content
    assert_all_remembered(limited_mx)
