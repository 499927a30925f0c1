"""What each system retrieves for a question: the engine (hybrid search, as the chat flow reads it),
a raw-OCR BM25 baseline (one document per frame), and the prefix of a ranking that fits the budget."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any, Sequence

from mirix_py.agents.chat import prompt_text
from mirix_py.eval.locomo import BM25, fill_budget, tokenize
from mirix_py.text.by_day import stated_once

__all__ = ["BaselineIndex", "Hit", "engine_hits", "keep_within"]

Hit = tuple[str, tuple[str, ...], str]  # (context text, source ids, memory id)


def engine_hits(mx: Any, user_id: str, question: str, *, limit: int = 60,
                now: datetime | None = None) -> tuple[list[Hit], dict[str, Any]]:
    """Hybrid search with the question, inside the time range the chat flow reads from it
    (`offline_topics`), falling back to no range when that finds nothing, as `ChatFlow.retrieve` does."""
    from mirix_py.agents.chat import offline_topics

    topics = offline_topics(question, now or datetime.now(timezone.utc))
    hits = mx.search(question, user_id=user_id, limit=limit, start=topics.start, end=topics.end)
    window = [topics.start.isoformat(), topics.end.isoformat()] if topics.start and topics.end else None
    if not hits and (topics.start or topics.end):
        hits = mx.search(question, user_id=user_id, limit=limit)
        window = None
    out: list[Hit] = []
    for hit in hits:
        text = prompt_text(hit, mx.store, question)
        if text is not None:
            out.append((text, tuple(hit.memory.source_ids), hit.memory.id))
    return out, {"time_window": window}


class BaselineIndex:
    """BM25 over raw OCR text, one document per frame (source id: the frame's file name)."""

    def __init__(self, docs: Sequence[tuple[str, str]]) -> None:
        self.docs = list(docs)
        self.index = BM25([tokenize(text) for text, _ in self.docs])

    def hits(self, question: str, limit: int = 60) -> list[Hit]:
        ranked = self.index.rank(tokenize(question))[:limit]
        return [(self.docs[i][0], (self.docs[i][1],), f"frame:{self.docs[i][1]}") for i in ranked]


def keep_within(hits: Sequence[Hit], budget_words: int) -> list[Hit]:
    """The prefix of the ranking that fits the budget (`locomo.fill_budget`), each text as it adds to a
    reader's context where a day is stated once (`text.by_day.stated_once`; raw OCR has no day)."""
    shown = [(text, sources, memory_id)
             for (_, sources, memory_id), text in zip(hits, stated_once([t for t, _, _ in hits]))]
    filled = fill_budget(((t, s) for t, s, _ in shown), budget_words)
    return shown[: len(filled.items)]

