"""LLM judge and context-only answerer for evaluation, through any autogen ChatCompletionClient.

The judge is binary (CORRECT / WRONG) and lenient on form, as published LoCoMo harnesses are: the
same fact in other words, another date format, or extra detail around the right answer is CORRECT;
a different fact, a wrong date or a refusal where the gold holds an answer is WRONG. Its reply is
JSON; a reply that cannot be read counts as WRONG and is reported as INVALID, never guessed.

The answerer is what the baselines use: the same answer model as the engine's chat, given only a
context (raw turns retrieved by a baseline, or the whole conversation) and the question.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from typing import Any

from autogen_core.models import ChatCompletionClient, SystemMessage, UserMessage

from mirix_py.llm.metering import CallRecord, Meter, MeteredClient

JUDGE_SYSTEM = """# agent: judge
You grade an answer to a question about a long conversation, against the gold answer.

Label the answer CORRECT when it states the same fact as the gold answer, even if it is worded
differently, is longer, adds context, or gives a date or number in another format ("7 May 2023",
"May 7th, 2023" and "the week before 14 May 2023" when the gold is a week-level date). For a list,
it is CORRECT when it names the gold items (order does not matter; an extra plausible item is fine).
Label it WRONG when it states a different fact, a wrong date or time, misses the point of the gold
answer, or says it does not know while the gold answer gives one.

Reply with JSON only: {"reasoning": "<one short sentence>", "label": "CORRECT"} or
{"reasoning": "<one short sentence>", "label": "WRONG"}."""

JUDGE_USER = "Question: {question}\nGold answer: {gold}\nAnswer to grade: {answer}"

ANSWER_SYSTEM = """# agent: answerer
You answer a question about a conversation from the context below only. The context lists
conversation turns, each with the date of its session. Resolve relative dates ("last week",
"yesterday") against that session date. Answer with a short phrase, not a sentence. If the context
does not contain the answer, reply exactly: Not mentioned in the conversation.

Context:
{context}"""

# What the harness appends to every question it asks (the engine's chat and the baselines alike).
QUESTION_SUFFIX = ("\n\nAnswer with a short phrase. If it is not in memory, reply exactly: "
                   "Not mentioned in the conversation.")

LABELS = ("CORRECT", "WRONG")
_LABEL_WORD = re.compile(r"\b(CORRECT|WRONG)\b")


@dataclass(frozen=True)
class JudgeResult:
    label: str  # CORRECT, WRONG or INVALID (unreadable reply, scored as wrong)
    reasoning: str
    raw: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    @property
    def correct(self) -> bool:
        return self.label == "CORRECT"


@dataclass(frozen=True)
class AnswerResult:
    answer: str
    prompt_tokens: int
    completion_tokens: int
    llm_calls: int
    seconds: float


def parse_judgement(text: str) -> tuple[str, str]:
    """(label, reasoning) from a judge reply: JSON first (also inside a code fence), else one bare label word.

    A reply naming both labels outside JSON, or neither, is INVALID.
    """
    body = str(text).strip()
    fence = re.search(r"```(?:json)?\s*(.*?)```", body, re.S)
    candidates = [fence.group(1)] if fence else []
    brace = re.search(r"\{.*\}", body, re.S)
    if brace:
        candidates.append(brace.group(0))
    for candidate in candidates:
        try:
            data = json.loads(candidate)
        except json.JSONDecodeError:
            continue
        if isinstance(data, dict):
            label = str(data.get("label", "")).strip().upper()
            if label in LABELS:
                return label, str(data.get("reasoning", ""))
    words = set(_LABEL_WORD.findall(body.upper()))
    if len(words) == 1:
        return words.pop(), ""
    return "INVALID", ""


def _reply_text(content: Any) -> str:
    return content if isinstance(content, str) else json.dumps(content, default=str)


def _last_call(meter: Meter) -> CallRecord:
    return meter.calls[-1]


def deterministic_args(client: ChatCompletionClient, seed: int | None) -> dict[str, Any]:
    """temperature 0 and the seed for OpenAI-compatible clients (which accept them); nothing for others."""
    if seed is None or "OpenAI" not in type(client).__name__:
        return {}
    return {"temperature": 0, "seed": seed}


async def judge(client: ChatCompletionClient, question: str, gold: str, answer: str, *,
                seed: int | None = None) -> JudgeResult:
    """Grade one answer with the judge model; never raises on an unreadable reply (INVALID)."""
    meter = Meter()
    metered = MeteredClient(client, meter, "judge")
    started = time.perf_counter()
    result = await metered.create(
        [SystemMessage(content=JUDGE_SYSTEM),
         UserMessage(content=JUDGE_USER.format(question=question, gold=gold, answer=answer), source="harness")],
        json_output=True if client.model_info.get("json_output") else None,
        extra_create_args=deterministic_args(client, seed),
    )
    raw = _reply_text(result.content)
    label, reasoning = parse_judgement(raw)
    call = _last_call(meter)
    return JudgeResult(label, reasoning, raw, call.prompt_tokens, call.completion_tokens,
                       time.perf_counter() - started)


async def answer_from_context(client: ChatCompletionClient, question: str, context: str, *,
                              seed: int | None = None, system: str = ANSWER_SYSTEM) -> AnswerResult:
    """One call: the question answered from the given context only (the baselines' reader).
    `system` is a template with a `{context}` field (screenshot QA reads screen text, not turns)."""
    meter = Meter()
    metered = MeteredClient(client, meter, "answerer")
    started = time.perf_counter()
    result = await metered.create(
        [SystemMessage(content=system.format(context=context)),
         UserMessage(content=question, source="harness")],
        extra_create_args=deterministic_args(client, seed))
    call = _last_call(meter)
    return AnswerResult(_reply_text(result.content).strip(), call.prompt_tokens, call.completion_tokens, 1,
                        time.perf_counter() - started)
