"""Sources before summaries: which memories sum up several things said (a model's episode, fact or
core block citing several turns of one input). Search weighs them down (`restatements.weigh_down`)
so they follow the turns that match (benchmarks/docs/local_model.md). Pure functions."""

from __future__ import annotations

from typing import Collection, Sequence

from mirix_py.records import EpisodicMemory, Memory
from mirix_py.store.questions import INPUT_PREFIX, said_ids


def sums_up(source_ids: Sequence[str], tags: Collection[str] = ()) -> bool:
    """Whether a memory with these source ids sums up several things said in one input: more cited ids
    than inputs, and at least two (a turn cites itself and its input; a memory of screens cites each
    frame with the frame's own input, and frames are kept nowhere else, so it is a source itself).
    `tags`: the caller's ids of the inputs (`add(source_id=...)`), which every memory of an input
    cites beside it and which say nothing; `MemoryStore.input_tags` reads them."""
    inputs = sum(s.startswith(INPUT_PREFIX) for s in source_ids)
    said = len(said_ids(source_ids, tags))
    return said >= 2 and said > inputs


TURN_EVENT = "message"  # the event type of a turn's own episode (the rules' record of a message)


def holds_turn(memory: Memory) -> bool:
    """Whether `memory` is a turn's own episode with the turn's whole words: what it cites is said
    there first-hand. A message cut short (its rest kept as a resource) is not held whole."""
    return isinstance(memory, EpisodicMemory) and memory.event_type == TURN_EVENT and not memory.details
