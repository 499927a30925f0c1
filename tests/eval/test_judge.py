"""The LLM judge and the context-only answerer, through autogen's model-client interface."""

from __future__ import annotations

import asyncio
import json

import pytest

from mirix_py.eval.judge import answer_from_context, judge, parse_judgement
from mirix_py.llm.scripted import ScriptedChatCompletionClient


@pytest.mark.parametrize("reply, label", [
    ('{"reasoning": "same date", "label": "CORRECT"}', "CORRECT"),
    ('```json\n{"label": "wrong", "reasoning": "other city"}\n```', "WRONG"),
    ("CORRECT", "CORRECT"),
    ("The answer is WRONG.", "WRONG"),
    ("CORRECT or WRONG, hard to say", "INVALID"),  # both words outside JSON: not guessed
    ('{"label": "maybe"}', "INVALID"),
    ("", "INVALID"),
])
def test_parse_judgement(reply, label):
    assert parse_judgement(reply)[0] == label


def test_judge_sends_question_gold_and_answer_and_reads_the_label():
    def script(req):
        assert req.agent == "judge"
        text = req.last_text
        assert "Question: Where?" in text and "Gold answer: Geneva" in text and "Answer to grade: in Geneva" in text
        return json.dumps({"reasoning": "same place", "label": "CORRECT"})

    client = ScriptedChatCompletionClient(script)
    result = asyncio.run(judge(client, "Where?", "Geneva", "in Geneva"))
    assert result.correct and result.label == "CORRECT" and result.reasoning == "same place"
    assert result.prompt_tokens > 0  # estimated: the scripted client reports no usage


def test_judge_with_an_unreadable_reply_counts_as_wrong():
    client = ScriptedChatCompletionClient(lambda req: "I am not sure")
    result = asyncio.run(judge(client, "Where?", "Geneva", "Bern"))
    assert result.label == "INVALID" and not result.correct and result.raw == "I am not sure"


def test_answer_from_context_puts_the_context_in_the_prompt():
    seen = {}

    def script(req):
        seen["system"] = req.system
        return " Geneva "

    client = ScriptedChatCompletionClient(script)
    result = asyncio.run(answer_from_context(client, "Where did Ann move?", "[8 May 2023] Ann: I moved to Geneva"))
    assert result.answer == "Geneva" and result.llm_calls == 1
    assert "Ann: I moved to Geneva" in seen["system"] and seen["system"].startswith("# agent: answerer")
