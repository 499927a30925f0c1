"""LLM access through autogen-core's `ChatCompletionClient`: building clients from settings,
a scripted client for tests and benchmarks, call/token/time accounting, and parsing of tool calls
that weak models write as text."""

from mirix_py.llm.clients import build_model_client
from mirix_py.llm.metering import CallRecord, Meter, MeteredClient, estimate_tokens
from mirix_py.llm.scripted import ScriptedChatCompletionClient

__all__ = ["CallRecord", "Meter", "MeteredClient", "ScriptedChatCompletionClient", "build_model_client",
           "estimate_tokens"]
