"""MirixMemory takes text and chat longer than the engine's `max_input_chars`, as AutoGen's own
`ListMemory` does: every word is remembered (in consecutive inputs), so a query and an agent's run
find what only the end of it says."""

from __future__ import annotations

import asyncio

import pytest
from autogen_agentchat.agents import AssistantAgent
from autogen_core.memory import ListMemory, MemoryContent, MemoryMimeType

from long_messages import DIARY, LIMIT
from mirix_py.integrations.autogen import MirixMemory
from mirix_py.llm.scripted import ScriptedChatCompletionClient, ScriptRequest

CHAT = [{"role": "user", "content": " ".join(f"Point {n}: the walks were calm." for n in range(1, 61))},
        {"role": "assistant", "content": "Noted. Finally, pack the marmalade sandwiches."}]


@pytest.fixture
def mx(limited_mx):
    return limited_mx


def zeppelin_script(req: ScriptRequest) -> str:
    return "A zeppelin, by the lighthouse." if "zeppelin" in req.system else "I don't know."


def test_text_and_chat_over_the_limit_are_remembered_as_list_memory_takes_them(mx):
    assert mx.settings.max_input_chars == LIMIT < min(len(DIARY), len(CHAT[0]["content"]))
    texts = [MemoryContent(content=DIARY, mime_type=MemoryMimeType.TEXT),
             MemoryContent(content={"messages": CHAT}, mime_type=MemoryMimeType.JSON)]

    async def main():
        own, memory = ListMemory(), MirixMemory("ada", mx=mx)
        for content in texts:
            await own.add(content)
            await memory.add(content)
        assert own.content == texts  # AutoGen's own store keeps any length
        found = await memory.query("zeppelin lighthouse")
        assert "zeppelin landed beside the lighthouse" in found.results[0].content
        assert "marmalade sandwiches" in (await memory.query("marmalade sandwiches")).results[0].content
        client = ScriptedChatCompletionClient(zeppelin_script)
        result = await AssistantAgent("assistant", model_client=client, memory=[memory]).run(
            task="What landed beside the lighthouse?")
        assert result.messages[-1].content == "A zeppelin, by the lighthouse."

    asyncio.run(main())
    said = " ".join(m.search_text() for m in mx.list(user_id="ada", memory_types=["episodic"], limit=100))
    assert all(f"Day {n}." in said for n in range(1, 31)) and all(f"Point {n}:" in said for n in range(1, 61))
