"""Screenshot ingestion: frames in, memories out, images not kept.

    frame ──load──▶ admit (validate, dedup before OCR) ──▶ read (OCR pool) ──▶ mask (secret lines
    painted out of the kept and sent copies) ──▶ batch (input log, then per-app batches of N frames
    / T seconds to host.process_batch(records, frames))

`ScreenshotIngestor` composes the stages, one module each (`ingest.admit`, `ingest.read`,
`ingest.mask`, `ingest.batch`; `ingest.batch_queue` queues batches, `ingest.files` runs over files), for one
`ScreenshotHost` (ingest/host.py: log inputs, process a batch, data dir, limits), which `Mirix`
provides; nothing here knows the engine. `wait=True` (the default of `Mirix.add_screenshot`)
reads the frame and processes it as a batch of its own, so it is searchable when the call
returns; `wait=False` and the capture loop queue frames into per-app batches that close after
`max_frames` frames or `max_seconds`, and `flush()` processes whatever is pending. Bad frames raise
`InvalidInput` (or a subclass) and write nothing; in a directory run they are reported and the
rest goes through.

The seam for the LLM path: `frames_to_records(frames, user_id)` turns a batch into InputRecords
of kind "screenshot" (metadata app / window_title, OCR text as the message); the batch goes to
`host.process_batch(records, frames)` (with a vision-capable model each frame's `vision_image` goes
with its text).

Once a batch is processed, its frames' entries in the input log keep provenance (id, capture
time, file name, app, window, a hash of the text) and drop the text, which lives on in the
memories (`ScreenshotConfig.keep_ocr_text` keeps it). Until then the text is in the log, so a
crash loses nothing.
"""

from __future__ import annotations

import logging
import threading
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any, Callable, Iterable

from mirix_py.ingest.admit import FrameAdmission
from mirix_py.ingest.batch import BatchWriter, Processor, outcome_after
from mirix_py.ingest.batch_queue import QueuedBatches
from mirix_py.ingest.config import ScreenshotConfig
from mirix_py.ingest.files import ingest_files
from mirix_py.ingest.frames import (
    ImageSource, LoadedFrame, list_image_files, load_frame,
)
from mirix_py.ingest.host import ScreenshotHost
from mirix_py.ingest.mask import ImageMasking
from mirix_py.ingest.ocr import OcrPool
from mirix_py.ingest.outcomes import FrameOutcome, IngestReport, ScreenshotResult
from mirix_py.ingest.processed import ProcessedFrame, frames_to_records
from mirix_py.ingest.read import FrameReader
from mirix_py.ingest.thumbnails import Thumbnails, kept_thumbnail, user_thumbnail_dir
from mirix_py.records import AddResult, InputStatus
from mirix_py.secrets.redaction import scrub

log = logging.getLogger("mirix_py.screenshots")

__all__ = [
    "FrameOutcome", "IngestReport", "ProcessedFrame", "ScreenshotConfig", "ScreenshotIngestor", "ScreenshotResult",
    "frames_to_records", "kept_thumbnail", "user_thumbnail_dir",
]


