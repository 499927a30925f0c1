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
