"""Run one tool-calling agent (an autogen `AssistantAgent`) with validation and one correction round.

The agent gets its definition's system prompt and typed `FunctionTool`s. After its turn, every
rejected call (bad arguments, unknown id, unknown tool) is collected from autogen's
`ToolCallExecutionEvent`s; a reply that wrote its calls as text is parsed and run through the same
tools. If anything was rejected, the round's operations are discarded and the model gets one
correction round with the reasons; if that fails too, `AgentFailed` carries the reasons.
Models without tool calling get the tool schemas in the prompt and answer in JSON.
"""

from __future__ import annotations

import json
from typing import Callable, Sequence

from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.messages import BaseChatMessage, TextMessage, ToolCallExecutionEvent, ToolCallRequestEvent
from autogen_core import CancellationToken
from autogen_core.models import ChatCompletionClient
from autogen_core.tools import FunctionTool

from mirix_py.agents.definitions import AgentDefinition
from mirix_py.llm.metering import Meter, MeteredClient
from mirix_py.llm.toolcalls import ToolCallParseError, parse_text_tool_calls


class AgentFailed(RuntimeError):
    pass


def system_prompt(definition: AgentDefinition, tools: Sequence[FunctionTool], function_calling: bool) -> str:
    prompt = f"# agent: {definition.name}\n{definition.system_prompt}"
    if function_calling:
        return prompt
    schemas = json.dumps([t.schema for t in tools], indent=1)
    return (f"{prompt}\n\nYou cannot call tools directly. Reply with only a JSON object of the form "
            '{"tool_calls": [{"name": "<tool>", "arguments": {...}}]} (an empty list when there is nothing '
            f"to do). The tools:\n{schemas}")


async def run_tool_agent(definition: AgentDefinition, client: ChatCompletionClient, tools: Sequence[FunctionTool],
                         task: str | BaseChatMessage, meter: Meter, *, begin_round: Callable[[], None] = lambda: None,
                         rollback_round: Callable[[], None] = lambda: None) -> int:
    """Returns the number of tool calls accepted in the final round; raises AgentFailed.

    `task` is the batch as text, or a `MultiModalMessage` (text and frames) for a vision model;
    a correction round is text, and the agent keeps the first round (images included) in context.
    """
    function_calling = bool(client.model_info.get("function_calling", False))
    agent = AssistantAgent(
        name=definition.name, model_client=MeteredClient(client, meter, definition.name),
        tools=list(tools) if function_calling else None,
        system_message=system_prompt(definition, tools, function_calling),
        max_tool_iterations=1, reflect_on_tool_use=False,
    )
    by_name = {t.name: t for t in tools}
    message: str | BaseChatMessage = task
    for attempt in (1, 2):
        begin_round()
        result = await agent.run(task=message, cancellation_token=CancellationToken())
        errors: list[str] = []
        accepted = 0
        requested = False
        for event in result.messages:
            if isinstance(event, ToolCallRequestEvent):
                requested = True
            elif isinstance(event, ToolCallExecutionEvent):
                for outcome in event.content:
                    if outcome.is_error:
                        errors.append(f"{outcome.name}: {outcome.content}")
                    else:
                        accepted += 1
        final = result.messages[-1] if result.messages else None
        if not requested and isinstance(final, TextMessage):
            try:
                calls = parse_text_tool_calls(final.content, by_name)
            except ToolCallParseError as exc:
                errors.append(f"could not read your tool calls: {exc}")
                calls = []
            for call in calls:
                try:
                    await by_name[call.name].run_json(call.arguments, CancellationToken())
                    accepted += 1
                except Exception as exc:  # validation errors of any kind go back to the model
                    errors.append(f"{call.name}: {exc}")
        if not errors:
            return accepted
        rollback_round()
        if attempt == 2:
            raise AgentFailed(f"{definition.name}: " + "; ".join(errors))
        message = ("These tool calls were rejected:\n- " + "\n- ".join(errors) +
                   "\nAll calls of your previous reply were discarded. Send the complete, corrected set of "
                   "tool calls for this batch.")
    raise AssertionError("unreachable")
