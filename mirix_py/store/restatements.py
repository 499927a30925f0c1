"""Memories that restate others follow what they restate. Two kinds, each a pure test of a memory's
source ids: a chat exchange (`questions.asks_only`: a question states nothing, an answer says what
memory held), and a summary of several things said in one input (`summaries.sums_up`: a model's
episode, fact or core write, which matches many questions loosely and inside a reader's word budget
would take the place of the turns memory keeps word for word). Each kind a memory is weighs its score
down once; the list is sorted again, stably, so the rest keep their order and a search for restating
memories alone still returns them all, in their order. A score depends on the memory's own match
only. And they take no rank from what they restate: the legs are fused twice, the sources' ranks
counted among sources only (`fuse_apart`), so a model's summaries beside the turns do not reorder
the turns by pushing them down one leg more than another (full-text scores still move with the
index's word counts). Pure functions."""

from __future__ import annotations

from typing import Any, Callable, Collection, Mapping, Sequence

from mirix_py.store.questions import asks_only
from mirix_py.store.summaries import sums_up

RESTATEMENT_WEIGHT = 0.25  # hybrid (RRF, k=10): rank 1 falls below rank 30; BM25 and cosine scores are cut to a quarter


def restatements(source_ids: Sequence[str], tags: Collection[str] = ()) -> int:
    """How many kinds of restatement a memory with these source ids is (0, 1 or 2); `tags`: the
    caller's ids of its inputs (`summaries.sums_up`)."""
    return int(asks_only(source_ids, tags)) + int(sums_up(source_ids, tags))


def weigh_down(ranked: Sequence[tuple[str, float]], records: dict[str, Any],
               tags: Collection[str] = ()) -> list[tuple[str, float]]:
    """`ranked` (id, score), best first, with every restating memory's score weighed down (a positive
    score by RESTATEMENT_WEIGHT, a negative one by -1, per kind) and the list sorted again."""
    def kinds(memory_id: str) -> int:
        memory = records.get(memory_id)
        return restatements(memory.source_ids, tags) if memory is not None else 0

    return weighed_down(ranked, kinds, RESTATEMENT_WEIGHT)


def weighed_down(ranked: Sequence[tuple[str, float]], times: Callable[[str], int],
                 weight: float) -> list[tuple[str, float]]:
    """`ranked` (id, score) with each score weighed down `times(id)` times (a positive score by
    `weight`, a negative one by -1), sorted again stably: the rest keep their order."""
    out = []
    for memory_id, score in ranked:
        for _ in range(times(memory_id)):
            score = score * weight if score > 0 else score - 1.0
        out.append((memory_id, score))
    return sorted(out, key=lambda item: -item[1])


def restating(source_ids: Mapping[str, Sequence[str]], tags: Collection[str] = ()) -> set[str]:
    """The ids, among these (id -> cited ids), of memories that restate others."""
    return {memory_id for memory_id, cited in source_ids.items() if restatements(cited, tags)}


def fuse_apart(fuse: Callable[[Sequence[Sequence[str]]], list[tuple[str, float]]], legs: Sequence[Sequence[str]],
               restating_ids: Collection[str]) -> list[tuple[str, float]]:
    """`fuse(legs)` with the other memories ranked by `fuse` over the legs without the restating ones,
    and the restating ones scored as in `fuse(legs)`; best first. The same as `fuse(legs)` when none
    restates."""
    if not restating_ids or not any(i in restating_ids for leg in legs for i in leg):
        return fuse(legs)
    sources = fuse([[i for i in leg if i not in restating_ids] for leg in legs])
    restated = [(i, score) for i, score in fuse(legs) if i in restating_ids]
    return sorted([*sources, *restated], key=lambda item: -item[1])
