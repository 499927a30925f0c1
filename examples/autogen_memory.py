"""An AutoGen AssistantAgent with mirix-py memory.

    python examples/autogen_memory.py                         # offline: a scripted model stands in
    MIRIX_LLM_PROVIDER=openai MIRIX_LLM_MODEL=gpt-4o-mini OPENAI_API_KEY=sk-... python examples/autogen_memory.py

The agent's memory is a `MirixMemory`: before each model call it adds core memory and the best
memories for the user's message to the model context. With no model configured, a scripted client
answers from whatever that context says, so you can see what reached the model.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile

from autogen_agentchat.agents import AssistantAgent
from autogen_core.memory import MemoryContent, MemoryMimeType

from mirix_py.integrations.autogen import MirixMemory
from mirix_py.llm import build_model_client
from mirix_py.llm.scripted import ScriptedChatCompletionClient, ScriptRequest
from mirix_py.settings import Settings


def scripted(req: ScriptRequest) -> str:
    memory = [line for line in req.system.splitlines() if line.startswith("- [")]
    if not memory:
        return "I have nothing in memory about that."
    return "From memory: " + memory[0].split(") ", 1)[-1]


async def main(data_dir: str) -> None:
    memory = MirixMemory("ada", data_dir=data_dir)
    await memory.add(MemoryContent(content="My brother Tom is a pilot for a regional airline.",
                                   mime_type=MemoryMimeType.TEXT))
    await memory.add(MemoryContent(content="I'm allergic to peanuts.", mime_type=MemoryMimeType.TEXT))

    model = build_model_client(Settings.from_env(data_dir=data_dir))
    recorder = ScriptedChatCompletionClient(scripted) if model is None else None
    agent = AssistantAgent("assistant", model_client=model or recorder, memory=[memory],
                           system_message="You are a helpful assistant. Use the user's long-term memory.")
    result = await agent.run(task="What does my brother Tom do?")
    print("answer:", result.messages[-1].content)
    if recorder is not None:
        context = recorder.requests[-1].system
        print(f"model context had {len(context)} characters of system text, including:")
        print("\n".join("  " + line for line in context.splitlines() if line.startswith(("- [", "Core", "["))))
    print("component:", memory.dump_component().model_dump_json())
    await memory.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None, help="where memories live (default: a temp dir)")
    args = parser.parse_args()
    asyncio.run(main(args.data_dir or tempfile.mkdtemp(prefix="mirix-autogen-")))
