"""Recovering tool calls that models write as text."""

import pytest

from mirix_py.llm.toolcalls import ParsedCall, ToolCallParseError, loads_lenient, parse_text_tool_calls

KNOWN = {"insert_semantic", "delete_memory"}


@pytest.mark.parametrize("text", [
    '{"name": "insert_semantic", "arguments": {"name": "Tom", "summary": "Tom is a pilot"}}',
    '```json\n{"name": "insert_semantic", "arguments": {"name": "Tom", "summary": "Tom is a pilot"}}\n```',
    '<tool_call>{"name": "insert_semantic", "arguments": {"name": "Tom", "summary": "Tom is a pilot"}}</tool_call>',
    'Sure! {"name": "insert_semantic", "arguments": {"name": "Tom", "summary": "Tom is a pilot",}}',
    '{"name": "insert_semantic", "arguments": "{\\"name\\": \\"Tom\\", \\"summary\\": \\"Tom is a pilot\\"}"}',
    '{"function": {"name": "insert_semantic", "arguments": {"name": "Tom", "summary": "Tom is a pilot"}}}',
    '{"tool_calls": [{"name": "insert_semantic", "parameters": {"name": "Tom", "summary": "Tom is a pilot"}}]}',
    "{'name': 'insert_semantic', 'arguments': {'name': 'Tom', 'summary': 'Tom is a pilot'}}",
    '{"name": "insert_semantic", "arguments": {"name": "Tom", "summary": "Tom is a pilot"',  # truncated
    'insert_semantic(name="Tom", summary="Tom is a pilot")',
])
def test_recoverable_shapes(text):
    assert parse_text_tool_calls(text, KNOWN) == [ParsedCall("insert_semantic", {"name": "Tom", "summary": "Tom is a pilot"})]


def test_several_calls_in_a_list():
    calls = parse_text_tool_calls('[{"name": "delete_memory", "arguments": {"memory_id": "sem_1"}},'
                                  ' {"name": "delete_memory", "arguments": {"memory_id": "sem_2"}}]', KNOWN)
    assert [c.arguments["memory_id"] for c in calls] == ["sem_1", "sem_2"]


def test_prose_is_no_call():
    assert parse_text_tool_calls("Nothing new to record in this batch.", KNOWN) == []
    assert parse_text_tool_calls("", KNOWN) == []


@pytest.mark.parametrize("text, match", [
    ('{"name": "launch_rockets", "arguments": {}}', "unknown tool"),
    ('{"arguments": {"x": 1}}', "naming a tool"),
    ('{"name": "delete_memory", "arguments": [1, 2]}', "JSON object"),
    ('{"name": "delete_memory", "arguments": {"memory_id": sem_1 oops}}', "not valid JSON"),
    ('insert_semantic("Tom", "pilot")', "keyword arguments"),
])
def test_unrecoverable_text_is_a_clear_error(text, match):
    with pytest.raises(ToolCallParseError, match=match):
        parse_text_tool_calls(text, KNOWN)


def test_loads_lenient_repairs_common_damage():
    assert loads_lenient('{"a": [1, 2,],}') == {"a": [1, 2]}
    assert loads_lenient('{"a": "b') == {"a": "b"}
    assert loads_lenient("{“a”: True}") == {"a": True}


# ---------------------------------------------------------------- replies recorded from the real local model
# tests/fixtures/real_model_replies.json: Qwen2.5-Coder-0.5B on llama-cpp-python's server, given the
# engine's own prompts (tests/fixtures/record_real_model_replies.py).

import json as _json
from pathlib import Path as _Path

RECORDED = _json.loads((_Path(__file__).resolve().parents[1] / "fixtures" / "real_model_replies.json").read_text())
ALL_TOOLS = KNOWN | {"trigger_memory_managers", "insert_episodic", "nothing_to_record"}


@pytest.mark.parametrize("reply", RECORDED, ids=lambda r: f"{r['mode']}-{r['agent'][:24]}-{r['finish_reason']}")
def test_every_recorded_reply_parses_or_says_why(reply):
    content = reply["content"]
    if not isinstance(content, str):
        pytest.skip("a native tool call: nothing to parse")
    try:
        calls = parse_text_tool_calls(content, ALL_TOOLS)
    except ToolCallParseError as exc:
        assert str(exc)  # a reason fit for the correction round
        assert reply["finish_reason"] == "length", "only a reply cut at its bound may be unreadable"
        return
    assert calls and all(c.name in ALL_TOOLS and isinstance(c.arguments, dict) for c in calls)


def test_the_recorded_routing_reply_reads_as_one_call_with_its_memory_types():
    """A fenced list whose call has its arguments wrapped in a list, plus a key the tool does not take."""
    first = next(r for r in RECORDED if r["agent"] == "meta_memory_manager" and r["finish_reason"] == "stop")
    (call,) = parse_text_tool_calls(first["content"], ALL_TOOLS)
    assert call.name == "trigger_memory_managers" and call.arguments["memory_types"] == ["episodic"]


def test_the_recorded_functions_prefix_names_the_function_without_arguments():
    reply = next(r for r in RECORDED if r["content"] == "functions.insert_episodic:")
    (call,) = parse_text_tool_calls(reply["content"], ALL_TOOLS)
    assert call.name == "insert_episodic" and call.arguments == {}
