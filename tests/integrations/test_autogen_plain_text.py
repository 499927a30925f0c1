"""MirixMemory takes what AutoGen's own `ListMemory` takes: a user message or a query holding control
characters (a PDF's form feed, a terminal's colour codes), a JSON list that is no chat, text bytes, an
empty string; and `clear` deletes what the docs say it does."""

from __future__ import annotations

import asyncio

import pytest
from autogen_agentchat.agents import AssistantAgent
from autogen_core.memory import MemoryContent, MemoryMimeType
from autogen_core.model_context import UnboundedChatCompletionContext
from autogen_core.models import SystemMessage, UserMessage

from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput
from mirix_py.integrations.autogen import MirixMemory
from mirix_py.integrations.openai_agents import MirixSession
from mirix_py.records import InputRecord, InputStatus
from mirix_py.llm.scripted import ScriptedChatCompletionClient, ScriptRequest
from mirix_py.text.storable import CONTROL


@pytest.fixture
def mx(tmp_path, embedder):
    engine = Mirix(tmp_path / "data", embedder=embedder)
    yield engine
    engine.close()


def texts(mx: Mirix, user_id: str = "ada") -> list[str]:
    """What every memory of the user says."""
    return [m.search_text() for m in mx.list(user_id=user_id, limit=100)]


def logged(mx: Mirix, user_id: str = "ada") -> list[InputRecord]:
    """Every input of the user in the engine's input log."""
    return [r for status in InputStatus for r in mx.inputs.by_status(status, user_id=user_id)]


def cat_script(req: ScriptRequest) -> str:
    return "Your cat is Miso." if "Miso" in req.system else "I don't know."


@pytest.mark.parametrize("task", ["Page 1\x0cPage 2: what is my cat called?",
                                  "\x1b[1mWhat\x1b[0m is my cat called?",
                                  "What is my cat\x85 called?\x7f"])
def test_an_agent_run_with_control_characters_in_the_user_message_answers(mx, task):
    async def main():
        memory = MirixMemory("ada", mx=mx)
        await memory.add(MemoryContent(content="My cat is called Miso.", mime_type=MemoryMimeType.TEXT))
        client = ScriptedChatCompletionClient(cat_script)
        result = await AssistantAgent("assistant", model_client=client, memory=[memory]).run(task=task)
        assert result.messages[-1].content == "Your cat is Miso."
        found = await memory.query(task)
        assert any("Miso" in r.content for r in found.results)

    asyncio.run(main())


def test_update_context_reads_the_message_as_plain_text(mx):
    async def main():
        memory = MirixMemory("ada", mx=mx)
        await memory.add(MemoryContent(content="My cat is called Miso.", mime_type=MemoryMimeType.TEXT))
        context = UnboundedChatCompletionContext()
        await context.add_message(UserMessage(content="\x1b[31mcat\x1b[0m\x0cname?", source="user"))
        result = await memory.update_context(context)
        system = (await context.get_messages())[-1]
        assert isinstance(system, SystemMessage) and "Miso" in system.content
        assert result.memories.results
        # only escape sequences or controls: nothing to look up, as for a blank message
        blank = UnboundedChatCompletionContext()
        await blank.add_message(UserMessage(content="\x1b[0m\x07", source="user"))
        assert (await memory.update_context(blank)).memories.results == []
        assert len(await blank.get_messages()) == 1

    asyncio.run(main())


def test_added_text_with_colour_codes_is_remembered_as_plain_words(mx):
    async def main():
        memory = MirixMemory("ada", mx=mx)
        await memory.add(MemoryContent(content="build log \x1b[31mFAILED\x1b[0m at step 3", mime_type=MemoryMimeType.TEXT))
        said = [t for t in texts(mx) if "FAILED" in t]
        assert said and not any(ch in CONTROL for t in said for ch in t) and not any("[31m" in t for t in said)

    asyncio.run(main())


def test_json_that_is_no_chat_is_remembered_as_its_text(mx):
    async def main():
        memory = MirixMemory("ada", mx=mx)
        await memory.add(MemoryContent(content='["Ada likes tea", "Ada hates coffee"]', mime_type=MemoryMimeType.JSON))
        await memory.add(MemoryContent(content={"messages": "not a list", "plant": "fern"},
                                       mime_type=MemoryMimeType.JSON))
        await memory.add(MemoryContent(content={"role": "user", "content": "I moved to Lisbon."},
                                       mime_type=MemoryMimeType.JSON))
        said = texts(mx)
        assert any("Ada likes tea" in t and "Ada hates coffee" in t for t in said)
        assert any("fern" in t for t in said)
        assert any("I moved to Lisbon." in t and "{" not in t for t in said)  # a chat message stays a message

    asyncio.run(main())


def test_text_bytes_are_decoded_and_undecodable_or_binary_bytes_refused(mx):
    async def main():
        memory = MirixMemory("ada", mx=mx)
        await memory.add(MemoryContent(content="Ada’s bike is blue.".encode(), mime_type=MemoryMimeType.TEXT))
        await memory.add(MemoryContent(content=b'{"role": "user", "content": "I play the cello."}',
                                       mime_type=MemoryMimeType.JSON))
        said = texts(mx)
        assert any("Ada’s bike is blue." in t for t in said) and any("I play the cello." in t for t in said)
        with pytest.raises(InvalidInput, match="not UTF-8"):
            await memory.add(MemoryContent(content=b"caf\xe9", mime_type=MemoryMimeType.TEXT))
        with pytest.raises(InvalidInput, match="binary"):
            await memory.add(MemoryContent(content=b"\x00\x01", mime_type=MemoryMimeType.BINARY))

    asyncio.run(main())


@pytest.mark.parametrize("content", ["", "   ", "\x1b[0m", "[]", '[{"role": "user", "content": "\\u0007"}]'])
def test_content_with_no_text_writes_nothing_and_raises_nothing(mx, content):
    async def main():
        memory = MirixMemory("ada", mx=mx)
        mime = MemoryMimeType.JSON if content.startswith("[") else MemoryMimeType.TEXT
        await memory.add(MemoryContent(content=content, mime_type=mime))
        assert mx.list(user_id="ada") == [] and logged(mx) == []

    asyncio.run(main())


def test_clear_deletes_everything_of_the_user_as_documented(mx):
    """The docs say clear() is `delete_user`: the user's other stores go too, other users' stay."""
    async def main():
        session = MirixSession("chat-1", user_id="ada", mx=mx, remember=False)
        await session.add_items([{"role": "user", "content": "hello"}])
        mx.add("Ada's passport expires in 2031.", user_id="ada")
        mx.add("Bob's passport expires in 2029.", user_id="bob")
        memory = MirixMemory("ada", mx=mx, name="notes")
        await memory.add(MemoryContent(content="scratch: step 1 done", mime_type=MemoryMimeType.TEXT))
        await memory.clear()
        assert mx.list(user_id="ada") == [] and await session.get_items() == []
        assert mx.list(user_id="bob")

    asyncio.run(main())
