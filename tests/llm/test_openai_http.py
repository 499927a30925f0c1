"""The real `openai` client path: OpenAIChatCompletionClient built from settings, talking over HTTP
to a small OpenAI-compatible server on loopback that answers in the Chat Completions wire format."""

from __future__ import annotations

import json
import re
import runpy
import threading
from pathlib import Path
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from mirix_py.engine import Mirix
from mirix_py.settings import Settings


def reply_for(body: dict) -> dict:
    system = next((m["content"] for m in body["messages"] if m["role"] == "system"), "")
    named = [line for line in system.splitlines() if line.startswith("# agent:")]  # after the batch, if it leads
    agent = named[0].split("agent:", 1)[1].strip() if named else ""
    text = None
    if agent == "meta_memory_manager":
        call = ("trigger_memory_managers", {"memory_types": ["semantic"]})
    elif agent == "semantic_memory_manager":
        batch = system + next(m["content"] for m in body["messages"] if m["role"] == "user")
        ids = [i for i in re.findall(r"\[id=([^\]]+)\]", batch) if not i.startswith("in_")]
        call = ("insert_semantic", {"name": "Tom", "summary": "Tom is a pilot", "source_ids": ids})
    else:
        call = None
        if agent == "topic_extractor":
            text = json.dumps({"topics": ["Tom", "visit"], "start": None, "end": None})
        elif agent == "chat_agent":
            ids = re.findall(r"\[(m[0-9]+)\]", system)  # each memory's reference in the turn
            text = f"Tom, a pilot, is visiting [{ids[0]}]." if ids else "I don't know."
    message: dict = {"role": "assistant", "content": None}
    if call:
        message["tool_calls"] = [{"id": "call_1", "type": "function",
                                  "function": {"name": call[0], "arguments": json.dumps(call[1])}}]
    else:
        message["content"] = text or "nothing"
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": 1700000000, "model": body["model"],
            "choices": [{"index": 0, "finish_reason": "tool_calls" if call else "stop", "message": message}],
            "usage": {"prompt_tokens": 123, "completion_tokens": 17, "total_tokens": 140}}


