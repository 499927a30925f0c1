"""MirixToolset with a real pydantic-ai Agent: TestModel calls every tool from its JSON schema, a
FunctionModel script remembers and recalls; embedded and over a live REST server."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.test import TestModel

from mirix_py.engine import Mirix
from mirix_py.integrations.pydantic_ai import MirixToolset


@pytest.fixture
def mx(tmp_path, embedder):
    engine = Mirix(tmp_path / "data", embedder=embedder)
    yield engine
    engine.close()


def script(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    """'Remember: X' calls add_memory, 'Core: X' core_memory_append, other text search_memory; a tool
    result is the answer."""
    last = messages[-1]
    assert isinstance(last, ModelRequest)
    returned = [p for p in last.parts if isinstance(p, ToolReturnPart)]
    if returned:
        return ModelResponse(parts=[TextPart(f"From memory: {returned[0].content}")])
    text = str(last.parts[-1].content)
    if text.startswith("Remember:"):
        return ModelResponse(parts=[ToolCallPart("add_memory", {"content": text[9:].strip()})])
    if text.startswith("Core:"):
        return ModelResponse(parts=[ToolCallPart("core_memory_append", {"label": "human", "text": text[5:].strip()})])
    return ModelResponse(parts=[ToolCallPart("search_memory", {"query": text, "max_results": 2})])


def test_tool_schemas_are_typed(mx):
    toolset = MirixToolset("ada", mx=mx)
    seen: dict = {}

    def capture(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.update({t.name: t for t in info.function_tools})
        return ModelResponse(parts=[TextPart("ok")])

    Agent(FunctionModel(capture), toolsets=[toolset]).run_sync("hi")
    assert set(seen) == {"search_memory", "add_memory", "read_core_memory", "core_memory_append"}
    search = seen["search_memory"].parameters_json_schema
    assert search["properties"]["query"]["type"] == "string" and search["properties"]["max_results"]["type"] == "integer"
    assert search["required"] == ["query"] and search["properties"]["query"]["description"]
    assert seen["core_memory_append"].parameters_json_schema["properties"]["label"]["enum"] == ["human", "persona"]
    assert "long-term memory" in seen["search_memory"].description


def test_test_model_calls_every_tool(mx):
    result = Agent(TestModel(), toolsets=[MirixToolset("ada", mx=mx)]).run_sync("go")
    called = {p.tool_name: p.content for m in result.all_messages() for p in getattr(m, "parts", [])
              if isinstance(p, ToolReturnPart)}
    assert set(called) == {"search_memory", "add_memory", "read_core_memory", "core_memory_append"}
    assert called["add_memory"].startswith("Remembered")


def test_remember_and_recall(mx):
    agent = Agent(FunctionModel(script), toolsets=[MirixToolset("ada", mx=mx)])
    assert agent.run_sync("Remember: I am allergic to peanuts.").output.startswith("From memory: Remembered")
    answer = agent.run_sync("What am I allergic to?").output
    assert answer.startswith("From memory: - [") and "allergic to peanuts" in answer
    # the block keeps what the engine wrote there from the first message, and gains the line
    assert agent.run_sync("Core: Prefers tea.").output == "From memory: [human] is allergic to peanuts\nPrefers tea."
    assert mx.core_memory(user_id="ada")["human"].value.endswith("Prefers tea.")
    bob = Agent(FunctionModel(script), toolsets=[MirixToolset("bob", mx=mx)])
    assert bob.run_sync("What am I allergic to?").output == "From memory: No memories found."


def test_over_rest(tmp_path, embedder):
    from mirix_py.server import KeyStore, create_app
    from mirix_py.server.thread import ServerThread

    mx = Mirix(tmp_path / "data", embedder=embedder)
    keys = KeyStore(mx.engine)
    with ServerThread(create_app(mx, keys=keys)) as server:
        toolset = MirixToolset("ada", base_url=server.url, api_key=keys.create(["ada"]).key)
        agent = Agent(FunctionModel(script), toolsets=[toolset])
        agent.run_sync("Remember: my brother Tom is a pilot.")
        assert "pilot" in agent.run_sync("What does my brother do?").output
        toolset.close()
    mx.close()


def test_example_runs(tmp_path):
    repo = Path(__file__).resolve().parents[2]
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False",
           "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, str(repo / "examples" / "pydantic_ai_tools.py"), "--data-dir",
                          str(tmp_path / "mem")], capture_output=True, text=True, timeout=300, env=env, cwd=repo)
    assert out.returncode == 0, out.stderr
    assert "allergic to peanuts" in out.stdout.split("> What am I allergic to?")[1]