class ScreenshotIngestor:
    """Screenshot pipeline for one host (ingest/host.py). `process` replaces `host.process_batch`."""

    def __init__(self, host: ScreenshotHost, config: ScreenshotConfig | None = None, *,
                 process: Processor | None = None, ocr: OcrPool | None = None,
                 thumbnails_dir: str | Path | None = None) -> None:
        self.host = host
        self.config = config or ScreenshotConfig()
        self.ocr = ocr or OcrPool(self.config.ocr, workers=self.config.workers)
        data_dir = host.data_dir
        self.thumbnails_dir = Path(thumbnails_dir) if thumbnails_dir else (
            Path(data_dir) / "thumbnails" if data_dir is not None else None)
        self.lock = threading.RLock()  # the totals, and the queued batches' state
        self.totals = IngestReport(keep=1000)
        self.thumbnails = Thumbnails(self.thumbnails_dir, self.config.thumbnail_retention, self.totals, self.lock)
        self.admission = FrameAdmission(self.config, self.thumbnails)
        self.masking = ImageMasking(self.config.min_text_chars, self.thumbnails)
        self.reader = FrameReader(self.ocr, mask=self.masking.protect, forget=self.admission.forget,
                                  totals=self.totals, lock=self.lock)
        self.writer = BatchWriter(host, self.config, process=process or host.process_batch, finish=self.reader.finish,
                                  totals=self.totals, lock=self.lock, drop_thumbnail=self.thumbnails.drop)
        self.queued = QueuedBatches(self.config.batch, self.writer, totals=self.totals, lock=self.lock)

    def check(self) -> None:
        """Tesseract and the language data are there (raises TesseractMissing / InvalidInput)."""
        self.reader.check()

    @property
    def vision(self) -> bool:
        if self.config.vision is not None:
            return self.config.vision
        return self.host.supports_vision

    def admit(self, loaded: LoadedFrame, *, user_id: str, captured_at: datetime | str | None, app: str | None,
               window_title: str | None, source_id: str | None) -> tuple[ProcessedFrame | None, FrameOutcome]:
        """Admit the frame and start its OCR. Returns (frame, outcome); frame None when skipped."""
        frame, outcome = self.admission.admit(loaded, user_id=user_id, captured_at=captured_at, app=app,
                                              window_title=window_title, source_id=source_id, vision=self.vision)
        if frame is not None:
            self.reader.start(frame, loaded.image)
        return frame, outcome

    def remember(self, loaded: LoadedFrame, *, user_id: str, app: str | None, window_title: str | None) -> None:
        """A frame an earlier run kept (its input is in the log): the last kept frame of its window, which
        the next frames of the window are compared with. Nothing is read or written."""
        self.admission.remember(loaded, user_id=user_id, app=app, window_title=window_title)

    def add(self, image: ImageSource, *, user_id: str, captured_at: datetime | str | None,
            app: str | None = None, window_title: str | None = None, wait: bool = True,
            source_id: str | None = None, name: str | None = None) -> ScreenshotResult:
        """One frame. wait=True: OCR and memory update now, as a batch of one. wait=False: queued."""
        self.check()
        loaded = load_frame(image, name=name)
        if wait and self.pending():
            self.flush()  # queued frames first: windows are memorised in capture order
        frame, outcome = self.admit(loaded, user_id=user_id, captured_at=captured_at, app=app,
                                     window_title=window_title, source_id=source_id)
        result: AddResult | None = None
        if frame is not None and wait:
            result = self.writer.run([frame])
            outcome = outcome_after(frame, outcome, result)
            if result is not None:
                with self.lock:
                    self.totals.add_result(result)
        with self.lock:
            self.totals.count(outcome)
        if frame is not None and not wait:
            self.queued.enqueue(frame)
        mode = self.host.mode
        # the OCR text as the caller sees it: secrets the vault rules find are placeholders, as in memory
        text = scrub(frame.text) if frame is not None and wait else ""
        if result is not None:
            return ScreenshotResult(**result.model_dump(), frame=outcome, text=text)
        if outcome.status == "pending":
            return ScreenshotResult(input_ids=[outcome.input_id] if outcome.input_id else [],
                                    status=InputStatus.pending, mode=mode, frame=outcome)
        if outcome.status == "failed":
            return ScreenshotResult(input_ids=[], status=InputStatus.failed, mode=mode, error=outcome.error,
                                    frame=outcome, text=text)
        return ScreenshotResult(input_ids=[], status=InputStatus.processed, mode=mode, frame=outcome, text=text)

    def tick(self, now: float | None = None) -> int:
        """Send batches that have waited max_seconds to the managers; returns how many were sent."""
        return self.queued.tick(now)

    def pending(self) -> int:
        return self.queued.pending()

    def flush(self) -> list[AddResult]:
        """Process every queued frame now and wait; returns the results since the last flush."""
        return self.queued.flush()

    # ------------------------------------------------------------ files and directories

    def ingest_paths(self, paths: Iterable[str | Path], *, user_id: str, app: str | None = None,
                     window_title: str | None = None, default_tz: tzinfo | None = None,
                     progress: Callable[[int], None] | None = None) -> IngestReport:
        """Ingest image files: times from metadata or names, dedup in time order, per-app batches
        (`ingest.files`). A bad file is reported and the rest goes on; all batches are processed
        when it returns."""
        return ingest_files(self, paths, user_id=user_id, app=app, window_title=window_title, default_tz=default_tz,
                            progress=progress)

    def ingest_directory(self, directory: str | Path, *, user_id: str, recursive: bool = False,
                         **kwargs: Any) -> IngestReport:
        return self.ingest_paths(list_image_files(directory, recursive=recursive), user_id=user_id, **kwargs)

    # ------------------------------------------------------------ thumbnails and users

    def purge_thumbnails(self, now: datetime | None = None) -> int:
        """Delete thumbnails older than the retention period; returns how many files went."""
        return self.thumbnails.purge(now)

    def thumbnail_path(self, relative: str) -> Path:
        return self.thumbnails.path(relative)

    def delete_user(self, user_id: str) -> int:
        """Remove a user's thumbnails and screen state (the host removes rows, vectors and inputs)."""
        self.admission.delete_user(user_id)
        return self.thumbnails.delete_user(user_id)

    # ------------------------------------------------------------ lifecycle

    def stop(self, timeout: float | None = None) -> None:
        """Process what is queued, starting batches for `timeout` seconds at most (None: all); the
        frames of those left are logged, not processed, and handed back to the host (`QueuedBatches.stop`)."""
        self.queued.stop(timeout)

    def close(self, timeout: float | None = None) -> tuple[list[str], list[str]]:
        """`stop(timeout)` (unless called), then stop the OCR workers and background threads once the
        batch running has ended. Returns the input ids left pending in the log, and those of the batch
        running when the timeout passed."""
        try:
            return self.queued.close(timeout)
        finally:
            self.reader.close()

    def __enter__(self) -> "ScreenshotIngestor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
