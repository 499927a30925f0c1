"""MirixContextProvider with a real Microsoft Agent Framework `Agent` and a scripted chat client:
memory added before the run, the run's messages remembered after it; embedded and over REST."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agent_framework import Agent, BaseChatClient, ChatResponse, Message

from mirix_py.engine import Mirix
from mirix_py.integrations.agent_framework import MirixContextProvider


class ScriptedClient(BaseChatClient):
    """Answers from the memory block it was given (if any); records the messages of every call."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[list[Message]] = []

    async def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> ChatResponse:
        self.calls.append(list(messages))
        memory = [m.text for m in messages if m.text.startswith("## Memories")]
        if memory and "pilot" in memory[0]:
            answer = "Your brother Tom is a pilot."
        else:
            answer = "I don't know yet."
        return ChatResponse(messages=[Message(role="assistant", contents=[answer])], response_id="r")


@pytest.fixture
def mx(tmp_path, embedder):
    engine = Mirix(tmp_path / "data", embedder=embedder)
    yield engine
    engine.close()


def test_memory_before_and_after_runs(mx):
    client = ScriptedClient()
    memory = MirixContextProvider(user_id="ada", mx=mx)
    agent = Agent(client=client, instructions="Be brief.", context_providers=[memory])

    async def main():
        session = agent.create_session(session_id="s1")
        first = await agent.run("My brother Tom is a pilot for a regional airline.", session=session)
        second = await agent.run("What does my brother Tom do?", session=agent.create_session())
        return first, second

    first, second = asyncio.run(main())
    assert first.text == "I don't know yet."  # nothing in memory yet
    assert second.text == "Your brother Tom is a pilot."
    block = next(m.text for m in client.calls[1] if m.text.startswith("## Memories"))
    assert "Long-term memory of user ada" in block and "pilot" in block

    # the first run's messages became memories, the injected memory block did not
    hits = mx.search("Tom pilot", user_id="ada")
    assert any("agent-framework:s1" in h.memory.source_ids for h in hits)
    said = [m.actor for m in mx.list(user_id="ada", memory_types=["episodic"])]
    assert "assistant" in said and "user" in said
    assert not any("## Memories" in m.search_text() for m in mx.list(user_id="ada"))

    other = Agent(client=ScriptedClient(), context_providers=[MirixContextProvider(user_id="bob", mx=mx)])
    assert asyncio.run(other.run("What does my brother Tom do?")).text == "I don't know yet."


def test_over_rest(tmp_path, embedder):
    from mirix_py.server import KeyStore, create_app
    from mirix_py.server.thread import ServerThread

    mx = Mirix(tmp_path / "data", embedder=embedder)
    keys = KeyStore(mx.engine)
    with ServerThread(create_app(mx, keys=keys)) as server:
        memory = MirixContextProvider(user_id="ada", base_url=server.url, api_key=keys.create(["ada"]).key)
        agent = Agent(client=ScriptedClient(), context_providers=[memory])

        async def main():
            await agent.run("My brother Tom is a pilot.")
            return await agent.run("What does my brother Tom do?")

        assert asyncio.run(main()).text == "Your brother Tom is a pilot."
        memory.close()
    mx.close()


def test_example_runs(tmp_path):
    repo = Path(__file__).resolve().parents[2]
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False",
           "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, str(repo / "examples" / "agent_framework_memory.py"), "--data-dir",
                          str(tmp_path / "mem")], capture_output=True, text=True, timeout=300, env=env, cwd=repo)
    assert out.returncode == 0, out.stderr
    assert "answer: Your brother Tom is a pilot." in out.stdout
