"""One input of thousands of turns: each turn is compared only with the earlier turns (and stored
memories) that could hold it, never with all of them, and the repeats found are the ones the
pairwise comparison finds (`managers.without_repeats`, `managers.RepeatIndex`)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

from mirix_py.agents.offline import managers
from mirix_py.records import EpisodicMemory, Memory, ProceduralMemory
from mirix_py.tools.ops import InsertOp, Op, UpdateOp

WHEN = datetime(2024, 5, 8, 13, 0, tzinfo=timezone.utc)
VOCABULARY = ["meeting", "tomorrow", "garden", "neighbour", "repaired", "kitchen", "window", "station", "holiday",
              "brother", "picture", "concert", "weather", "morning", "I", "the", "a", "with", "at", "7:30", "Lisbon"]


def _sentences(rng: random.Random, count: int) -> list[str]:
    return [" ".join(rng.choice(VOCABULARY) for _ in range(rng.randint(1, 40))) for _ in range(count)]


def _retold(text: str, rng: random.Random) -> str:
    """Case and punctuation changed, and up to a tenth of the words misread by a letter."""
    words = text.split()
    for at in rng.sample(range(len(words)), rng.randint(0, len(words) // 10)):
        if words[at].isalpha() and len(words[at]) >= 6:
            words[at] = words[at][:-1] + ("x" if words[at][-1] != "x" else "y")
    words = [w.upper() if rng.random() < 0.2 else w for w in words]
    return rng.choice([" ", ", "]).join(words) + rng.choice(["", "!"])


def _turn(text: str, i: int, *, actor: str = "Ada", hours: float = 0.0) -> InsertOp:
    return InsertOp(memory=EpisodicMemory(user_id="u", summary=text, actor=actor, source_ids=[f"m{i}"],
                                          occurred_at=WHEN + timedelta(hours=hours)))


class _EveryPair(managers.RepeatIndex):
    """A lookup comparing a memory with every one added before it, as `without_repeats` did."""

    def repeat_of(self, memory: Memory, keys: frozenset[tuple] | None = None) -> Memory | None:
        return managers._repeat_of(memory, self._memories)


def _shape(ops: list[Op]) -> list[tuple]:
    return [(op.memory.summary, op.memory.actor, tuple(op.memory.source_ids)) if isinstance(op, InsertOp)
            else (op.memory_id, tuple(op.add_source_ids)) for op in ops if isinstance(op, (InsertOp, UpdateOp))]


def _batch(seed: int) -> tuple[list[Op], list[Op], list[Memory]]:
    """Two copies of one input of turns (told, retold, by two speakers, hours apart), and stored memories
    some of the turns repeat."""
    rng = random.Random(seed)
    said = _sentences(rng, 300)
    ops: list[Op] = []
    for i in range(800):
        text = rng.choice(said)
        ops.append(_turn(_retold(text, rng) if rng.random() < 0.5 else text, i, actor=rng.choice(["Ada", "Bo"]),
                         hours=rng.choice([0, 5, 30])))
    stored: list[Memory] = [EpisodicMemory(id=f"epi_{i:032x}", user_id="u", summary=text, actor="Ada", occurred_at=WHEN)
                            for i, text in enumerate(said[::7])]
    stored.append(ProceduralMemory(id=f"proc_{0:032x}", user_id="u", summary=said[0], steps=["one step"]))
    copy = [InsertOp(memory=op.memory.model_copy(deep=True)) for op in ops if isinstance(op, InsertOp)]
    return ops, copy, stored


def test_the_repeats_found_are_those_every_earlier_turn_compared_finds():
    """Same inserts, same memories each repeat's ids went to, same updates of stored memories, in order."""
    for seed in (1, 2, 3):
        ops, copy, stored = _batch(seed)
        found = managers.without_repeats(ops, stored)
        expected = managers.without_repeats(copy, stored, index=_EveryPair)
        assert _shape(found) == _shape(expected)
        assert sum(isinstance(op, UpdateOp) for op in found) > 5  # stored memories were repeated
        assert 300 < sum(isinstance(op, InsertOp) for op in found) < 800  # and turns within the input


def test_an_input_of_thousands_of_distinct_turns_is_not_compared_pairwise(monkeypatch):
    """3,000 turns, none a repeat: each is compared with the few earlier turns sharing a key with it
    (here none), where it was compared with all of them (4.5 million comparisons)."""
    compared = 0
    same_content = managers.same_content

    def counted(a: str, b: str) -> bool:
        nonlocal compared
        compared += 1
        return same_content(a, b)

    monkeypatch.setattr(managers, "same_content", counted)
    ops: list[Op] = [_turn(f"Note {i}: I bought {i} pears at the market.", i) for i in range(3000)]
    again = [_turn("Note 7: i bought 7 pears at the market!", 3000)]
    kept = managers.without_repeats([*ops, *again], [])
    assert len(kept) == 3000 and "m3000" in kept[7].memory.source_ids  # the repeat is still found
    assert compared <= 10
