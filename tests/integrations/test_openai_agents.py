"""MirixSession and mirix_tools with the real OpenAI Agents SDK: an `Agent` run by `Runner` with a
scripted `Model`, over an embedded engine and over a live REST server."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from agents import Agent, Runner, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from mirix_py.engine import Mirix
from mirix_py.integrations.openai_agents import MirixSession, mirix_tools

set_tracing_disabled(True)  # nothing leaves the machine


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


class ScriptedModel(Model):
    """Replies from a function of the input items; records every input it was given."""

    def __init__(self, script: Any) -> None:
        self.script, self.inputs = script, []

    async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                           tracing, **kwargs) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        self.inputs.append(items)
        n = len(self.inputs)
        out = self.script(items)
        if isinstance(out, tuple):  # (tool name, arguments)
            item: Any = ResponseFunctionToolCall(id=f"fc{n}", call_id=f"call{n}", type="function_call",
                                                 name=out[0], arguments=json.dumps(out[1]))
        else:
            item = ResponseOutputMessage(id=f"m{n}", type="message", role="assistant", status="completed",
                                         content=[ResponseOutputText(type="output_text", text=out, annotations=[])])
        return ModelResponse(output=[item], usage=Usage(), response_id=None)

    def stream_response(self, *args, **kwargs):
        raise NotImplementedError


def script(items: list[Any]) -> Any:
    last = items[-1]
    if _get(last, "type") == "function_call_output":
        return f"From memory: {_get(last, 'output')}"
    text = str(_get(last, "content"))
    if text.startswith("Please remember"):
        return ("add_memory", {"content": text.removeprefix("Please remember: ")})
    if text.startswith("What"):
        return ("search_memory", {"query": text, "max_results": 2})
    return "Hello!"


def run(agent, text, session):
    return asyncio.run(Runner.run(agent, text, session=session)).final_output


@pytest.fixture
def mx(tmp_path, embedder):
    engine = Mirix(tmp_path / "data", embedder=embedder)
    yield engine
    engine.close()


def test_session_keeps_items_and_turns_become_memories(mx):
    model = ScriptedModel(script)
    session = MirixSession("chat-1", user_id="ada", mx=mx)
    agent = Agent(name="assistant", instructions="Use memory.", model=model, tools=mirix_tools("ada", mx=mx))

    assert run(agent, "Hi, I'm Ada and my brother Tom is a pilot.", session) == "Hello!"
    assert run(agent, "Please remember: I am allergic to peanuts.", session).startswith("From memory: Remembered")
    answer = run(agent, "What am I allergic to?", session)
    assert answer.startswith("From memory: - [") and "allergic to peanuts" in answer
    assert "What am I allergic to" not in answer  # a run's input is remembered after its reply, not before

    # the SDK replays the whole conversation from the session: the third call saw the first turn
    assert any("brother Tom is a pilot" in str(_get(i, "content")) for i in model.inputs[-2])
    items = asyncio.run(session.get_items())
    assert [_get(i, "role") for i in items[:2]] == ["user", "assistant"]
    assert any(_get(i, "type") == "function_call" for i in items)
    assert len(asyncio.run(session.get_items(limit=2))) == 2

    # the turns became memories of the user, tagged with the session
    hits = mx.search("what does Tom do", user_id="ada")
    assert "pilot" in hits[0].text and "openai-agents:chat-1" in hits[0].memory.source_ids

    # a new process sees the same conversation (kept in the data dir); popping and clearing keep memories
    again = MirixSession("chat-1", user_id="ada", mx=mx)
    assert asyncio.run(again.get_items()) == items
    last = asyncio.run(again.pop_item())
    assert last == items[-1] and len(asyncio.run(again.get_items())) == len(items) - 1
    asyncio.run(again.clear_session())
    assert asyncio.run(again.get_items()) == [] and mx.search("pilot", user_id="ada")
    session.close()
    again.close()


def test_core_memory_tools(mx):
    tools = {t.name: t for t in mirix_tools("ada", mx=mx)}
    assert set(tools) == {"search_memory", "add_memory", "read_core_memory", "core_memory_append"}
    assert tools["core_memory_append"].params_json_schema["properties"]["label"]["enum"] == ["human", "persona"]

    def core_script(items):
        last = items[-1]
        if _get(last, "type") == "function_call_output":
            return str(_get(last, "output"))
        if _get(last, "content") == "Note that I prefer tea":
            return ("core_memory_append", {"label": "human", "text": "Prefers tea."})
        return ("read_core_memory", {})

    agent = Agent(name="a", model=ScriptedModel(core_script), tools=list(tools.values()))
    assert asyncio.run(Runner.run(agent, "Note that I prefer tea")).final_output == "[human] Prefers tea."
    assert "Prefers tea." in asyncio.run(Runner.run(agent, "What is in core memory?")).final_output
    assert mx.core_memory(user_id="ada")["human"].value == "Prefers tea."


def test_over_rest(tmp_path, embedder):
    from mirix_py.server import KeyStore, create_app
    from mirix_py.server.thread import ServerThread

    mx = Mirix(tmp_path / "data", embedder=embedder)
    keys = KeyStore(mx.engine)
    key = keys.create(["ada"]).key
    with ServerThread(create_app(mx, keys=keys)) as server:
        session = MirixSession("chat-9", user_id="ada", base_url=server.url, api_key=key)
        agent = Agent(name="assistant", model=ScriptedModel(script),
                      tools=mirix_tools("ada", base_url=server.url, api_key=key))
        run(agent, "Hi, my brother Tom is a pilot.", session)
        assert run(agent, "Please remember: I am allergic to peanuts.", session).startswith("From memory: Remembered")
        assert "allergic to peanuts" in run(agent, "What am I allergic to?", session)
        assert len(asyncio.run(session.get_items())) >= 6  # kept in memory over REST
        session.close()
    assert "pilot" in mx.search("what does Tom do", user_id="ada")[0].text
    mx.close()


def test_example_runs(tmp_path):
    repo = Path(__file__).resolve().parents[2]
    env = {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "ANONYMIZED_TELEMETRY": "False",
           "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, str(repo / "examples" / "openai_agents_session.py"), "--data-dir",
                          str(tmp_path / "mem")], capture_output=True, text=True, timeout=300, env=env, cwd=repo)
    assert out.returncode == 0, out.stderr
    assert "allergic to peanuts" in out.stdout.split("> What am I allergic to?")[1]
