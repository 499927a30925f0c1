"""Scoring a question against the context kept for it: containment of every gold part, abstention
traps, evidence frames, first mention; and the per-family summary of a run.

Pure functions over strings: no engine, no I/O.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from mirix_py.eval.screenshot_qa.questions import FAMILIES, QAItem
from mirix_py.text.words import word_count

__all__ = ["SYSTEMS", "ItemScore", "abstention_holds", "contains", "first_mention", "normalize", "score_item",
           "summarize"]

_WORD = re.compile(r"[^\W_]+")


def normalize(text: str) -> str:
    """Lowercase word characters separated by single spaces: punctuation and case do not matter."""
    return " ".join(_WORD.findall(str(text).lower()))


def contains(context: str, value: str) -> bool:
    """`value` occurs in `context` as whole words after `normalize` ("14 June" is not in "114 june")."""
    v = normalize(value)
    return bool(v) and f" {v} " in f" {normalize(context)} "


def _norm_contains(norm_context: str, value: str) -> bool:
    v = normalize(value)
    return bool(v) and f" {v} " in f" {norm_context} "


def first_mention(item: QAItem, texts: Sequence[str]) -> float | None:
    """For single-part questions with distractors: 1.0 when the first kept hit that mentions the
    gold or a distractor mentions the gold and no distractor, else 0.0 (also when none mentions
    either); None when the question has no distractors."""
    if not item.distractors or len(item.parts) != 1:
        return None
    for text in texts:
        n = normalize(text)
        gold = any(_norm_contains(n, alt) for alt in item.parts[0])
        wrong = any(_norm_contains(n, d) for d in item.distractors)
        if gold or wrong:
            return 1.0 if gold and not wrong else 0.0
    return 0.0


def abstention_holds(item: QAItem, texts: Sequence[str]) -> bool:
    """An abstention question holds when no kept hit contains any of its trap values."""
    return not any(contains(t, trap) for t in texts for trap in item.distractors)


@dataclass
class ItemScore:
    score: float  # answerable: every part contained (1/0); abstention: no trap value in the context
    partial: float  # share of parts contained (abstention: = score)
    evidence: float  # share of evidence groups with a frame among the kept hits' source ids (NaN: none)
    first_mention: float | None
    words: int
    kept: int


def score_item(item: QAItem, kept: Sequence[tuple[str, Sequence[str]]]) -> ItemScore:
    """Score one question against the kept context: (text, source_ids) of each hit that fit the budget."""
    texts = [t for t, _ in kept]
    sources = {s for _, ss in kept for s in ss}
    words = sum(word_count(t) for t in texts)
    if item.family == "abstention":
        held = 1.0 if abstention_holds(item, texts) else 0.0
        return ItemScore(held, held, math.nan, None, words, len(kept))
    context = normalize("\n".join(texts))
    found = [any(_norm_contains(context, alt) for alt in part) for part in item.parts]
    groups = [g for g in item.evidence if g]
    evidence = sum(1 for g in groups if sources.intersection(g)) / len(groups) if groups else math.nan
    return ItemScore(1.0 if found and all(found) else 0.0, sum(found) / len(found) if found else 0.0, evidence,
                     first_mention(item, texts), words, len(kept))



def _mean(values: Iterable[float | None]) -> float:
    vals = [v for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))]
    return sum(vals) / len(vals) if vals else math.nan


SYSTEMS = ("engine", "baseline", "baseline_focus")


def summarize(rows: Sequence[dict[str, Any]], llm: bool) -> dict[str, Any]:
    """Per family and overall (micro: every question; macro: mean of the family means)."""
    metrics = ["score", "partial", "evidence", "first_mention"] + (["judge"] if llm else [])

    def block(subset: Sequence[dict[str, Any]]) -> dict[str, Any]:
        out: dict[str, Any] = {"n": len(subset)}
        for system in SYSTEMS:
            out[system] = {m: _mean(r[system].get(m) for r in subset) for m in metrics}
            out[system]["words"] = _mean(r[system]["words"] for r in subset)
            out[system]["ms"] = _mean(r[system]["ms"] for r in subset)
        return out

    families = {f: block([r for r in rows if r["family"] == f]) for f in FAMILIES if any(r["family"] == f for r in rows)}
    overall = block(rows)
    macro = {system: {m: _mean(families[f][system][m] for f in families) for m in metrics} for system in SYSTEMS}
    return {"families": families, "overall": overall, "macro": macro}

