"""Run one tool-calling agent through autogen's `ChatCompletionClient` protocol, bounded and checked.

One round: the definition's system prompt and the batch go to the model with the agent's typed
`FunctionTool`s. The protocol is used where the server offers it:
- `tool_choice` forces a call: the router's one tool by name, `required` for managers (which have
  `nothing_to_record` for an empty batch);
- without native tool calls, the reply is JSON constrained to the tool-call schema when the server
  takes a JSON schema (`ServerFeatures`), else free text that `parse_text_tool_calls` reads;
- every call is bounded (`CallBounds`: completion tokens and a timeout).
Every call a round makes is validated by its tool (arguments, ids, grounding); if anything was
rejected, or the call failed or ran into its bound, the round's operations are discarded and the
model gets one correction round with the reasons. If that fails too, `AgentFailed` carries them.

autogen's `AssistantAgent` is not used here: it takes no per-call `tool_choice`, completion bound
or response format, which are what keep a weak model's rounds valid and bounded.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from autogen_core import CancellationToken, FunctionCall
from autogen_core.models import (
    AssistantMessage, ChatCompletionClient, CreateResult, FunctionExecutionResult, LLMMessage, SystemMessage,
    UserMessage,
)
from autogen_core.tools import FunctionTool
from pydantic import ValidationError

from mirix_py.agents.definitions import AgentDefinition
from mirix_py.llm.bounds import CallBounds, ModelCallFailed, ServerFeatures, bounded_create
from mirix_py.llm.meter import agent_heading
from mirix_py.llm.metering import Meter
from mirix_py.llm.toolcalls import ToolCallParseError, parse_text_tool_calls, tool_calls_schema

_FUNCTIONS_PREFIX = re.compile(r"^\s*functions\.([A-Za-z_]\w*)\s*:?\s*$")


class AgentFailed(RuntimeError):
    pass


class ToolRefusal(ValueError):
    """A tool call whose form was right but whose content the engine will not store (not grounded in
    the batch, a message copied, a value that is no secret): the call is dropped with its reason and
    the round's other calls stand. A correction round is for calls the model can fix (schema, ids);
    a weak model asked again for better content repeated it."""


@dataclass
class RoundOutcome:
    accepted: int = 0
    errors: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    called: bool = False


def system_prompt(definition: AgentDefinition, tools: Sequence[FunctionTool], function_calling: bool,
                  lead: str | None = None) -> str:
    """The agent's instructions, after `lead` when given (see `run_tool_agent`), then, for a model
    without tool calls, the tool schemas and the reply's form."""
    prompt = f"{agent_heading(definition.name)}\n{definition.system_prompt}"
    if lead:
        prompt = f"{lead}\n\n{prompt}"
    if function_calling:
        return prompt
    schemas = json.dumps([t.schema for t in tools], separators=(",", ":"))
    return (f"{prompt}\n\nYou cannot call tools directly. Reply with only a JSON object of the form "
            '{"tool_calls": [{"name": "<tool>", "arguments": {...}}]}. The tools:\n' + schemas)


def _as_user_message(task: Any) -> UserMessage:
    if isinstance(task, str):
        return UserMessage(content=task, source="user")
    content = getattr(task, "content", task)  # an agentchat MultiModalMessage: text and images
    return UserMessage(content=list(content) if isinstance(content, list) else str(content), source="user")


def _loads_or_text(arguments: Any) -> Any:
    try:
        return json.loads(arguments) if isinstance(arguments, str) else arguments
    except (ValueError, RecursionError):
        return arguments


def _schema_error(error: Any) -> str:
    """One pydantic error as the model can act on it: the field, what it should be, what it sent."""
    where = ".".join(map(str, error["loc"]))
    if "secret" in where:  # a value offered as a secret is not repeated in prompts, logs or reasons
        return f"{where}: {error['msg']}"
    return f"{where}: {error['msg']} (got {repr(error.get('input'))[:60]})"


def unescaped(value: Any, key: str = "") -> Any:
    """Arguments with HTML character references decoded ("It&#39;s" -> "It's"): a local server's
    replies carry them where the messages hold the character, and a text written that way is neither
    found by its words nor recognised as a copy. A secret is left as sent (it must match a message
    character for character)."""
    if isinstance(value, str):
        return value if "secret" in key or "&" not in value else html.unescape(value)
    if isinstance(value, dict):
        return {k: unescaped(v, str(k)) for k, v in value.items()}
    if isinstance(value, list):
        return [unescaped(v, key) for v in value]
    return value


