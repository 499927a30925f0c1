"""A reader's context with each day stated once: dated memories under their day's heading.

A turn's text opens with its day and clock ("[8 May 2023, 13:56] Ada: …"), four words of the
twenty-odd a turn takes; a context of twenty turns from a handful of days repeats the same days
over and over. Grouped under a heading per day ("8 May 2023:" then "[13:56] Ada: …"), the same
context says the same in fewer words, so more memories fit a reader's budget
(benchmarks/docs/locomo_hops.md, "the day stated once"). The heading also carries the clock of
the day's first memory ("8 May 2023, 13:56:"), and a memory of that day said at that same minute
shows no clock of its own: the turns of one sitting share their minute.

Order: memories with no day of their own (facts, procedures, documents, core lines) first, in
rank order, so none of them sits under a day it does not belong to; then one group per day, the
days in the order of their best-ranked memory, each day's memories in rank order. Pure functions
on the texts a reader would be shown; records are never changed.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from mirix_py.text.dates import MONTHS

__all__ = ["DayGroup", "by_day", "day_lines", "split_clock", "split_day", "stated_once"]

_DAY_STAMP = re.compile(r"\[(\d{1,2} (?:" + "|".join(MONTHS) + r") \d{4}), (\d{2}:\d{2})\] ")


def split_day(text: str) -> tuple[str | None, str]:
    """("8 May 2023", "[13:56] Ada: hi") for a text that opens with its day and clock
    (`dates.when_words`), (None, text) for any other."""
    m = _DAY_STAMP.match(text)
    if m is None:
        return None, text
    return m.group(1), f"[{m.group(2)}] {text[m.end():]}"


_CLOCK = re.compile(r"\[(\d{2}:\d{2})\] ")


def split_clock(rest: str) -> tuple[str | None, str]:
    """("13:56", "Ada: hi") for "[13:56] Ada: hi" (`split_day`'s rest), (None, rest) for any other."""
    m = _CLOCK.match(rest)
    return (m.group(1), rest[m.end():]) if m else (None, rest)


def heading(day: str, clock: str | None = None) -> str:
    return f"{day}, {clock}:" if clock else f"{day}:"


def under(rest: str, clock: str | None) -> str:
    """A dated memory's line under a heading stating `clock`: without its clock when it is the same."""
    own, body = split_clock(rest)
    return body if own is not None and own == clock else rest


@dataclass(frozen=True)
class DayGroup:
    """The memories (indices into the ranked list) shown under one day, or with no day (`day` None)."""

    day: str | None
    indices: tuple[int, ...]


def by_day(texts: Sequence[str]) -> list[DayGroup]:
    """`texts` (ranked, best first) grouped as a reader is shown them: undated first, then one group
    per day in the order of its best-ranked text; rank order inside each group."""
    undated: list[int] = []
    days: dict[str, list[int]] = {}
    for i, text in enumerate(texts):
        day, _ = split_day(text)
        if day is None:
            undated.append(i)
        else:
            days.setdefault(day, []).append(i)
    groups = [DayGroup(None, tuple(undated))] if undated else []
    return groups + [DayGroup(day, tuple(indices)) for day, indices in days.items()]


def day_lines(texts: Sequence[str], prefixes: Sequence[str] | None = None) -> list[str]:
    """The lines of a grouped context: a heading per day, each text as `prefix + text` with its day
    left to the heading ("- [ep_1] (episodic) [13:56] Ada: hi"). `prefixes` default to none."""
    prefixes = prefixes if prefixes is not None else [""] * len(texts)
    if len(prefixes) != len(texts):
        raise ValueError("one prefix per text")
    lines: list[str] = []
    for group in by_day(texts):
        if group.day is None:
            lines += [prefixes[i] + texts[i] for i in group.indices]
            continue
        clock = split_clock(split_day(texts[group.indices[0]])[1])[0]
        lines.append(heading(group.day, clock))
        lines += [prefixes[i] + under(split_day(texts[i])[1], clock) for i in group.indices]
    return lines


def stated_once(texts: Sequence[str]) -> list[str]:
    """Each text as it adds to a grouped context, in rank order: the first of a day with the heading
    (its day and clock), a later one of the same day with its clock only when that differs from the
    heading's. The words of any prefix of the result are the words `day_lines` renders for that
    prefix (bullets and ids aside), so a word budget filled in rank order counts what a reader is
    shown."""
    clocks: dict[str, str | None] = {}
    out: list[str] = []
    for text in texts:
        day, rest = split_day(text)
        if day is None:
            out.append(text)
        elif day in clocks:
            out.append(under(rest, clocks[day]))
        else:
            clocks[day], body = split_clock(rest)
            out.append(f"{heading(day, clocks[day])} {body}")
    return out
