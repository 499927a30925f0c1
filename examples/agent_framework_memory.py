"""A Microsoft Agent Framework agent with mirix-py memory (`MirixContextProvider`).

    python examples/agent_framework_memory.py     # offline: a scripted chat client stands in

Before each run the provider adds what memory knows about the input as one message; after the run
it remembers the run's messages. Pass a real chat client (e.g. `OpenAIChatClient()`) to run it for real.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
from typing import Any

from agent_framework import Agent, BaseChatClient, ChatResponse, Message

from mirix_py.engine import Mirix
from mirix_py.integrations.agent_framework import MirixContextProvider


class ScriptedClient(BaseChatClient):
    """Answers with the first remembered line about the question, if memory gave one."""

    async def _inner_get_response(self, *, messages: Any, stream: bool, options: Any, **kwargs: Any) -> ChatResponse:
        memory = next((m.text for m in messages if m.text.startswith("## Memories")), "")
        if "pilot" in memory:
            answer = "Your brother Tom is a pilot."
        else:
            answer = "Noted." if memory == "" else "I don't know."
        return ChatResponse(messages=[Message(role="assistant", contents=[answer])])


async def main(data_dir: str) -> None:
    with Mirix(data_dir) as mx:
        agent = Agent(client=ScriptedClient(), instructions="Use the user's long-term memory.",
                      context_providers=[MirixContextProvider(user_id="ada", mx=mx)])
        await agent.run("My brother Tom is a pilot for a regional airline.")
        result = await agent.run("What does my brother Tom do?")
        print("answer:", result.text)
        print("memories of ada:", len(mx.list(user_id="ada")))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None, help="where memories live (default: a temp dir)")
    args = parser.parse_args()
    asyncio.run(main(args.data_dir or tempfile.mkdtemp(prefix="mirix-agent-framework-")))