async def _run_calls(calls: Sequence[tuple[str, str, Any]], by_name: dict[str, FunctionTool],
                     outcome: RoundOutcome) -> list[FunctionExecutionResult]:
    """Run (call id, name, arguments) through the tools; collect what each said."""
    results = []
    for call_id, name, arguments in calls:
        outcome.called = True
        if name not in by_name:
            message = f"unknown tool {name!r}; available: {sorted(by_name)}"
            outcome.errors.append(message)
            results.append(FunctionExecutionResult(call_id=call_id, content=message, is_error=True, name=name))
            continue
        try:
            args = json.loads(arguments) if isinstance(arguments, str) else arguments
            if not isinstance(args, dict):
                raise ValueError("arguments must be a JSON object")
            args = unescaped(args)
            said = await by_name[name].run_json(args, CancellationToken())
            outcome.accepted += 1
            results.append(FunctionExecutionResult(call_id=call_id, content=str(said), is_error=False, name=name))
        except ToolRefusal as exc:  # dropped, with its reason; the round goes on
            message = f"{name}: {exc}"
            outcome.refused.append(message)
            results.append(FunctionExecutionResult(call_id=call_id, content=f"refused: {exc}", is_error=True,
                                                   name=name))
        except ValidationError as exc:  # the arguments do not fit the schema (an id or a value not offered)
            message = f"{name}: " + "; ".join(_schema_error(e) for e in exc.errors())
            outcome.errors.append(message)
            results.append(FunctionExecutionResult(call_id=call_id, content=message, is_error=True, name=name))
        except Exception as exc:  # grounding and other errors of any kind go back to the model
            message = f"{name}: {exc}"
            outcome.errors.append(message)
            results.append(FunctionExecutionResult(call_id=call_id, content=message, is_error=True, name=name))
    return results


# Native function calling and free text have no schema to bound a reply's calls, as a JSON schema
# has (`max_calls`): a reply may hold this many times as many before the rest are refused.
CALLS_PER_REPLY_FACTOR = 4
# A reason kept for a refused call or a failed round: what the model sent (a tool's name, a value) is
# quoted in some, and a runaway reply's would otherwise be stored whole with the input.
REASON_CHARS = 500


def _capped(calls: list[Any], cap: int, outcome: RoundOutcome) -> list[Any]:
    """A runaway reply's first `cap` calls; the rest are refused, once, for all of them."""
    if len(calls) > cap:
        outcome.refused.append(f"{len(calls) - cap} call(s) past the first {cap} of one reply were not run")
        return calls[:cap]
    return calls


def _brief(reason: str) -> str:
    """`reason` cut to `REASON_CHARS`."""
    return reason if len(reason) <= REASON_CHARS else reason[:REASON_CHARS - 1] + "…"


