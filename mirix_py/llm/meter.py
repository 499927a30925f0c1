"""Accounting of LLM calls: count, prompt/completion tokens and wall time, per agent. No model
library is needed to hold or sum the figures (offline use imports this, not autogen).

Token counts come from the provider's `usage` when it reports them; otherwise they are estimated
offline (tiktoken downloads its encodings at first use, so it is not an option here).
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Sequence

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


def _tool_text(tools: Sequence[Any]) -> str:
    schemas = [t.schema if hasattr(t, "schema") else t for t in tools]
    return json.dumps(schemas, default=str)


BATCH_MARKER = "New inputs ("  # where a manager's task turns from the memories it may edit to the batch
AGENT_HEADING = "# agent:"  # the line that opens an agent's instructions and names the agent


def agent_heading(name: str) -> str:
    """The heading line of agent `name`'s instructions: scripts and the meter find the agent by it."""
    return f"{AGENT_HEADING} {name}"


AGENT_MARKER = f"\n\n{AGENT_HEADING} "  # where a system prompt led by the batch turns to the agent's instructions


def prompt_parts(messages: Sequence[Any], tools: Sequence[Any] = ()) -> dict[str, int]:
    """Estimated tokens of a prompt by part: the agent's instructions (`system`), the tool schemas
    (`tools`; in the system prompt for a model without tool calls), the memories listed with the task
    and the ask that follows a leading batch (`memories`), the batch (`batch`, leading the system
    prompt or in the task), and everything after the first task (`correction`)."""
    parts = {"system": 0, "tools": estimate_tokens(_tool_text(tools)) if tools else 0, "memories": 0, "batch": 0,
             "correction": 0}
    seen_task = batch_led = False
    for message in messages:
        text = _message_text(message)
        if type(message).__name__ == "SystemMessage":
            if text.startswith(BATCH_MARKER):  # the batch leads (`batch_first`), the instructions follow
                batch, sep, text = text.partition(AGENT_MARKER)
                parts["batch"] += estimate_tokens(batch)
                text = sep + text
                batch_led = True
            head, sep, schemas = text.partition("The tools:\n")
            parts["system"] += estimate_tokens(head)
            parts["tools"] += estimate_tokens(schemas) if sep else 0
        elif not seen_task:
            seen_task = True
            memories, sep, batch = text.partition(BATCH_MARKER)
            if not sep:  # the task is the batch, or, when the batch led, the listed memories and the ask
                memories, batch = (text, "") if batch_led else ("", text)
            parts["memories"] += estimate_tokens(memories)
            parts["batch"] += estimate_tokens(sep + batch)
        else:
            parts["correction"] += estimate_tokens(text)
    return parts


@dataclass(frozen=True)
class CallRecord:
    agent: str
    prompt_tokens: int
    completion_tokens: int
    started: float
    ended: float
    estimated: bool
    parts: dict[str, int] = field(default_factory=dict)  # `prompt_parts`: estimated tokens by part

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
