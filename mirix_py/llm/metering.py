"""Accounting of LLM calls: count, prompt/completion tokens and wall time, per agent.

Token counts come from the provider's `usage` when it reports them; otherwise they are estimated
offline (tiktoken downloads its encodings at first use, so it is not an option here).
"""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import dataclass, field
from typing import Any, AsyncGenerator, Mapping, Sequence

from autogen_core import CancellationToken
from autogen_core.models import ChatCompletionClient, CreateResult, LLMMessage, ModelInfo, RequestUsage
from autogen_core.tools import Tool, ToolSchema

_PIECE = re.compile(r"\w+|[^\w\s]", re.UNICODE)


def estimate_tokens(text: str) -> int:
    """About one token per word piece or punctuation mark: close to BPE counts for English."""
    return len(_PIECE.findall(text))


def _message_text(message: Any) -> str:
    content = getattr(message, "content", message)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(_message_text(part) if not isinstance(part, str) else part for part in content)
    try:
        return json.dumps(content, default=str)
    except TypeError:
        return str(content)


def _tool_text(tools: Sequence[Tool | ToolSchema]) -> str:
    schemas = [t.schema if hasattr(t, "schema") else t for t in tools]
    return json.dumps(schemas, default=str)


@dataclass(frozen=True)
class CallRecord:
    agent: str
    prompt_tokens: int
    completion_tokens: int
    started: float
    ended: float
    estimated: bool

    @property
    def seconds(self) -> float:
        return self.ended - self.started


@dataclass
class Meter:
    """Collects the calls of one unit of work (a batch or a chat)."""

    calls: list[CallRecord] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, call: CallRecord) -> None:
        with self._lock:
            self.calls.append(call)

    def summary(self) -> dict[str, Any]:
        return {
            "llm_calls": len(self.calls),
            "prompt_tokens": sum(c.prompt_tokens for c in self.calls),
            "completion_tokens": sum(c.completion_tokens for c in self.calls),
            "sequential_rounds": sequential_rounds(self.calls),
            "tokens_estimated": any(c.estimated for c in self.calls),
        }


def sequential_rounds(calls: Sequence[CallRecord]) -> int:
    """Waves of calls: a call that starts while another is running joins its wave; one that starts
    after every earlier call ended opens a new one. The LLM latency on the critical path, in calls."""
    rounds = 0
    frontier = float("-inf")
    for call in sorted(calls, key=lambda c: c.started):
        if call.started >= frontier:
            rounds += 1
            frontier = call.ended
        else:
            frontier = max(frontier, call.ended)
    return rounds


class MeteredClient(ChatCompletionClient):
    """Wraps any ChatCompletionClient and records each call into a Meter under an agent label."""

    def __init__(self, inner: ChatCompletionClient, meter: Meter, agent: str,
                 extra_args: Mapping[str, Any] | None = None) -> None:
        self._inner = inner
        self._meter = meter
        self._agent = agent
        self._extra = dict(extra_args or {})  # e.g. the agent's completion bound, sent with every call

    async def create(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = [],
                     tool_choice: Any = "auto", json_output: Any = None, extra_create_args: Mapping[str, Any] = {},
                     cancellation_token: CancellationToken | None = None) -> CreateResult:
        started = time.perf_counter()
        kwargs: dict[str, Any] = {"tools": tools, "json_output": json_output,
                                  "extra_create_args": {**self._extra, **extra_create_args},
                                  "cancellation_token": cancellation_token}
        if tool_choice != "auto":
            kwargs["tool_choice"] = tool_choice
        result = await self._inner.create(messages, **kwargs)
        ended = time.perf_counter()
        usage = result.usage
        estimated = not (usage and (usage.prompt_tokens or usage.completion_tokens))
        if estimated:
            prompt = sum(estimate_tokens(_message_text(m)) for m in messages) + estimate_tokens(_tool_text(tools))
            completion = estimate_tokens(_message_text(result))
        else:
            prompt, completion = usage.prompt_tokens, usage.completion_tokens
        self._meter.record(CallRecord(self._agent, prompt, completion, started, ended, estimated))
        return result

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
