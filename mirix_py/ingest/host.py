"""What the screenshot pipeline needs from whoever keeps the memories: a small protocol.

`ScreenshotIngestor` reads frames, dedups them and runs OCR; everything after that (writing the
input log, running the memory managers, where thumbnails go, how long an input may be) belongs to
the host. `Mirix` provides one (`mirix_py.screens.engine_methods.EngineScreenshotHost`); tests may pass
any object with these members. Nothing in `mirix_py.ingest` imports the engine.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Mapping, Protocol, Sequence

from mirix_py.records import AddResult, InputRecord

if TYPE_CHECKING:
    from mirix_py.ingest.processed import ProcessedFrame
    from mirix_py.store.inputs import LoggedSource, SourceClaim

__all__ = ["FileClaims", "Mode", "ScreenshotHost"]

Mode = Literal["offline", "llm"]


class FileClaims(Protocol):
    """One run's claims on the files it reads (`ScreenshotHost.claim_files`). A file is claimed before its
    OCR, so another run over the folder skips it rather than reading it too; the claim lives while the run
    does (renewed) and lapses after its lease once the run is gone, so a file is not lost with a run that died."""

    def take(self, name: str, captured_at: datetime) -> SourceClaim:
        """Claim the file about to be read, unless the log holds it or another live run has claimed it."""

    def release(self, claim_ids: Sequence[str]) -> None:
        """End these claims: their files were logged, or gave nothing to log (a repeat, no text, unreadable)."""

    def close(self) -> None:
        """End the claims still held (the run is over) and renew none any more."""


class ScreenshotHost(Protocol):
    """The engine side of screenshot ingestion."""

    @property
    def data_dir(self) -> Path | None:
        """Where thumbnails are kept (`<data_dir>/thumbnails`); None keeps none."""

    @property
    def max_input_chars(self) -> int:
        """The longest text one input may hold; a frame's OCR text is cut to it."""

    @property
    def mode(self) -> Mode:
        """'llm' or 'offline', reported with a frame that never reached the managers."""

    @property
    def supports_vision(self) -> bool:
        """True when batches should carry downscaled frames along with their text."""

    def log_inputs(self, records: Sequence[InputRecord]) -> None:
        """Write frames' records to the input log (before any memory is made from them)."""

    def log_new_inputs(self, records: Sequence[InputRecord]) -> Mapping[str, LoggedSource]:
        """`log_inputs` for the records of files the user's log does not hold yet (by file name and
        capture time), in one step no other run's logging comes between, so two runs over one folder
        log a file once; returns, by the id of each record not written, the input the log holds."""

    def process_batch(self, records: Sequence[InputRecord], frames: Sequence[ProcessedFrame]) -> AddResult:
        """Run one batch of logged records (one user, one app) through the memory managers."""

    def queue_again(self, records: Sequence[InputRecord]) -> bool:
        """A batch raised (the database failing, say): have its logged inputs tried again in the
        background from their logged text; False when that cannot be done (they are marked failed)."""

    def mark_failed(self, input_ids: Sequence[str], error: str) -> None:
        """Mark logged inputs failed when their batch raised and could not be queued again (they keep
        their text for `retry_failed`)."""

    def compact_inputs(self, input_ids: Sequence[str]) -> None:
        """Drop the text of processed inputs from the log, keeping provenance and a hash."""

    def logged_frames(self, user_id: str, names: Sequence[str]) -> Sequence[LoggedSource]:
        """The user's screenshot inputs the log holds under these file names (their source ids), in any
        status and without their text: what earlier runs over a folder did (`ingest.earlier`)."""

    def claim_files(self, user_id: str) -> FileClaims:
        """A run's claims on the user's files it reads (`FileClaims`); closed when the run ends."""

    def take_up(self, input_ids: Sequence[str]) -> AddResult | None:
        """Process now, from their logged text, inputs an earlier run left pending, held by a worker that
        died, or failed (the managers that committed for them skipped); None when none could be claimed."""
