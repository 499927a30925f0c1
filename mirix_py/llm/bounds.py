"""Bounded model calls, and the protocol features a server turned out to take.

Every call an agent makes goes through `bounded_create`: a completion-token bound and a timeout
(`CallBounds`), passed to the server where its client takes them and enforced here in any case; a
reply cut at its bound, a timeout or an API error is a `ModelCallFailed` with its reason (a failed
round), never a hang.

`ServerFeatures` starts from what the settings say and learns from the server's answers: a
server that refuses `tool_choice: "required"` (llama-cpp-python answers 500) gets `auto`; a
response format it refuses (`json_schema` on llama-cpp-python, which takes `json_object` with a
`schema`) is dropped for the next one. One instance is shared by the agents of an engine.
"""

from __future__ import annotations

import asyncio
import threading
from dataclasses import dataclass, replace
from typing import Any, Mapping, Sequence

from typing import TYPE_CHECKING

from mirix_py.errors import ModelCallFailed  # its home before: callers import it from here
from mirix_py.llm.meter import Meter

if TYPE_CHECKING:
    from autogen_core.models import ChatCompletionClient, CreateResult, LLMMessage

STRUCTURED_MODES = ("json_schema", "json_object_schema", "none")
DEFAULT_MAX_TOKENS = 512
DEFAULT_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class CallBounds:
    max_tokens: int = DEFAULT_MAX_TOKENS
    timeout_s: float = DEFAULT_TIMEOUT_S
    temperature: float | None = None
    seed: int | None = None  # sent with every call, for servers whose sampling it fixes

    def for_agent(self, model: Mapping[str, Any]) -> "CallBounds":
        """An agent definition's `model: {max_tokens, timeout_s, temperature}` override the engine's."""
        temperature = model.get("temperature", self.temperature)
        return replace(self, max_tokens=int(model.get("max_tokens", self.max_tokens)),
                       timeout_s=float(model.get("timeout_s", self.timeout_s)),
                       temperature=None if temperature is None else float(temperature))


class ServerFeatures:
    """Which protocol features to use with one server; demoted when the server refuses one."""

    def __init__(self, structured: str = "auto", tool_choice_required: bool = True) -> None:
        if structured not in ("auto", *STRUCTURED_MODES):
            raise ValueError(f"structured output must be auto or one of {STRUCTURED_MODES}, not {structured!r}")
        self._modes = list(STRUCTURED_MODES) if structured == "auto" else [structured]
        self.tool_choice_required = tool_choice_required
        self._lock = threading.Lock()

    @property
    def structured(self) -> str:
        return self._modes[0]

    def response_format(self, schema: dict | None) -> dict | None:
        mode = self.structured
        if schema is None or mode == "none":
            return None
        if mode == "json_schema":
            return {"type": "json_schema", "json_schema": {"name": "tool_calls", "schema": schema}}
        return {"type": "json_object", "schema": schema}

    def drop_structured(self, mode: str) -> bool:
        """Stop using `mode`; False when there is nothing left to fall back to."""
        with self._lock:
            if self._modes[0] == mode and len(self._modes) > 1:
                self._modes.pop(0)
                return True
            return False

    def drop_required(self) -> None:
        self.tool_choice_required = False


def _status(exc: Exception) -> int | None:
    status = getattr(exc, "status_code", None)
    return status if isinstance(status, int) else None


def _refused(exc: Exception) -> bool:
    """An API error that says "not this request" (not auth, quota or a missing model)."""
    status = _status(exc)
    return status is not None and status not in (401, 403, 404, 429) and 400 <= status < 600


def _takes_openai_args(client: ChatCompletionClient) -> bool:
    inner = client
    while hasattr(inner, "_inner"):  # metering wrappers
        inner = inner._inner
    module = type(inner).__module__
    return module.startswith("autogen_ext.models.openai") or module.startswith("mirix_py.llm.scripted")


def provider_args(client: ChatCompletionClient, bounds: CallBounds, response_format: dict | None) -> dict[str, Any]:
    """The bound and format as the client's `extra_create_args` (OpenAI-compatible clients)."""
    if not _takes_openai_args(client):
        return {}
    args: dict[str, Any] = {"max_tokens": bounds.max_tokens, "timeout": bounds.timeout_s}
    if bounds.temperature is not None:
        args["temperature"] = bounds.temperature
    if bounds.seed is not None:
        args["seed"] = bounds.seed
    if response_format is not None:
        args["response_format"] = response_format
    return args


def _being_cancelled() -> bool:
    """Whether the running task itself was asked to stop (a CancelledError raised by a callee is not)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def bounded_create(client: ChatCompletionClient, messages: Sequence[LLMMessage], *, meter: Meter, agent: str,
                         bounds: CallBounds, tools: Sequence[Any] = (), tool_choice: Any = "auto",
                         structured: ServerFeatures | None = None, schema: dict | None = None,
                         instead_of_required: Any = None) -> CreateResult:
    """One metered call under `bounds`; raises ModelCallFailed with the reason when it yields nothing usable.

    `instead_of_required`: the tool to force, sent alone, where the server does not take
    `tool_choice="required"` (else `auto`, which a weak server may answer with a tool's name only)."""
    from mirix_py.llm.metering import MeteredClient

    features = structured or ServerFeatures(structured="none")
    metered = MeteredClient(client, meter, agent)
    for _ in range(4):  # each retry drops one refused feature
        choice, offered = tool_choice, list(tools)
        if choice == "required" and not features.tool_choice_required:
            choice = instead_of_required or "auto"
            if instead_of_required is not None:  # a forced call can use no other tool: none is shown
                offered = [t for t in tools if getattr(t, "name", None) == getattr(choice, "name", choice)]
        mode = features.structured
        extra = provider_args(client, bounds, features.response_format(schema))
        try:
            result = await asyncio.wait_for(
                metered.create(list(messages), tools=offered, tool_choice=choice, extra_create_args=extra),
                timeout=bounds.timeout_s + 1)  # the client's own timeout fires first where it has one
        except asyncio.TimeoutError:
            raise ModelCallFailed(f"the call timed out after {bounds.timeout_s:g} s") from None
        except asyncio.CancelledError:
            if _being_cancelled():  # our caller cancels (shutdown, a caller's timeout): let it
                raise
            # the client's own cancellation (a dropped stream, a cancelled request): a failed call like any
            # other, so the batch is degraded and the rules' writes are reported, not a failed batch
            raise ModelCallFailed("the model call failed: the client cancelled it") from None
        except Exception as exc:  # the client's own errors: HTTP, connection, validation
            if _refused(exc) and choice == "required" and tools:
                features.drop_required()
                continue
            if _refused(exc) and "response_format" in extra and features.drop_structured(mode):
                continue
            if "timed out" in str(exc).lower() or type(exc).__name__ in ("APITimeoutError", "ReadTimeout"):
                raise ModelCallFailed(f"the call timed out after {bounds.timeout_s:g} s") from exc
            raise ModelCallFailed(f"the model call failed: {type(exc).__name__}: {str(exc)[:300]}") from exc
        if result.finish_reason == "length":
            raise ModelCallFailed(f"the reply ran into its bound of {bounds.max_tokens} completion tokens: "
                                  "send fewer, shorter calls")
        return result
    raise ModelCallFailed("the server refused every protocol variant of this call")


__all__ = ["CallBounds", "ModelCallFailed", "ServerFeatures", "bounded_create", "provider_args"]