async def run_tool_agent(definition: AgentDefinition, client: ChatCompletionClient, tools: Sequence[FunctionTool],
                         task: Any, meter: Meter, *, begin_round: Callable[[], None] = lambda: None,
                         rollback_round: Callable[[], None] = lambda: None, force: str | None = None,
                         bounds: CallBounds | None = None, structured: ServerFeatures | None = None,
                         max_calls: int = 8, rejected: list[str] | None = None,
                         prefer: str | None = None, lead: str | None = None) -> int:
    """Returns the number of tool calls accepted in the final round; raises AgentFailed.

    `force`: the one tool the model must call (the router's), else any tool is required. `task` is
    the batch as text, or a `MultiModalMessage` (text and frames) for a vision model. `rejected`
    collects the reasons of every refused call or failed round. `prefer`: the tool forced (and sent
    alone) where the server takes no `tool_choice="required"`: one call instead of a name and a call.
    `lead`: text every agent of a batch reads (the batch), put first in the system prompt. A server
    that keeps the previous prompt's state (llama.cpp) then reads it once a batch, not once a call:
    the agents' own instructions and tools differ from their first token.
    """
    bounds = bounds or CallBounds()
    function_calling = bool(client.model_info.get("function_calling", False))
    by_name = {t.name: t for t in tools}
    messages: list[LLMMessage] = [SystemMessage(content=system_prompt(definition, tools, function_calling, lead)),
                                  _as_user_message(task)]
    choice: Any = "required"
    if force is not None:
        choice = by_name[force]
    schema = None if function_calling else tool_calls_schema(tools, max_calls=1 if force else max_calls)
    cap = max_calls * CALLS_PER_REPLY_FACTOR  # a runaway reply's first calls run, the rest are refused
    for attempt in (1, 2):
        begin_round()
        outcome = RoundOutcome()
        reply: list[LLMMessage] = []
        try:
            result = await _create(client, messages, tools if function_calling else [], choice, meter,
                                   definition, bounds, structured, schema,
                                   by_name.get(prefer) if prefer and force is None else None)
            if isinstance(result.content, str) and function_calling:
                named = _FUNCTIONS_PREFIX.match(result.content)
                if named and named.group(1) in by_name:
                    # the server's `auto` grammar stopped after naming a function: ask for that one, forced
                    result = await _create(client, messages, tools, by_name[named.group(1)], meter, definition,
                                           bounds, structured, None)
            if isinstance(result.content, list):
                calls = _capped([(c.id, c.name, c.arguments) for c in result.content if isinstance(c, FunctionCall)],
                                cap, outcome)
                await _run_calls(calls, by_name, outcome)
                # the correction round shows the calls as text: servers differ in which tool-message
                # shapes they accept back (llama-cpp-python refuses autogen's), all take plain text
                reply = [AssistantMessage(content=json.dumps({"tool_calls": [
                    {"name": name, "arguments": _loads_or_text(arguments)} for _, name, arguments in calls]}),
                    source=definition.name)]
            else:
                text = result.content if isinstance(result.content, str) else str(result.content)
                reply = [AssistantMessage(content=text or "(empty reply)", source=definition.name)]
                try:
                    parsed = parse_text_tool_calls(text, by_name)
                except ToolCallParseError as exc:
                    outcome.errors.append(f"could not read your tool calls: {exc}")
                    parsed = []
                except RecursionError:  # brackets nested past what the JSON reader follows
                    outcome.errors.append("could not read your tool calls: brackets nested too deeply; "
                                          'reply with one flat {"tool_calls": [...]} object')
                    parsed = []
                await _run_calls(_capped([(f"text_{i}", c.name, c.arguments) for i, c in enumerate(parsed)],
                                         cap, outcome), by_name, outcome)
            if rejected is not None:
                rejected.extend(_brief(f"{definition.name} (refused): {r}") for r in outcome.refused)
            if not outcome.called and not outcome.errors:
                outcome.errors.append("the reply held no tool call: call one of the tools "
                                      f"({', '.join(sorted(by_name))})")
        except ModelCallFailed as exc:
            outcome.errors.append(str(exc))
            reply = []
        if not outcome.errors:
            return outcome.accepted
        if rejected is not None:  # every refused call or failed round, with its reason
            rejected.extend(_brief(f"{definition.name} (round {attempt}): {e}") for e in outcome.errors)
        rollback_round()
        if attempt == 2:
            raise AgentFailed(f"{definition.name}: " + "; ".join(_brief(e) for e in outcome.errors))
        messages += reply
        messages.append(UserMessage(source="user", content=(
            "These tool calls were rejected:\n- " + "\n- ".join(_brief(e) for e in outcome.errors) +
            "\nAll calls of your previous reply were discarded. Send the complete, corrected set of "
            "tool calls for this batch, and nothing else.")))
    raise AssertionError("unreachable")


async def _create(client: ChatCompletionClient, messages: Sequence[LLMMessage], tools: Sequence[FunctionTool],
                  choice: Any, meter: Meter, definition: AgentDefinition, bounds: CallBounds,
                  structured: ServerFeatures | None, schema: dict | None, instead_of_required: Any = None) -> CreateResult:
    return await bounded_create(client, messages, meter=meter, agent=definition.name,
                                bounds=bounds.for_agent(definition.model), tools=tools,
                                tool_choice=choice if tools else "auto", structured=structured, schema=schema,
                                instead_of_required=instead_of_required)


__all__ = ["AgentFailed", "ToolRefusal", "run_tool_agent", "system_prompt"]

