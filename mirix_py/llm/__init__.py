"""LLM access through autogen-core's `ChatCompletionClient`: building clients from settings,
a scripted client for tests and benchmarks, call/token/time accounting, and parsing of tool calls
that weak models write as text. autogen is imported only when a client is built or wrapped, so
offline use needs none of it."""

from typing import Any

from mirix_py.llm.meter import CallRecord, Meter, estimate_tokens

_LAZY = {"build_model_client": "mirix_py.llm.clients", "MeteredClient": "mirix_py.llm.metering",
         "ScriptedChatCompletionClient": "mirix_py.llm.scripted"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(name)


__all__ = ["CallRecord", "Meter", "MeteredClient", "ScriptedChatCompletionClient", "build_model_client",
           "estimate_tokens"]
