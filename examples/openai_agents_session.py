"""An OpenAI Agents SDK agent with mirix-py memory: a `MirixSession` and the memory function tools.

    python examples/openai_agents_session.py      # offline: a scripted model stands in

The session keeps the conversation and turns it into memories; the tools let the agent search and
add memories and edit core memory. Drop `model=` (and set OPENAI_API_KEY) to run it with a real model.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from typing import Any

from agents import Agent, Runner, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from mirix_py.engine import Mirix
from mirix_py.integrations.openai_agents import MirixSession, mirix_tools


class ScriptedModel(Model):
    """'Please remember: X' calls add_memory, a question calls search_memory, a tool result is the answer."""

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        last = input[-1] if isinstance(input, list) else {"role": "user", "content": input}
        item: Any
        if last.get("type") == "function_call_output":
            item = ResponseOutputMessage(id="m", type="message", role="assistant", status="completed", content=[
                ResponseOutputText(type="output_text", text=f"From memory: {last['output']}", annotations=[])])
        else:
            text = str(last.get("content"))
            name, args = (("add_memory", {"content": text.split(":", 1)[1].strip()}) if text.startswith("Please")
                          else ("search_memory", {"query": text, "max_results": 2}))
            item = ResponseFunctionToolCall(id="f", call_id=f"c{abs(hash(text))}", type="function_call", name=name,
                                            arguments=json.dumps(args))
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


async def main(data_dir: str) -> None:
    set_tracing_disabled(True)
    with Mirix(data_dir) as mx:
        session = MirixSession("chat-1", user_id="ada", mx=mx)
        agent = Agent(name="assistant", instructions="Use the user's long-term memory.", model=ScriptedModel(),
                      tools=mirix_tools("ada", mx=mx))
        for text in ("Please remember: my brother Tom is a pilot.", "Please remember: I'm allergic to peanuts.",
                     "What am I allergic to?"):
            result = await Runner.run(agent, text, session=session)
            print(f"> {text}\n{result.final_output}")
        print(f"the session holds {len(await session.get_items())} items")
        session.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None, help="where memories live (default: a temp dir)")
    args = parser.parse_args()
    asyncio.run(main(args.data_dir or tempfile.mkdtemp(prefix="mirix-agents-")))
