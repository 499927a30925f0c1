"""Files an earlier run already logged: a folder ingested again reads only the frames it has not.

A file is a frame the user's input log holds when its name (the input's source id) and the capture
time read from the file (metadata, EXIF, name or mtime) are those of a logged screenshot input.
Capture tools name each capture once and the time comes from the file itself, so the two identify a
capture; both are plain columns of the log, so the lookup reads no pixels and decrypts nothing, and
it knows the frames any earlier version logged. A hash of the file's bytes would need every file
read on every run, and would make two captures of an unchanged screen at different times one frame.

What the earlier input says decides (`sort_out`):
- processed or degraded, or claimed by a worker that is alive (the engine's resume at open, another
  process), which finishes it: the file is `ingested`, skipped before it is decoded;
- left pending, claimed by a worker that died, or failed: taken up, processed from its logged text
  in this run (the managers that committed for it are skipped), not read again.
So a frame is neither done twice nor lost. A run going on at the same time (another process over
the folder) may log a file after this lookup: each run claims a file before reading it, in one step
with looking it up again (`InputLog.claim_source`), and skips one the other claimed or logged; and a
file is logged only when the log does not hold it yet, in the same step (`InputLog.append_new`), so
the later of the two runs reports it `ingested`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from mirix_py.ingest.outcomes import FrameOutcome, FrameStatus
from mirix_py.records import InputStatus

if TYPE_CHECKING:
    from mirix_py.ingest.host import ScreenshotHost
    from mirix_py.store.inputs import LoggedSource

DONE = frozenset({InputStatus.processed, InputStatus.degraded})
# where a taken-up input ended, as its frame's outcome; a frame logged twice reports its first one here
STATUS_OF_TAKEN_UP: dict[InputStatus, FrameStatus] = {
    InputStatus.processed: "processed", InputStatus.degraded: "processed", InputStatus.failed: "failed",
    InputStatus.pending: "pending", InputStatus.processing: "pending"}
RANK = {status: rank for rank, status in enumerate(STATUS_OF_TAKEN_UP)}


@dataclass
class Frame:
    """A file of the run by what identifies it, with the app and window it is shown under."""

    path: Path
    captured_at: datetime
    app: str | None = None
    window_title: str | None = None

    def outcome(self, status: FrameStatus, logged: LoggedSource, *, resumed: bool = False) -> FrameOutcome:
        return FrameOutcome(name=self.path.name, status=status, captured_at=self.captured_at, app=self.app,
                            window_title=self.window_title, input_id=logged.id, resumed=resumed,
                            error=logged.error if status == "failed" else None)


@dataclass
class EarlierFrames:
    """The files of a run that the log already holds, by what is to be done with them."""

    ingested: list[tuple[Frame, LoggedSource]] = field(default_factory=list)
    unfinished: list[tuple[Frame, list[LoggedSource]]] = field(default_factory=list)

    @property
    def paths(self) -> set[Path]:
        """The files not to read."""
        return {frame.path for frame, _ in self.ingested} | {frame.path for frame, _ in self.unfinished}

    @property
    def to_take_up(self) -> list[str]:
        return [entry.id for _, entries in self.unfinished for entry in entries]

    def skipped(self) -> list[FrameOutcome]:
        """Outcomes of the files nothing is done for here: ingested before, or being finished by another worker."""
        return [frame.outcome("ingested", logged) for frame, logged in self.ingested]

    def taken_up(self, now: Sequence[LoggedSource]) -> list[FrameOutcome]:
        """Outcomes of the taken-up files, from where their inputs stand `now` (read after the take-up)."""
        by_id = {entry.id: entry for entry in now}
        outcomes = []
        for frame, entries in self.unfinished:
            latest = [by_id.get(e.id, e) for e in entries]
            best = min(latest, key=lambda e: RANK[e.status])
            outcomes.append(frame.outcome(STATUS_OF_TAKEN_UP[best.status], best, resumed=True))
        return outcomes


def sort_out(host: ScreenshotHost, user_id: str, frames: Sequence[Frame]) -> EarlierFrames:
    """Which of `frames` the user's input log already holds, and what is to be done with each."""
    earlier = EarlierFrames()
    if not frames:
        return earlier
    logged: dict[tuple[str, datetime], list[LoggedSource]] = {}
    for entry in host.logged_frames(user_id, [f.path.name for f in frames]):
        logged.setdefault((entry.source_id, entry.occurred_at), []).append(entry)
    for frame in frames:
        entries = logged.get((frame.path.name, frame.captured_at))
        if not entries:
            continue
        done = [e for e in entries if e.status in DONE] or [e for e in entries if e.held]
        if done:
            earlier.ingested.append((frame, done[0]))
        else:  # pending, held by a worker that died, or failed
            earlier.unfinished.append((frame, entries))
    return earlier
