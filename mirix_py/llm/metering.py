"""`MeteredClient`: any autogen `ChatCompletionClient`, each call recorded into a `Meter`
(`mirix_py.llm.meter`, where the figures live without autogen)."""

from __future__ import annotations

import asyncio
import time
from typing import Any, AsyncGenerator, Awaitable, Mapping, Sequence

from autogen_core import CancellationToken
from autogen_core.models import AssistantMessage, ChatCompletionClient, CreateResult, LLMMessage, ModelInfo, RequestUsage
from autogen_core.tools import Tool, ToolSchema

from mirix_py.errors import ModelCallFailed
from mirix_py.llm.meter import (  # re-exported for callers of the old home
    CallRecord, Meter, _message_text, _tool_text, estimate_tokens, prompt_parts, sequential_rounds,
)


def with_text_content(message: LLMMessage) -> LLMMessage:
    """`message`, or a tool call the model made without words, given empty words: autogen sends such a
    call with `content: null`, which OpenAI accepts and llama-cpp-python's server refuses with a 500
    (its schema wants a string), so the round after a search would fail there."""
    if isinstance(message, AssistantMessage) and isinstance(message.content, list) and message.thought is None:
        return message.model_copy(update={"thought": ""})
    return message


class MeteredClient(ChatCompletionClient):
    """Wraps any ChatCompletionClient and records each call into a Meter under an agent label.
    `timeout_s`: each call is given up after that long, a ModelCallFailed (None: the caller bounds it)."""

    def __init__(self, inner: ChatCompletionClient, meter: Meter, agent: str,
                 extra_args: Mapping[str, Any] | None = None, timeout_s: float | None = None) -> None:
        self._inner = inner
        self._meter = meter
        self._agent = agent
        self._extra = dict(extra_args or {})  # e.g. the agent's completion bound, sent with every call
        self._timeout_s = timeout_s
        self.last_finish_reason: str | None = None  # the newest reply's ("length": cut at its token bound)

    async def create(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = [],
                     tool_choice: Any = "auto", json_output: Any = None, extra_create_args: Mapping[str, Any] = {},
                     cancellation_token: CancellationToken | None = None) -> CreateResult:
        started = time.perf_counter()
        kwargs: dict[str, Any] = {"tools": tools, "json_output": json_output,
                                  "extra_create_args": {**self._extra, **extra_create_args},
                                  "cancellation_token": cancellation_token}
        if tool_choice != "auto":
            kwargs["tool_choice"] = tool_choice
        result = await self._within_time(self._inner.create([with_text_content(m) for m in messages], **kwargs))
        self.last_finish_reason = result.finish_reason
        ended = time.perf_counter()
        usage = result.usage
        estimated = not (usage and (usage.prompt_tokens or usage.completion_tokens))
        if estimated:
            prompt = sum(estimate_tokens(_message_text(m)) for m in messages) + estimate_tokens(_tool_text(tools))
            completion = estimate_tokens(_message_text(result))
        else:
            prompt, completion = usage.prompt_tokens, usage.completion_tokens
        self._meter.record(CallRecord(self._agent, prompt, completion, started, ended, estimated,
                                      prompt_parts(messages, tools)))
        return result

    async def _within_time(self, call: Awaitable[CreateResult]) -> CreateResult:
        """The call's result, or ModelCallFailed once `timeout_s` has passed."""
        if self._timeout_s is None:
            return await call
        try:
            return await asyncio.wait_for(call, self._timeout_s)
        except asyncio.TimeoutError:
            raise ModelCallFailed(f"the {self._agent} call timed out after {self._timeout_s:g} s") from None

    def create_stream(self, messages: Sequence[LLMMessage], **kwargs: Any) -> AsyncGenerator[str | CreateResult, None]:
        async def single() -> AsyncGenerator[str | CreateResult, None]:
            yield await self.create(messages, **kwargs)

        return single()

    async def close(self) -> None:
        return None  # the inner client belongs to the engine

    def actual_usage(self) -> RequestUsage:
        return self._inner.actual_usage()

    def total_usage(self) -> RequestUsage:
        return self._inner.total_usage()

    def count_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = []) -> int:
        return sum(estimate_tokens(_message_text(m)) for m in messages) + estimate_tokens(_tool_text(tools))

    def remaining_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = []) -> int:
        return self._inner.remaining_tokens(messages, tools=tools)

    @property
    def capabilities(self) -> Any:  # deprecated in autogen, kept for the abstract interface
        return self._inner.model_info

    @property
    def model_info(self) -> ModelInfo:
        return self._inner.model_info


__all__ = ["CallRecord", "Meter", "MeteredClient", "estimate_tokens", "sequential_rounds"]
