"""MirixMemory as an autogen-core Memory: a real AssistantAgent with a scripted model client, embedded
and over a live REST server; query, add (text, messages, image), clear, close, component round trip."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.messages import MemoryQueryEvent
from autogen_core import Image
from autogen_core.memory import MemoryContent, MemoryMimeType
from autogen_core.model_context import BufferedChatCompletionContext
from autogen_core.models import SystemMessage, UserMessage

from mirix_py.engine import Mirix
from mirix_py.integrations.autogen import MirixMemory
from mirix_py.llm.scripted import ScriptedChatCompletionClient, ScriptRequest

REPO = Path(__file__).resolve().parents[2]


def answering_script(req: ScriptRequest) -> str:
    """A model that answers from what its context says, and says so when the context is silent."""
    if "pilot" in req.system:
        return "Your brother Tom is a pilot."
    return "I don't know what your brother does."


@pytest.fixture
def mx(tmp_path, embedder):
    engine = Mirix(tmp_path / "data", embedder=embedder)
    yield engine
    engine.close()


def test_assistant_agent_sees_remembered_facts(mx):
    async def main():
        memory = MirixMemory("ada", mx=mx)
        await memory.add(MemoryContent(content="My brother Tom is a pilot for a regional airline.",
                                       mime_type=MemoryMimeType.TEXT,
                                       metadata={"occurred_at": "2024-05-01T10:00:00+00:00", "source_id": "note-7"}))
        await memory.add(MemoryContent(content={"role": "user", "content": "I'm allergic to peanuts."},
                                       mime_type=MemoryMimeType.JSON))
        client = ScriptedChatCompletionClient(answering_script)
        agent = AssistantAgent("assistant", model_client=client, memory=[memory])
        result = await agent.run(task="What does my brother Tom do?")

        # the model saw the fact in a system message that the memory added to its context
        (request,) = client.requests
        assert "pilot" in request.system and "Long-term memory of user ada" in request.system
        assert result.messages[-1].content == "Your brother Tom is a pilot."
        # the agent reports what the memory retrieved, with ids and provenance
        events = [m for m in result.messages if isinstance(m, MemoryQueryEvent)]
        assert events and any("pilot" in str(c.content) for c in events[0].content)
        cited = [c.metadata for c in events[0].content if "pilot" in str(c.content)]
        assert cited[0]["id"].split("_")[0] in ("epi", "sem") and "note-7" in cited[0]["source_ids"]

        # a different user's memory knows nothing of it
        other = MirixMemory("bob", mx=mx)
        client2 = ScriptedChatCompletionClient(answering_script)
        result2 = await AssistantAgent("assistant", model_client=client2, memory=[other]).run(
            task="What does my brother Tom do?")
        assert "pilot" not in client2.requests[0].system
        assert result2.messages[-1].content.startswith("I don't know")
        await memory.close()
        await other.close()
        assert mx.list(user_id="ada")  # closing a memory over a shared engine leaves the engine open

    asyncio.run(main())


def test_query_update_context_clear(mx):
    async def main():
        memory = MirixMemory("ada", mx=mx, max_items=3)
        assert (await memory.query("anything")).results == []
        await memory.add(MemoryContent(content="[{\"role\": \"user\", \"content\": \"We adopted a cat named Miso.\"}]",
                                       mime_type=MemoryMimeType.JSON))
        await memory.add(MemoryContent(content="# Deploy\n1. Run the tests\n2. Build the image\n3. Push it",
                                       mime_type=MemoryMimeType.MARKDOWN))
        found = await memory.query("Miso the cat")
        assert found.results and "Miso" in found.results[0].content
        assert found.results[0].metadata["memory_type"] in ("episodic", "semantic")
        only = await memory.query(MemoryContent(content="Miso", mime_type=MemoryMimeType.TEXT),
                                  memory_types=["episodic"], limit=1)
        assert len(only.results) == 1 and only.results[0].metadata["memory_type"] == "episodic"

        context = BufferedChatCompletionContext(buffer_size=10)
        empty = await memory.update_context(context)  # no user message yet: nothing added
        assert empty.memories.results == [] and await context.get_messages() == []
        await context.add_message(UserMessage(content="How do I deploy?", source="user"))
        updated = await memory.update_context(context)
        messages = await context.get_messages()
        assert isinstance(messages[-1], SystemMessage) and "Run the tests" in messages[-1].content
        assert 1 <= len(updated.memories.results) <= 3

        with pytest.raises(ValueError):
            await memory.add(MemoryContent(content=b"\x00\x01", mime_type=MemoryMimeType.BINARY))
        await memory.clear()
        assert mx.list(user_id="ada") == [] and (await memory.query("Miso")).results == []
        await memory.close()

    asyncio.run(main())


def test_a_long_document_reaches_the_agent_as_the_lines_about_the_question(mx):
    pages = [f"Page {i}. Minutes of the garden committee: hedges, compost and the watering rota." for i in range(60)]
    pages[47] = "Page 47. The boiler service code is kept in the red binder in the cellar."

    async def main():
        memory = MirixMemory("ada", mx=mx, max_items=3)
        await memory.add(MemoryContent(content="# House manual\n\n" + "\n".join(pages), mime_type=MemoryMimeType.MARKDOWN))
        found = await memory.query("where is the boiler service code?")
        passage = next(r.content for r in found.results if r.metadata["memory_type"] == "resource")
        assert "red binder in the cellar" in passage and "Page 12." not in passage and "…" in passage
        context = BufferedChatCompletionContext(buffer_size=10)
        await context.add_message(UserMessage(content="Where is the boiler service code?", source="user"))
        await memory.update_context(context)
        system = (await context.get_messages())[-1].content
        assert "red binder in the cellar" in system and len(system.split()) < 400

    asyncio.run(main())


def test_image_goes_to_screenshot_ingestion(mx):
    from PIL import Image as PILImage, ImageDraw

    from mirix_synth.screens import _font

    picture = PILImage.new("RGB", (900, 200), "white")
    ImageDraw.Draw(picture).text((20, 70), "Invoice 4417 is due on June 3", fill="black", font=_font(36))

    async def main():
        memory = MirixMemory("ada", mx=mx)
        content = MemoryContent(content=Image(picture), mime_type=MemoryMimeType.IMAGE,
                                metadata={"app": "Mail", "window_title": "Invoice"})
        if not hasattr(mx, "add_screenshot"):
            with pytest.raises(NotImplementedError, match="add_screenshot"):
                await memory.add(content)
            return
        await memory.add(content)
        found = await memory.query("invoice 4417")
        assert found.results and "4417" in found.results[0].content
        (record,) = [r for r in mx.list(user_id="ada") if "4417" in r.search_text()][:1]
        assert mx.input_status(record.source_ids[-1]).kind.value == "screenshot"

    asyncio.run(main())


def test_component_round_trip_without_secrets(tmp_path, monkeypatch):
    memory = MirixMemory("ada", base_url="http://127.0.0.1:9", api_key="mxk_secret.value", max_items=4)
    model = memory.dump_component()
    assert model.provider == "mirix_py.integrations.autogen.MirixMemory" and model.component_type == "memory"
    assert "mxk_secret" not in model.model_dump_json()
    loaded = MirixMemory.load_component(model)
    assert isinstance(loaded, MirixMemory) and loaded._config == memory._config

    embedded = MirixMemory("ada", data_dir=tmp_path / "d", name="ada-notes")
    again = MirixMemory.load_component(embedded.dump_component())
    assert again.name == "ada-notes" and again._config.data_dir == str(tmp_path / "d")
    with pytest.raises(ValueError):
        MirixMemory("ada", base_url="http://127.0.0.1:9", data_dir=tmp_path)


def test_over_rest_with_an_api_key(tmp_path, embedder, monkeypatch):
    from mirix_py.client import ApiError
    from mirix_py.server import KeyStore, create_app
    from mirix_py.server.thread import ServerThread

    mx = Mirix(tmp_path / "data", embedder=embedder)
    keys = KeyStore(mx.engine)
    monkeypatch.setenv("MIRIX_API_KEY", keys.create(["ada"]).key)
    with ServerThread(create_app(mx, keys=keys)) as server:
        async def main():
            memory = MirixMemory("ada", base_url=server.url)  # the key comes from MIRIX_API_KEY
            await memory.add(MemoryContent(content="My brother Tom is a pilot.", mime_type=MemoryMimeType.TEXT))
            client = ScriptedChatCompletionClient(answering_script)
            result = await AssistantAgent("assistant", model_client=client, memory=[memory]).run(
                task="What does my brother Tom do?")
            assert result.messages[-1].content == "Your brother Tom is a pilot."
            intruder = MirixMemory("bob", base_url=server.url)  # ada's key may not act for bob
            with pytest.raises(ApiError, match="403 forbidden") as refused:
                await intruder.query("Tom")
            assert refused.value.status == 403
            await memory.close()
            await intruder.close()

        asyncio.run(main())
    mx.close()


def test_example_runs(tmp_path):
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False",
           "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, str(REPO / "examples" / "autogen_memory.py"), "--data-dir",
                          str(tmp_path / "mem")], capture_output=True, text=True, timeout=300, env=env, cwd=REPO)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "Tom is a pilot" in out.stdout and "model context had" in out.stdout


def test_image_bytes_that_are_no_image_are_invalid_input(mx):
    from mirix_py.errors import InvalidInput

    async def main():
        memory = MirixMemory("ada", mx=mx)
        with pytest.raises(InvalidInput, match="not an image"):
            await memory.add(MemoryContent(content=b"%PDF-1.4 not a picture", mime_type=MemoryMimeType.IMAGE))

    asyncio.run(main())
    assert mx.list(user_id="ada") == []


def test_query_leaves_out_high_sensitivity_vault_entries_as_update_context_does(mx):
    from mirix_py.records import KnowledgeVaultMemory, Sensitivity
    from mirix_py.tools.ops import InsertOp

    mx.store.apply([InsertOp(memory=KnowledgeVaultMemory(
        user_id="ada", caption="garage door code", secret_value="8812", sensitivity=Sensitivity.high)),
        InsertOp(memory=KnowledgeVaultMemory(
            user_id="ada", caption="garage wifi password", secret_value="tulip-77", sensitivity=Sensitivity.medium))],
        user_id="ada", actor="test")

    async def main():
        memory = MirixMemory("ada", mx=mx)
        found = (await memory.query("garage door code")).results
        texts = " ".join(str(c.content) for c in found)
        assert "wifi password" in texts and "tulip-77" not in texts  # medium: shown, masked
        assert "door code" not in texts and "8812" not in texts

    asyncio.run(main())
