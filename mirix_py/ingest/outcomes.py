"""What happened to frames: one frame's outcome, the result of `add`, and the report of a run."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

from mirix_py.records import AddResult

FrameStatus = Literal["processed", "pending", "duplicate", "ingested", "claimed", "no_text", "invalid", "failed"]


class FrameOutcome(BaseModel):
    """What happened to one frame. `ingested`: a file the user's input log already holds, processed or
    being finished by a live worker (`ingest.earlier`), skipped before it was decoded, or logged by
    another run over the folder while this one read it (not logged again), or a file another run over the
    folder claimed to read first (skipped before it was decoded) that the log holds by the end of this run;
    `input_id` is that input. `claimed`: such a file the log does not hold when this run ends (no input): the
    other run is still at it, found nothing in it to remember, or died (the next run over the folder reads
    it then). A file listed twice in one run is read once: the later listing is `ingested` with the first's
    input, a `duplicate` of it when it gave nothing to log, else what the first listing was."""

    name: str
    status: FrameStatus
    captured_at: datetime | None = None
    app: str | None = None
    window_title: str | None = None
    similarity: float | None = Field(default=None, description="Against the last kept frame, when compared.")
    input_id: str | None = None
    text_chars: int = 0
    png_bytes: int | None = None
    error: str | None = None
    resumed: bool = Field(default=False, description="Processed from the text an earlier run logged (its input "
                                                     "was left pending or failed), not read again.")


class ScreenshotResult(AddResult):
    """Returned by `Mirix.add_screenshot`: an AddResult (input ids, status, memory changes) plus
    what happened to the frame. A duplicate or blank frame is `processed` with no input: nothing
    was written. With wait=False the status is `pending` and the input id is reserved; the input
    appears in the log once its OCR is done (a second or two); a process killed before that loses
    the frame, which is never stored (docs/durability.md)."""

    frame: FrameOutcome
    text: str = Field(default="", description="The OCR text (when the call waited for it).")


@dataclass
class IngestReport:
    """Counts, bytes and outcomes of an ingestion run (or of an ingestor's life so far)."""

    frames: int = 0
    processed: int = 0
    pending: int = 0
    duplicates: int = 0
    ingested: int = 0  # files the log already held (processed, or a live worker at them) or another run read: not read
    claimed: int = 0  # files another run claimed first, that the log did not hold when this run ended: not read
    resumed: int = 0  # files whose earlier input, left pending or failed, this run took up from the log
    no_text: int = 0
    invalid: int = 0
    failed: int = 0
    batches: int = 0
    changes: Counter = field(default_factory=Counter)  # memory type -> inserts/updates
    png_bytes: int = 0  # raw PNG size of every frame seen (exact for PNG files)
    text_bytes: int = 0  # OCR text written to the input log (UTF-8)
    thumbnail_bytes: int = 0
    ocr_seconds: float = 0.0
    wall_seconds: float = 0.0
    outcomes: list[FrameOutcome] = field(default_factory=list)
    results: list[AddResult] = field(default_factory=list)
    keep: int | None = None  # keep only the newest outcomes/results (a long capture session)

    @property
    def unique(self) -> int:
        """Frames that went to OCR."""
        return self.compared - self.duplicates

    @property
    def compared(self) -> int:
        """Frames looked at for repeats: neither invalid nor known to the input log from an earlier run."""
        return self.frames - self.invalid - self.ingested - self.claimed - self.resumed

    @property
    def duplicate_share(self) -> float:
        return self.duplicates / self.compared if self.compared else 0.0

    @property
    def stored_bytes(self) -> int:
        return self.text_bytes + self.thumbnail_bytes

    @property
    def stored_share(self) -> float:
        """Bytes kept (input-log text + thumbnails) per byte of raw PNG."""
        return self.stored_bytes / self.png_bytes if self.png_bytes else 0.0

    @property
    def errors(self) -> list[tuple[str, str]]:
        return [(o.name, o.error or "") for o in self.outcomes if o.status in ("invalid", "failed")]

    _FIELDS = {"processed": "processed", "pending": "pending", "duplicate": "duplicates", "ingested": "ingested",
               "claimed": "claimed",
               "no_text": "no_text", "invalid": "invalid", "failed": "failed"}

    def count(self, outcome: FrameOutcome) -> None:
        self.frames += 1
        attr = self._FIELDS[outcome.status]
        setattr(self, attr, getattr(self, attr) + 1)
        self.resumed += int(outcome.resumed)
        self.png_bytes += outcome.png_bytes or 0
        self.outcomes.append(outcome)
        self._trim()

    def settle(self, outcome: FrameOutcome, old_status: str) -> None:
        """A pending frame got its final status."""
        old, new = self._FIELDS[old_status], self._FIELDS[outcome.status]
        setattr(self, old, getattr(self, old) - 1)
        setattr(self, new, getattr(self, new) + 1)

    def add_result(self, result: AddResult) -> None:
        self.results.append(result)
        self.batches += 1
        for change in result.changes:
            self.changes[change.memory_type.value] += 1
        self._trim()

    def _trim(self) -> None:
        if self.keep is not None:
            del self.outcomes[:-self.keep]
            del self.results[:-self.keep]

    def to_dict(self, *, outcomes: bool = False) -> dict[str, Any]:
        out = {
            "frames": self.frames, "unique": self.unique, "processed": self.processed, "pending": self.pending,
            "duplicates": self.duplicates, "duplicate_share": round(self.duplicate_share, 4),
            "ingested": self.ingested, "claimed": self.claimed, "resumed": self.resumed,
            "no_text": self.no_text, "invalid": self.invalid, "failed": self.failed, "batches": self.batches,
            "memory_changes": dict(self.changes), "png_bytes": self.png_bytes, "text_bytes": self.text_bytes,
            "thumbnail_bytes": self.thumbnail_bytes, "stored_bytes": self.stored_bytes,
            "stored_share": round(self.stored_share, 6), "ocr_seconds": round(self.ocr_seconds, 2),
            "wall_seconds": round(self.wall_seconds, 2),
            "errors": [{"name": n, "error": e} for n, e in self.errors],
        }
        if outcomes:
            out["outcomes"] = [o.model_dump(mode="json") for o in self.outcomes]
        return out
