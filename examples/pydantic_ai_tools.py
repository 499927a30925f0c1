"""A pydantic-ai Agent with mirix-py memory tools (`MirixToolset`).

    python examples/pydantic_ai_tools.py          # offline: a FunctionModel script calls the tools

Replace the FunctionModel by any pydantic-ai model (e.g. "openai:gpt-4o") to run it for real.
"""

from __future__ import annotations

import argparse
import tempfile

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from mirix_py.engine import Mirix
from mirix_py.integrations.pydantic_ai import MirixToolset


def scripted(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """'Remember: X' calls add_memory, a question calls search_memory, a tool result is the answer."""
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    returned = [p for p in last.parts if isinstance(p, ToolReturnPart)]
    if returned:
        return ModelResponse(parts=[TextPart(f"From memory: {returned[0].content}")])
    text = str(last.parts[-1].content)
    if text.startswith("Remember:"):
        return ModelResponse(parts=[ToolCallPart("add_memory", {"content": text[9:].strip()})])
    return ModelResponse(parts=[ToolCallPart("search_memory", {"query": text, "max_results": 2})])


def main(data_dir: str) -> None:
    with Mirix(data_dir) as mx:
        agent = Agent(FunctionModel(scripted), toolsets=[MirixToolset("ada", mx=mx)],
                      instructions="Use the user's long-term memory.")
        for text in ("Remember: my brother Tom is a pilot.", "Remember: I'm allergic to peanuts.",
                     "What am I allergic to?"):
            print(f"> {text}\n{agent.run_sync(text).output}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", default=None, help="where memories live (default: a temp dir)")
    args = parser.parse_args()
    main(args.data_dir or tempfile.mkdtemp(prefix="mirix-pydantic-ai-"))
