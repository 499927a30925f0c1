"""A scripted ChatCompletionClient: answers come from a Python function of the request.

Unlike autogen's ReplayChatCompletionClient (a fixed sequence), the answer can depend on which
agent is asking, so concurrent managers get the right replies in any order. Used by the tests and
by the orchestration benchmark; it goes through autogen's model-client interface like any model.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from typing import Literal, Any, AsyncGenerator, Callable, Mapping, Sequence

from autogen_core import CancellationToken, FunctionCall
from autogen_core.models import (
    ChatCompletionClient, CreateResult, LLMMessage, ModelFamily, ModelInfo, RequestUsage, SystemMessage,
)
from autogen_core.tools import Tool, ToolSchema

from mirix_py.llm.meter import AGENT_HEADING
from mirix_py.llm.metering import _message_text, estimate_tokens


@dataclass
class ScriptRequest:
    """What the script sees: the system prompt, the messages and the offered tool names."""

    system: str
    messages: Sequence[LLMMessage]
    tool_names: list[str]
    json_output: Any
    tool_choice: Any = "auto"
    extra_create_args: Mapping[str, Any] | None = None
    tool_schemas: Sequence[Mapping[str, Any]] = ()  # as sent: the enums a constrained server would enforce

    @property
    def last_text(self) -> str:
        return _message_text(self.messages[-1]) if self.messages else ""

    @property
    def lead(self) -> str:
        """What the system prompt holds before the agent's instructions: the batch, when it leads."""
        head, sep, _ = self.system.partition(AGENT_HEADING)
        return head.strip() if sep else ""

    @property
    def task_text(self) -> str:
        """The batch wherever the prompt puts it (leading the system prompt, or in the task), then
        the last message: what a script reads to decide its reply."""
        return "\n\n".join(t for t in (self.lead, self.last_text) if t)

    @property
    def agent(self) -> str:
        """The agent name a system prompt declares on a line of its own ("# agent: NAME"): its first,
        or the first after the batch when the batch leads."""
        line = next((line for line in self.system.splitlines() if line.startswith(AGENT_HEADING)), AGENT_HEADING)
        return line.removeprefix(AGENT_HEADING).strip()


ScriptReply = str | list[tuple[str, dict[str, Any]]] | CreateResult
Script = Callable[[ScriptRequest], ScriptReply]


def tool_calls(*calls: tuple[str, dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return list(calls)


class ScriptedChatCompletionClient(ChatCompletionClient):
    def __init__(self, script: Script, *, function_calling: bool = True, vision: bool = False,
                 delay_s: float = 0.0) -> None:
        self._script = script
        self._delay = delay_s
        self._info = ModelInfo(vision=vision, function_calling=function_calling, json_output=True,
                               family=ModelFamily.UNKNOWN, structured_output=False)
        self._usage = RequestUsage(prompt_tokens=0, completion_tokens=0)
        self._total = RequestUsage(prompt_tokens=0, completion_tokens=0)
        self.requests: list[ScriptRequest] = []
        self.intervals: list[tuple[str, float, float]] = []  # (agent, start, end) of every call
        self._counter = 0

    async def create(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = [],
                     tool_choice: Any = "auto", json_output: Any = None, extra_create_args: Mapping[str, Any] = {},
                     cancellation_token: CancellationToken | None = None) -> CreateResult:
        system = "\n".join(m.content for m in messages if isinstance(m, SystemMessage) and isinstance(m.content, str))
        schemas = [dict(t) if isinstance(t, dict) else dict(t.schema) for t in tools]
        names = [str(s["name"]) for s in schemas]
        choice = getattr(tool_choice, "name", tool_choice)  # a forced Tool is recorded by its name
        request = ScriptRequest(system=system, messages=list(messages), tool_names=names, json_output=json_output,
                                tool_choice=choice, extra_create_args=dict(extra_create_args), tool_schemas=schemas)
        self.requests.append(request)
        started = time.perf_counter()
        if self._delay:
            await asyncio.sleep(self._delay)
        reply = self._script(request)
        self.intervals.append((request.agent, started, time.perf_counter()))
        if isinstance(reply, CreateResult):
            return reply
        if isinstance(reply, str):
            content: Any = reply
            finish: Literal["stop", "function_calls"] = "stop"
            completion = estimate_tokens(reply)
        else:
            content = []
            for name, args in reply:
                self._counter += 1
                arguments = args if isinstance(args, str) else json.dumps(args)
                content.append(FunctionCall(id=f"call_{self._counter}", name=name, arguments=arguments))
            finish = "function_calls"
            completion = sum(estimate_tokens(c.arguments) + 2 for c in content)
        prompt = sum(estimate_tokens(_message_text(m)) for m in messages)
        self._usage = RequestUsage(prompt_tokens=prompt, completion_tokens=completion)
        self._total = RequestUsage(prompt_tokens=self._total.prompt_tokens + prompt,
                                   completion_tokens=self._total.completion_tokens + completion)
        # usage left at zero on purpose: the meter then counts the prompt exactly as for a local model
        return CreateResult(finish_reason=finish, content=content, usage=RequestUsage(prompt_tokens=0, completion_tokens=0),
                            cached=False)

    def create_stream(self, messages: Sequence[LLMMessage], **kwargs: Any) -> AsyncGenerator[str | CreateResult, None]:
        async def single() -> AsyncGenerator[str | CreateResult, None]:
            yield await self.create(messages, **kwargs)

        return single()

    async def close(self) -> None:
        return None

    def actual_usage(self) -> RequestUsage:
        return self._usage

    def total_usage(self) -> RequestUsage:
        return self._total

    def count_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = []) -> int:
        return sum(estimate_tokens(_message_text(m)) for m in messages)

    def remaining_tokens(self, messages: Sequence[LLMMessage], *, tools: Sequence[Tool | ToolSchema] = []) -> int:
        return 128_000 - self.count_tokens(messages, tools=tools)

    @property
    def capabilities(self) -> Any:
        return self._info

    @property
    def model_info(self) -> ModelInfo:
        return self._info
