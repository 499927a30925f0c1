"""A model without native tool calls writes them as text: a runaway reply runs no more calls than a
native one may, keeps a bounded record of what was refused, and an unreadable one gets its correction
round. Driven through the engine by scripted models."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest

from mirix_py.agents.runner import CALLS_PER_REPLY_FACTOR, REASON_CHARS
from mirix_py.llm.scripted import ScriptRequest

WHEN = datetime(2024, 4, 2, 18, 30, tzinfo=timezone.utc)
NEW = [{"role": "user", "name": "Ada", "id": "n1", "content": "My dentist appointment with Dr Okafor is on Friday at 9."},
       {"role": "user", "name": "Ada", "id": "n2", "content": "I started learning the cello in March with my teacher Ines."}]
SUMMARY = "Ada started learning the cello with Ines and sees Dr Okafor the dentist"
ROUTE = '{"tool_calls": [{"name": "trigger_memory_managers", "arguments": {"memory_types": ["episodic"]}}]}'
CAP = 8 * CALLS_PER_REPLY_FACTOR  # run_tool_agent's max_calls for a manager


@pytest.fixture
def text_mode_mx(scripted_mx):
    """`make(episodic_replies)`: an engine whose model writes its tool calls as text (no native calls,
    no structured output), routing to the episodic manager, whose replies `episodic_replies` gives."""

    def make(episodic_replies):
        def script(req: ScriptRequest):
            if req.agent == "meta_memory_manager":
                return ROUTE
            if req.agent == "episodic_memory_manager":
                return episodic_replies(req)
            return '{"tool_calls": [{"name": "nothing_to_record", "arguments": {}}]}'

        return scripted_mx(script, structured="none", function_calling=False)

    return make


def summaries(mx):
    return [m for m in mx.list(user_id="ada", memory_types=["episodic"], limit=1000) if m.event_type == "summary"]


def test_a_runaway_text_reply_runs_no_more_calls_than_a_native_one(text_mode_mx):
    """10,000 calls in one text reply all ran, and 9,999 refusals (1.39 MB) were kept with the input."""
    calls = [{"name": "insert_episodic", "arguments": {"summary": f"{SUMMARY} {i}"}} for i in range(2000)]
    mx, _ = text_mode_mx(lambda req: json.dumps({"tool_calls": calls}))
    result = mx.add(NEW, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    refused = mx.input_status(result.input_ids[0]).refused
    assert any(f"{2000 - CAP} call(s) past the first {CAP} of one reply were not run" in r for r in refused), refused[:3]
    assert len(summaries(mx)) == 1  # the first ran; the others run were near repeats of it
    assert len(refused) == CAP  # those repeats, and the calls not run
    assert all(len(r) <= REASON_CHARS for r in refused)


def test_a_reason_kept_with_the_input_is_bounded(text_mode_mx):
    """A reason quotes what the model sent: a runaway tool name is not kept whole with the input."""
    mx, _ = text_mode_mx(lambda req: json.dumps({"tool_calls": [{"name": "x" * 100_000, "arguments": {}}]}))
    result = mx.add(NEW, user_id="ada", occurred_at=WHEN)
    record = mx.input_status(result.input_ids[0])
    assert any("xxxxxxxxxx" in r for r in record.refused), record.refused
    assert all(len(r) <= REASON_CHARS for r in record.refused)
    assert record.error and len(record.error) < 3 * REASON_CHARS  # the manager failed: its reasons, cut


def test_a_deeply_nested_text_reply_gets_a_correction_round(text_mode_mx):
    """A reply nested past what the JSON reader follows ended the manager with a RecursionError."""
    replies = iter(["[" * 100_000 + "]" * 100_000,
                    json.dumps({"tool_calls": [{"name": "insert_episodic", "arguments": {"summary": SUMMARY}}]})])
    mx, client = text_mode_mx(lambda req: next(replies))
    result = mx.add(NEW, user_id="ada", occurred_at=WHEN)
    assert result.status.value == "processed", result.error
    assert [m.summary for m in summaries(mx)] == [SUMMARY]
    assert any("nested too deeply" in r for r in result.rejected), result.rejected
    assert [r.agent for r in client.requests].count("episodic_memory_manager") == 2
