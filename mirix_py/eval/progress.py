"""Progress of an evaluation run: bars on a terminal, plain flushed lines everywhere else.

A run reports progress through a callback `progress(stage, done, total, note="")`. On a terminal the
command draws rich bars; when stderr is not a terminal (CI, `> log 2>&1`) `LineProgress` writes one
line per event instead, flushed at once, so a slow model's run is visible in its log as it goes:

    [locomo   42.1s] answers 3/20 (15%) · 14.0 s/item · ~238 s left · mini-1#2 cat 4: engine chat F1 1.00 CORRECT

Stages named in `every_item` (ingested sessions, answered questions: the slow ones) get a line for
every item; the others (fast searches) a line at their start, at their end, and at most every
`interval` seconds between.
"""

from __future__ import annotations

import sys
import time
from typing import Callable, Iterable, Protocol, TextIO


class ProgressCallback(Protocol):
    def __call__(self, stage: str, done: int, total: int, note: str = "") -> None: ...


EVERY_ITEM_STAGES = frozenset({"ingest sessions", "answers"})


class LineProgress:
    """A `ProgressCallback` writing plain lines with elapsed time, counts, rate and time left."""

    def __init__(self, stream: TextIO | None = None, *, prefix: str = "locomo",
                 every_item: Iterable[str] = EVERY_ITEM_STAGES, interval: float = 10.0,
                 clock: Callable[[], float] = time.perf_counter) -> None:
        self._stream = stream
        self.prefix = prefix
        self.every_item = frozenset(every_item)
        self.interval = interval
        self._clock = clock
        self._started = clock()
        self._stage_started: dict[str, float] = {}
        self._last_line: dict[str, float] = {}
        self._last_done: dict[str, int] = {}
        self._last_event = self._started

    @property
    def stream(self) -> TextIO:
        return self._stream if self._stream is not None else sys.stderr  # resolved late: pytest/CliRunner swap it

    def __call__(self, stage: str, done: int, total: int, note: str = "") -> None:
        now = self._clock()
        if stage not in self._stage_started:
            # a stage that reports its first item without a 0 event started at the previous event
            self._stage_started[stage] = now if done == 0 else self._last_event
        self._last_event = now
        if done == self._last_done.get(stage) and done != 0:
            return
        self._last_done[stage] = done
        due = (stage in self.every_item or done == 0 or done >= total
               or now - self._last_line.get(stage, self._stage_started[stage]) >= self.interval)
        if not due:
            return
        self._last_line[stage] = now
        self.stream.write(self.line(stage, done, total, now, note) + "\n")
        self.stream.flush()

    def line(self, stage: str, done: int, total: int, now: float, note: str = "") -> str:
        parts = [f"[{self.prefix} {now - self._started:7.1f}s] {stage} {done}/{total}"
                 + (f" ({100 * done / total:.0f}%)" if total else "")]
        if done == 0:
            parts.append("started")
        else:
            per_item = (now - self._stage_started[stage]) / done
            parts.append(f"{per_item:.1f} s/item")
            if done < total:
                parts.append(f"~{per_item * (total - done):.0f} s left")
            else:
                parts.append(f"done in {now - self._stage_started[stage]:.1f} s")
        if note:
            parts.append(note)
        return " · ".join(parts)