@pytest.fixture
def openai_server():
    seen: list[dict] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 (http.server API)
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            seen.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
            data = json.dumps(reply_for(body)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1", seen
    server.shutdown()
    server.server_close()


def test_update_flow_over_http(tmp_path, embedder, openai_server, monkeypatch):
    base_url, seen = openai_server
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    settings = Settings(data_dir=tmp_path / "d", llm_provider="openai", llm_model="qwen2.5-7b-instruct",
                        llm_base_url=base_url)
    with Mirix(settings=settings, embedder=embedder) as mx:
        assert mx.mode == "llm" and mx.describe()["llm"] == "OpenAIChatCompletionClient"
        result = mx.add([{"role": "user", "name": "Ada", "id": "m1", "content": "My brother Tom is a pilot."}],
                        user_id="ada", occurred_at=datetime(2024, 1, 1, tzinfo=timezone.utc))
        assert result.status.value == "processed", result.error
        # the model's "Tom is a pilot" repeats the rules' fact about Tom: skipped, one Tom
        assert [m.name for m in mx.list(user_id="ada", memory_types=["semantic"])] == ["Tom"]
        assert any("near repeat of" in r and "Tom" in r for r in result.rejected)
        assert result.usage.llm_calls == 2 and result.usage.prompt_tokens == 246
        assert not result.usage.tokens_estimated
    assert {s["path"] for s in seen} == {"/v1/chat/completions"}
    assert seen[0]["auth"] == "Bearer sk-test-not-real"
    tools = [t["function"]["name"] for t in seen[-1]["body"]["tools"]]
    # the rules' fact about Tom, written before the model ran, is listed: the edit tools are offered too
    assert tools == ["insert_semantic", "update_memory", "delete_memory", "nothing_to_record"]
    # the protocol: the router's one tool forced by name, managers must call a tool, every call bounded
    router, manager = seen[0]["body"], seen[-1]["body"]
    assert router["tool_choice"] == {"type": "function", "function": {"name": "trigger_memory_managers"}}
    assert manager["tool_choice"] == "required"
    assert router["max_tokens"] == 80 and manager["max_tokens"] == 300 and router["temperature"] == 0
    assert not any("seed" in s["body"] for s in seen)  # the server's own unless the settings give one


def test_a_seed_in_the_settings_goes_with_every_call(tmp_path, embedder, openai_server, monkeypatch):
    """`llm_seed`: the router, the managers, the topics and the chat's answer all ask for it, so a
    server can fix its sampler's draws with it."""
    base_url, seen = openai_server
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-real")
    settings = Settings(data_dir=tmp_path / "d", llm_provider="openai", llm_model="qwen2.5-7b-instruct",
                        llm_base_url=base_url, llm_seed=5)
    with Mirix(settings=settings, embedder=embedder) as mx:
        assert mx.add([{"role": "user", "name": "Ada", "id": "m1", "content": "My brother Tom is a pilot."}],
                      user_id="ada").status.value == "processed"
        reply = mx.chat("Who is Tom?", user_id="ada", remember=False)
        assert reply.answer
    agents = [re.search(r"# agent: (\w+)", next(m["content"] for m in s["body"]["messages"] if m["role"] == "system"))
              for s in seen]
    assert {a.group(1) for a in agents if a} >= {"meta_memory_manager", "semantic_memory_manager", "topic_extractor",
                                                 "chat_agent"}
    assert [s["body"].get("seed") for s in seen] == [5] * len(seen)


def test_llm_example_runs_against_the_endpoint(tmp_path, openai_server, monkeypatch, capsys):
    base_url, seen = openai_server
    monkeypatch.setenv("MIRIX_LLM_PROVIDER", "openai")
    monkeypatch.setenv("MIRIX_LLM_MODEL", "llama3.1-8b")
    monkeypatch.setenv("MIRIX_LLM_BASE_URL", base_url)
    example = runpy.run_path(str(Path(__file__).resolve().parents[2] / "examples" / "llm_loop.py"))
    assert example["main"](str(tmp_path / "ex")) == 0
    out = capsys.readouterr().out
    # the fact restates the one turn it comes from, which is in the prompt in Ada's words: the turn is cited
    assert "update: processed" in out and "Tom, a pilot, is visiting [epi_" in out
    assert "cited: ['epi_" in out


def test_a_wordless_tool_call_goes_back_to_the_server_with_string_content(openai_server):
    """llama-cpp-python's server refuses an assistant message whose content is null (a 500), which autogen
    sends for a tool call the model made without words: the chat's round after a search must still go."""
    import asyncio

    from autogen_core import FunctionCall
    from autogen_core.models import (AssistantMessage, FunctionExecutionResult, FunctionExecutionResultMessage,
                                     SystemMessage, UserMessage)
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    from mirix_py.llm.meter import Meter
    from mirix_py.llm.metering import MeteredClient

    url, seen = openai_server
    inner = OpenAIChatCompletionClient(model="local", base_url=url, api_key="none", model_info={
        "vision": False, "function_calling": True, "json_output": False, "family": "unknown",
        "structured_output": False})
    meter = Meter()
    call = FunctionCall(id="call_1", name="search_in_memory", arguments='{"memory_type": "episodic", "query": "Tom"}')
    messages = [SystemMessage(content="# agent: chat_agent\nAnswer."), UserMessage(content="Who is Tom?", source="user"),
                AssistantMessage(content=[call], source="chat_agent"),
                FunctionExecutionResultMessage(content=[FunctionExecutionResult(
                    call_id="call_1", content="[sem_1] Tom is a pilot", name="search_in_memory", is_error=False)])]
    result = asyncio.run(MeteredClient(inner, meter, "chat_agent").create(messages))
    sent = seen[-1]["body"]["messages"]
    assert sent[2]["role"] == "assistant" and sent[2]["tool_calls"][0]["id"] == "call_1"
    assert sent[2]["content"] == ""
    assert result.content and meter.summary()["llm_calls"] == 1
    # a call that came with words keeps them
    worded = AssistantMessage(content=[call], source="chat_agent", thought="Searching.")
    asyncio.run(MeteredClient(inner, meter, "chat_agent").create([*messages[:2], worded, messages[3]]))
    assert seen[-1]["body"]["messages"][2]["content"] == "Searching."


def test_the_seed_comes_from_the_environment(monkeypatch):
    from pydantic import ValidationError

    monkeypatch.setenv("MIRIX_LLM_SEED", "5")
    assert Settings.from_env().llm_seed == 5
    monkeypatch.setenv("MIRIX_LLM_SEED", "many")
    with pytest.raises(ValidationError, match="llm_seed"):
        Settings.from_env()
    monkeypatch.delenv("MIRIX_LLM_SEED")
    assert Settings.from_env().llm_seed is None
