"""Sources before summaries. A memory that sums up several things said (a model's episode, fact or
core block citing several turns of one input) matches many questions loosely, and inside a reader's word budget
it takes the place of the turns it sums up, which memory keeps word for word. Summaries are weighed
down as question-only memories are (`questions.QUESTION_WEIGHT`), so they follow the turns that
match, and a search for summaries alone still returns them all, in their order
(benchmarks/docs/local_model.md). Pure functions."""

from __future__ import annotations

from typing import Any, Sequence

from mirix_py.store.questions import INPUT_PREFIX, QUESTION_WEIGHT

SUMMARY_WEIGHT = QUESTION_WEIGHT


def sums_up(source_ids: Sequence[str]) -> bool:
    """Whether a memory with these source ids sums up several things said in one input: more cited ids
    than inputs, and at least two (a turn cites itself and its input; a memory of screens cites each
    frame with the frame's own input, and frames are kept nowhere else, so it is a source itself)."""
    inputs = sum(s.startswith(INPUT_PREFIX) for s in source_ids)
    said = len(source_ids) - inputs
    return said >= 2 and said > inputs


def sources_first(ranked: Sequence[tuple[str, float]], records: dict[str, Any]) -> list[tuple[str, float]]:
    """`ranked` (id, score), best first, with every summary's score weighed down and the list sorted
    again (a stable sort: the rest keep their order). A score depends on the memory's own match only."""
    out = []
    for memory_id, score in ranked:
        memory = records.get(memory_id)
        if memory is not None and sums_up(memory.source_ids):
            score = score * SUMMARY_WEIGHT if score > 0 else score - 1.0
        out.append((memory_id, score))
    return sorted(out, key=lambda item: -item[1])
