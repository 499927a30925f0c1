"""Sources before summaries. A memory that sums up several things said (a model's episode or fact
citing several turns, a core block) matches many questions loosely, and inside a reader's word budget
it takes the place of the turns it sums up, which memory keeps word for word. A result list keeps
its best summary where it ranks; the other summaries follow everything else, in their order, so a
search for summaries alone still returns them all. Pure functions."""

from __future__ import annotations

from typing import Any, Sequence

from mirix_py.store.questions import INPUT_PREFIX

SUMMARIES_IN_PLACE = 1  # summaries ranked where they matched; chosen on the local-model benchmark's stores


def sums_up(source_ids: Sequence[str]) -> bool:
    """Whether a memory with these source ids cites two or more things said (input ids aside)."""
    return sum(not s.startswith(INPUT_PREFIX) for s in source_ids) >= 2


def sources_first(ranked: Sequence[tuple[str, float]], records: dict[str, Any],
                  in_place: int = SUMMARIES_IN_PLACE) -> list[tuple[str, float]]:
    """`ranked` (id, score), best first, with every summary after the first `in_place` moved behind
    the rest; a moved summary's score drops to the last score before it, so scores stay in order."""
    head: list[tuple[str, float]] = []
    moved: list[tuple[str, float]] = []
    for memory_id, score in ranked:
        memory = records.get(memory_id)
        if memory is not None and sums_up(memory.source_ids):
            if in_place > 0:
                in_place -= 1
            else:
                moved.append((memory_id, score))
                continue
        head.append((memory_id, score))
    floor = head[-1][1] if head else None
    return head + [(i, s if floor is None else min(s, floor)) for i, s in moved]
