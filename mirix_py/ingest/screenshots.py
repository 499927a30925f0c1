"""Screenshot ingestion: frames in, memories out, images not kept.

    frame ──load/validate──▶ dedup (before OCR) ──▶ OCR pool ──▶ input log (OCR text, capture time,
    app, window) ──▶ batches per app (N frames / T seconds) ──▶ host.process_batch(records, frames)

`ScreenshotIngestor` ties the steps together for one `ScreenshotHost` (ingest/host.py: log inputs,
process a batch, data dir, limits), which `Mirix` provides; nothing here knows the engine.
`wait=True` (the default of `Mirix.add_screenshot`) reads the frame and processes it as a batch of
its own, so it is searchable when the call returns; `wait=False` and the capture loop queue frames
into per-app batches that close after `max_frames` frames or `max_seconds`, and `flush()`
processes whatever is pending. Bad frames raise `InvalidInput` (or a subclass) and write nothing; in a directory run
they are reported and the rest goes through.

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

import functools
import hashlib
import logging
import os
import shutil
import threading
import time
from collections import Counter, deque
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone, tzinfo
from pathlib import Path
from typing import Any, Callable, Iterable, Literal, Sequence

from PIL import Image
from pydantic import BaseModel, Field

from mirix_py.errors import InvalidInput
from mirix_py.ingest.batching import BatchPolicy, FrameBatcher
from mirix_py.ingest.dedup import DEFAULT_THRESHOLD, Deduplicator, FrameSignature
from mirix_py.ingest.host import ScreenshotHost
from mirix_py.ingest.frames import (
    ImageSource, LoadedFrame, frame_info_from_file, list_image_files, load_frame, pixel_digest, png_size,
    probe_frame,
)
from mirix_py.ingest.masking import mask_regions
from mirix_py.ingest.multimodal import VISION_MAX_SIDE, downscale_for_vision
from mirix_py.ingest.ocr import OcrConfig, OcrPool, OcrResult
from mirix_py.inputs import normalize_add, parse_when
from mirix_py.records import AddResult, InputRecord, InputStatus, MemoryChange, new_input_id, utcnow
from mirix_py.secrets.masking import secret_line_boxes
from mirix_py.secrets.redaction import scrub
from mirix_py.store.private import open_private, private_dir

log = logging.getLogger("mirix_py.screenshots")

__all__ = [
    "FrameOutcome", "IngestReport", "ProcessedFrame", "ScreenshotConfig", "ScreenshotIngestor", "ScreenshotResult",
    "frames_to_records",
]

FrameStatus = Literal["processed", "pending", "duplicate", "no_text", "invalid", "failed"]


@dataclass(frozen=True)
class ScreenshotConfig:
    """Everything about screenshot ingestion that a user may want to change.

    workers: OCR processes (default: one per core, each running single-threaded Tesseract).
    similarity_threshold: a frame at least this similar (regionally, see dedup.py) to the last
        kept frame of the same window is skipped before OCR; 1.0 skips only identical frames.
    batch: frames per update (max_frames) and seconds per update (max_seconds), grouped by app.
    min_text_chars: frames with less recognised text than this are not memorised.
    keep_thumbnails / thumbnail_max_side / thumbnail_retention: raw frames are never kept; a small
        WebP thumbnail can be, deleted after the retention period (None keeps them). It is written
        after OCR, with every line holding a secret painted out (`ingest.masking`); a frame whose
        OCR failed or found no text keeps none.
    vision / vision_max_side: keep a downscaled copy of each frame in memory until its batch is
        processed, for a vision-capable model (None: ask the host's `supports_vision`); its secret
        lines are painted out the same way, and a frame whose OCR failed sends no image.
    keep_ocr_text: keep each frame's OCR text in the input log after its batch is processed.
        By default a processed frame's entry keeps its id, capture time, file name, app, window
        and a hash of the text, and the text itself lives on in the memories made from it
        (`InputLog.compact`); frames not yet processed, or failed, always keep their text.
    """

    ocr: OcrConfig = field(default_factory=OcrConfig)
    workers: int | None = None
    dedup: bool = True
    similarity_threshold: float = DEFAULT_THRESHOLD
    batch: BatchPolicy = field(default_factory=BatchPolicy)
    min_text_chars: int = 3
    keep_thumbnails: bool = False
    thumbnail_max_side: int = 320
    thumbnail_retention: timedelta | None = timedelta(days=7)
    vision: bool | None = None
    vision_max_side: int = VISION_MAX_SIDE
    keep_ocr_text: bool = False
    measure_png_bytes: bool = True

    def __post_init__(self) -> None:
        if not 0 < self.similarity_threshold <= 1:
            raise InvalidInput("similarity_threshold must be in (0, 1]")
        if self.workers is not None and self.workers < 0:
            raise InvalidInput("workers must be >= 0 (0 runs OCR in the calling process)")
        if self.thumbnail_max_side < 16:
            raise InvalidInput("thumbnail_max_side must be at least 16 pixels")
        if self.thumbnail_retention is not None and self.thumbnail_retention <= timedelta(0):
            raise InvalidInput("thumbnail_retention must be positive (or None to keep thumbnails)")


# ---------------------------------------------------------------- frames through the pipeline


@dataclass
class ProcessedFrame:
    """A frame after OCR, on its way to the input log and the memory managers."""

    user_id: str
    captured_at: datetime
    app: str | None
    window_title: str | None
    name: str
    ocr: OcrResult | None = None
    input_id: str | None = None
    source_id: str | None = None
    thumbnail: str | None = None
    vision_image: Image.Image | None = field(default=None, repr=False)
    thumbnail_image: Image.Image | None = field(default=None, repr=False)  # until OCR says what to paint out
    png_bytes: int | None = None
    future: Future | None = field(default=None, repr=False)
    signature: FrameSignature | None = field(default=None, repr=False)
    record: InputRecord | None = field(default=None, repr=False)
    outcome: "FrameOutcome | None" = field(default=None, repr=False)
    error: str | None = None

    @property
    def text(self) -> str:
        return self.ocr.text if self.ocr else ""


def user_thumbnail_dir(thumbnails_dir: Path, user_id: str) -> Path:
    """Where one user's thumbnails are kept: a hash of the user id, so the path names nobody."""
    return Path(thumbnails_dir) / hashlib.sha256(user_id.encode()).hexdigest()[:16]


def kept_thumbnail(thumbnails_dir: Path, user_id: str, relative: str | None) -> Path | None:
    """The file an input's `metadata["thumbnail"]` names, if it is still there and inside this
    user's folder (a path reaching elsewhere is no thumbnail)."""
    if not relative:
        return None
    own = user_thumbnail_dir(thumbnails_dir, user_id).resolve()
    path = (Path(thumbnails_dir) / relative).resolve()
    if not path.is_relative_to(own) or path.suffix != ".webp" or not path.is_file():
        return None
    return path


def _clean_text(text: str) -> str:
    return "".join(ch for ch in text if ch in "\n\t" or ord(ch) >= 32).strip()


def frames_to_records(frames: Sequence[ProcessedFrame], user_id: str, *, max_chars: int = 200_000) -> list[InputRecord]:
    """The seam between ingestion and the memory managers: one InputRecord per frame.

    kind "screenshot", the OCR text as the message content, the capture time as occurred_at,
    metadata {"app", "window_title"} (and "thumbnail" when one is kept), the file name as source_id.
    Frames without text are left out.
    """
    records = []
    for frame in frames:
        text = _clean_text(frame.text)
        if not text:
            continue
        metadata = {k: v for k, v in (("app", frame.app), ("window_title", frame.window_title),
                                      ("thumbnail", frame.thumbnail)) if v}
        record = normalize_add(text[:max_chars], user_id=user_id, occurred_at=frame.captured_at,
                               source_id=frame.source_id, kind="screenshot", max_chars=max_chars, metadata=metadata)
        if frame.input_id:
            record = record.model_copy(update={"id": frame.input_id})
        records.append(record)
    return records


class FrameOutcome(BaseModel):
    """What happened to one frame."""

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


class ScreenshotResult(AddResult):
    """Returned by `Mirix.add_screenshot`: an AddResult (input ids, status, memory changes) plus
    what happened to the frame. A duplicate or blank frame is `processed` with no input: nothing
    was written. With wait=False the status is `pending` and the input id is reserved; the input
    appears in the log once its OCR is done (a second or two)."""

    frame: FrameOutcome
    text: str = Field(default="", description="The OCR text (when the call waited for it).")


@dataclass
class IngestReport:
    """Counts, bytes and outcomes of an ingestion run (or of an ingestor's life so far)."""

    frames: int = 0
    processed: int = 0
    pending: int = 0
    duplicates: int = 0
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
        return self.frames - self.duplicates - self.invalid

    @property
    def duplicate_share(self) -> float:
        valid = self.frames - self.invalid
        return self.duplicates / valid if valid else 0.0

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

    _FIELDS = {"processed": "processed", "pending": "pending", "duplicate": "duplicates", "no_text": "no_text",
               "invalid": "invalid", "failed": "failed"}

    def count(self, outcome: FrameOutcome) -> None:
        self.frames += 1
        attr = self._FIELDS[outcome.status]
        setattr(self, attr, getattr(self, attr) + 1)
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


Processor = Callable[[Sequence[InputRecord], Sequence[ProcessedFrame]], AddResult]


# ---------------------------------------------------------------- the ingestor


class ScreenshotIngestor:
    """Screenshot pipeline for one host (ingest/host.py). `process` replaces `host.process_batch`."""

    def __init__(self, host: ScreenshotHost, config: ScreenshotConfig | None = None, *,
                 process: Processor | None = None, ocr: OcrPool | None = None,
                 thumbnails_dir: str | Path | None = None) -> None:
        self.host = host
        self.config = config or ScreenshotConfig()
        self._process_fn = process
        self.ocr = ocr or OcrPool(self.config.ocr, workers=self.config.workers)
        data_dir = host.data_dir
        self.thumbnails_dir = Path(thumbnails_dir) if thumbnails_dir else (
            Path(data_dir) / "thumbnails" if data_dir is not None else None)
        self._lock = threading.RLock()
        self._dedup: dict[str, Deduplicator] = {}
        self._png_sizes: dict[tuple, int | None] = {}  # (user, window) -> PNG bytes of its last kept frame
        self._batcher: FrameBatcher[ProcessedFrame] = FrameBatcher(
            self.config.batch, key=lambda f: (f.user_id, f.app), when=lambda f: f.captured_at)
        self._worker: ThreadPoolExecutor | None = None
        self._jobs: list[Future] = []
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()
        self._checked = False
        self.totals = IngestReport(keep=1000)
        self._unflushed: list[AddResult] = []

    # ------------------------------------------------------------ helpers

    def check(self) -> None:
        """Tesseract and the language data are there (raises TesseractMissing / InvalidInput)."""
        if not self._checked:
            self.ocr.check()
            self._checked = True

    @property
    def vision(self) -> bool:
        if self.config.vision is not None:
            return self.config.vision
        return self.host.supports_vision

    def _max_chars(self) -> int:
        return self.host.max_input_chars

    def _deduplicator(self, user_id: str) -> Deduplicator:
        dedup = self._dedup.get(user_id)
        if dedup is None:
            dedup = self._dedup[user_id] = Deduplicator(self.config.similarity_threshold)
        return dedup

    def _processor(self) -> Processor:
        return self._process_fn or self.host.process_batch

    # ------------------------------------------------------------ intake

    def _admit(self, loaded: LoadedFrame, *, user_id: str, captured_at: datetime | str | None, app: str | None,
               window_title: str | None, source_id: str | None) -> tuple[ProcessedFrame | None, FrameOutcome]:
        """Validate the metadata, dedup, and start OCR. Returns (frame, outcome); frame None when skipped."""
        if not isinstance(user_id, str) or not user_id.strip():
            raise InvalidInput("user_id is required")
        when = parse_when(captured_at, "captured_at") or utcnow()
        for name, value in (("app", app), ("window_title", window_title)):
            if value is not None and (not isinstance(value, str) or len(value) > 1000):
                raise InvalidInput(f"{name} must be a string of at most 1000 characters")
        app = (app or "").strip() or None
        window_title = (window_title or "").strip() or None
        # PNG size for the storage report: exact for PNG input; an in-memory frame (the capture
        # loop) is encoded only when kept, and its duplicates count the size of the frame they repeat
        png = loaded.png_bytes
        outcome = FrameOutcome(name=loaded.name, status="pending", captured_at=when, app=app,
                               window_title=window_title, png_bytes=png)
        frame = ProcessedFrame(user_id=user_id, captured_at=when, app=app, window_title=window_title,
                               name=loaded.name, source_id=source_id, png_bytes=png, outcome=outcome,
                               input_id=new_input_id())
        if self.config.dedup:
            with self._lock:
                dedup = self._deduplicator(user_id)
                decision, sig = dedup.observe(loaded.image, (app, window_title))
            outcome.similarity = None if decision.compared_with is None else round(decision.similarity, 4)
            if decision.duplicate:
                outcome.status = "duplicate"
                if outcome.png_bytes is None and self.config.measure_png_bytes:
                    outcome.png_bytes = self._png_sizes.get((user_id, decision.compared_with))
                return None, outcome
            frame.signature = sig
        if png is None and self.config.measure_png_bytes:
            png = outcome.png_bytes = frame.png_bytes = png_size(loaded)
        with self._lock:
            key = (user_id, (app, window_title))
            self._png_sizes.pop(key, None)
            self._png_sizes[key] = png
            if len(self._png_sizes) > 4096:  # windows come and go: keep the recent ones
                del self._png_sizes[next(iter(self._png_sizes))]
        # the downscaled copies wait in memory for OCR, which says which lines hold secrets (_protect_images)
        if self.vision:
            frame.vision_image = downscale_for_vision(loaded.image, self.config.vision_max_side)
        if self.config.keep_thumbnails and self._thumbnail_due(user_id, when):
            frame.thumbnail_image = downscale_for_vision(loaded.image, self.config.thumbnail_max_side)
        frame.future = self.ocr.submit(loaded.image)
        outcome.input_id = frame.input_id
        return frame, outcome

    def _finish_ocr(self, frame: ProcessedFrame) -> bool:
        """Wait for the frame's OCR, then paint its secrets out of its images (`_protect_images`);
        False (with frame.error, and no image kept or sent) when it failed."""
        if frame.ocr is not None or frame.error is not None:
            return frame.error is None
        try:
            ocr = frame.future.result() if frame.future else None
        except Exception as exc:
            frame.error = f"OCR failed: {exc}"
            frame.vision_image = frame.thumbnail_image = None  # fail closed: nothing says where secrets are
            with self._lock:
                if frame.signature is not None:
                    self._deduplicator(frame.user_id).forget((frame.app, frame.window_title), frame.signature)
            return False
        finally:
            frame.future = None
        self._protect_images(frame, ocr)
        frame.ocr = ocr  # only now: a frame with OCR text is one whose images are safe
        if ocr is not None:
            with self._lock:
                self.totals.ocr_seconds += ocr.seconds
        return True

    def _protect_images(self, frame: ProcessedFrame, ocr: OcrResult | None) -> None:
        """Paint every OCR line that holds a secret out of the frame's vision image and thumbnail,
        then write the thumbnail. Fails closed: a frame without usable text (it makes no input),
        or any error here, keeps no thumbnail and sends no image."""
        thumb, frame.thumbnail_image = frame.thumbnail_image, None
        if frame.vision_image is None and thumb is None:
            return
        try:
            if ocr is None or len(_clean_text(ocr.text)) < self.config.min_text_chars:
                frame.vision_image = None
                return
            boxes = secret_line_boxes(ocr)
            if boxes:
                if frame.vision_image is not None:
                    frame.vision_image = mask_regions(frame.vision_image, boxes, source_size=ocr.size)
                if thumb is not None:
                    thumb = mask_regions(thumb, boxes, source_size=ocr.size)
            if thumb is not None:
                frame.thumbnail = self._write_thumbnail(thumb, frame.user_id, frame.captured_at)
        except Exception:
            log.exception("painting secrets out of a frame's images failed: the frame keeps and sends none")
            frame.vision_image, frame.thumbnail = None, None

    def _log(self, frames: Sequence[ProcessedFrame]) -> list[ProcessedFrame]:
        """Write OCR text to the input log (once per frame); returns the frames that have text."""
        fresh: list[InputRecord] = []
        with_text: list[ProcessedFrame] = []
        for frame in frames:
            if frame.record is None:
                if frame.error is not None or len(_clean_text(frame.text)) < self.config.min_text_chars:
                    continue
                records = frames_to_records([frame], frame.user_id, max_chars=self._max_chars())
                if not records:
                    continue
                frame.record = records[0]
                frame.input_id = frame.record.id
                fresh.append(frame.record)
            with_text.append(frame)
        if fresh:
            self.host.log_inputs(fresh)
            with self._lock:
                self.totals.text_bytes += sum(len(m.content.encode("utf-8")) for r in fresh for m in r.messages)
        return with_text

    def _run_batch(self, frames: Sequence[ProcessedFrame]) -> AddResult | None:
        """OCR results → input log → memory managers, for one batch of one user and app."""
        for frame in frames:
            self._finish_ocr(frame)
        with_text = self._log(frames)
        if not with_text:
            return None
        records = [f.record for f in with_text if f.record is not None]
        try:
            result = self._processor()(records, with_text)
        except Exception as exc:  # the managers failed as a whole: inputs stay logged and are marked failed
            log.exception("screenshot batch failed")
            self.host.mark_failed([r.id for r in records], f"{type(exc).__name__}: {exc}")
            result = AddResult(input_ids=[r.id for r in records], status=InputStatus.failed, error=str(exc))
        finally:
            for frame in with_text:
                frame.vision_image = None  # images do not outlive their batch
        if result is not None and result.status is InputStatus.processed and not self.config.keep_ocr_text:
            try:  # the memories hold the text now; the log keeps provenance and a hash
                self.host.compact_inputs([r.id for r in records])
            except Exception:  # the batch stands; the entries merely keep their text
                log.exception("compacting the input log failed")
        return result

    def _outcome_after(self, frame: ProcessedFrame, outcome: FrameOutcome, result: AddResult | None) -> FrameOutcome:
        if frame.error is not None:
            outcome.status, outcome.error, outcome.input_id = "failed", frame.error, None
        elif frame.record is None:
            outcome.status, outcome.input_id = "no_text", None
        elif result is not None and result.status is InputStatus.failed:
            outcome.status, outcome.error, outcome.input_id = "failed", result.error, frame.input_id
        else:
            outcome.status, outcome.input_id = "processed", frame.input_id
        outcome.text_chars = len(frame.text)
        return outcome

    # ------------------------------------------------------------ public API

    def add(self, image: ImageSource, *, user_id: str, captured_at: datetime | str | None,
            app: str | None = None, window_title: str | None = None, wait: bool = True,
            source_id: str | None = None, name: str | None = None) -> ScreenshotResult:
        """One frame. wait=True: OCR and memory update now, as a batch of one. wait=False: queued."""
        self.check()
        loaded = load_frame(image, name=name)
        if wait and self.pending():
            self.flush()  # queued frames first: windows are memorised in capture order
        frame, outcome = self._admit(loaded, user_id=user_id, captured_at=captured_at, app=app,
                                     window_title=window_title, source_id=source_id)
        result: AddResult | None = None
        if frame is not None and wait:
            result = self._run_batch([frame])
            outcome = self._outcome_after(frame, outcome, result)
            if result is not None:
                with self._lock:
                    self.totals.add_result(result)
        with self._lock:
            self.totals.count(outcome)
        if frame is not None and not wait:
            self._enqueue(frame)
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

    def _enqueue(self, frame: ProcessedFrame) -> None:
        with self._lock:
            closed = self._batcher.add(frame, now=time.monotonic())
            self._ensure_ticker()
        future = frame.future
        if future is not None:  # log the text as soon as OCR is done: nothing acknowledged is lost
            future.add_done_callback(functools.partial(self._log_when_done, frame))
        for batch in closed:
            self._submit_job(self._run_async_batch, batch)

    def _log_when_done(self, frame: ProcessedFrame, _future: Future[Any]) -> None:
        self._submit_job(self._log_when_read, frame)

    def _log_when_read(self, frame: ProcessedFrame) -> None:
        if self._finish_ocr(frame):
            self._log([frame])

    def _run_async_batch(self, batch: list[ProcessedFrame]) -> None:
        try:
            result = self._run_batch(batch)
        except Exception as exc:  # e.g. the database went away: the frames fail, the loop goes on
            log.exception("screenshot batch failed")
            for frame in batch:
                frame.error = frame.error or f"{type(exc).__name__}: {exc}"
            result = None
        with self._lock:
            for frame in batch:
                if frame.outcome is not None and frame.outcome.status == "pending":
                    self._outcome_after(frame, frame.outcome, result)
                    self.totals.settle(frame.outcome, "pending")
            if result is not None:
                self.totals.add_result(result)
                self._unflushed.append(result)

    def _submit_job(self, fn: Callable[..., Any], *args: Any) -> None:
        with self._lock:
            if self._worker is None:
                self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mirix-screenshots")
            self._jobs = [j for j in self._jobs if not j.done()]
            self._jobs.append(self._worker.submit(fn, *args))

    def _ensure_ticker(self) -> None:
        if self._ticker is None or not self._ticker.is_alive():
            self._stop.clear()
            self._ticker = threading.Thread(target=self._tick_loop, name="mirix-screenshot-batches", daemon=True)
            self._ticker.start()

    def _tick_loop(self) -> None:
        period = min(1.0, self.config.batch.max_seconds / 4)
        while not self._stop.wait(period):
            self.tick()

    def tick(self, now: float | None = None) -> int:
        """Send batches that have waited max_seconds to the managers; returns how many were sent."""
        with self._lock:
            due = self._batcher.due(time.monotonic() if now is None else now)
        for batch in due:
            self._submit_job(self._run_async_batch, batch)
        return len(due)

    def pending(self) -> int:
        with self._lock:
            return len(self._batcher)

    def flush(self) -> list[AddResult]:
        """Process every queued frame now and wait; returns the results since the last flush."""
        with self._lock:
            batches = self._batcher.drain()
        for batch in batches:
            self._submit_job(self._run_async_batch, batch)
        self._wait_jobs()
        with self._lock:
            out, self._unflushed = self._unflushed, []
        return out

    def _wait_jobs(self) -> None:
        while True:
            with self._lock:
                jobs = [j for j in self._jobs if not j.done()]
            if not jobs:
                return
            for job in jobs:
                try:
                    job.result()
                except Exception:  # logged where it happened; keep draining
                    log.exception("screenshot job failed")

    # ------------------------------------------------------------ files and directories

    def ingest_paths(self, paths: Iterable[str | Path], *, user_id: str, app: str | None = None,
                     window_title: str | None = None, default_tz: tzinfo | None = None,
                     progress: Callable[[int], None] | None = None) -> IngestReport:
        """Ingest image files: times from metadata or names, dedup in time order, per-app batches.

        A bad file is reported (status "invalid" with the reason) and the rest goes on. Returns a
        report of this run; all its batches are processed when it returns.
        """
        self.check()
        if not isinstance(user_id, str) or not user_id.strip():
            raise InvalidInput("user_id is required")
        started = time.perf_counter()
        report = IngestReport()
        ocr_before, text_before, thumbs_before = self.totals.ocr_seconds, self.totals.text_bytes, self.totals.thumbnail_bytes

        def tick() -> None:
            if progress:
                progress(1)

        # 1. headers only (no pixels): capture times, so frames are taken in capture order
        entries: list[tuple[datetime, Path, Any]] = []
        for path in map(Path, paths):
            try:
                info = frame_info_from_file(path, probe_frame(path), default_tz=default_tz)
            except InvalidInput as exc:
                report.count(FrameOutcome(name=path.name, status="invalid", error=str(exc)))
                tick()
                continue
            entries.append((info.captured_at, path, info))
        entries.sort(key=lambda e: (e[0], e[1].name))

        # 2. decode, dedup and OCR in time order with a few frames in flight; each batch goes to the
        #    memory managers as it closes, on a thread of its own, so reading frames never waits for them
        batcher: FrameBatcher[ProcessedFrame] = FrameBatcher(self.config.batch, key=lambda f: f.app,
                                                             when=lambda f: f.captured_at)
        managers = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mirix-screenshot-batches")
        submitted: list[tuple[Future, list[ProcessedFrame]]] = []

        def run(batch: list[ProcessedFrame]) -> None:
            submitted.append((managers.submit(self._run_batch, batch), batch))

        # a file with the same pixels as the previous one of its window is a duplicate: no decoding
        last_digest: dict[tuple, tuple[bytes, ProcessedFrame | None]] = {}

        def complete(frame: ProcessedFrame) -> None:
            self._finish_ocr(frame)
            key = (frame.app, frame.window_title)
            if frame.error is not None and last_digest.get(key, (b"", None))[1] is frame:
                del last_digest[key]  # its OCR failed: an identical file gets another chance
            tick()
            for batch in batcher.add(frame):
                run(batch)

        in_flight: deque[ProcessedFrame] = deque()
        limit = 3 * max(self.ocr.workers, 1)
        for when, path, info in entries:
            frame_app, frame_window = app or info.app, window_title or info.window_title
            key = ((frame_app or "").strip() or None, (frame_window or "").strip() or None)
            try:
                data = path.read_bytes()
                digest = pixel_digest(data)
                if self.config.dedup and key in last_digest and last_digest[key][0] == digest:
                    report.count(FrameOutcome(name=path.name, status="duplicate", captured_at=when, app=key[0],
                                              window_title=key[1], similarity=1.0, png_bytes=len(data)))
                    tick()
                    continue
                loaded = load_frame(data, name=path.name)
                if loaded.format == "PNG":
                    loaded.png_bytes = len(data)
                frame, outcome = self._admit(loaded, user_id=user_id, captured_at=when, app=frame_app,
                                             window_title=frame_window, source_id=path.name)
            except InvalidInput as exc:
                report.count(FrameOutcome(name=path.name, status="invalid", error=str(exc)))
                tick()
                continue
            except OSError as exc:  # unreadable file
                report.count(FrameOutcome(name=path.name, status="invalid", error=f"{path.name}: {exc}"))
                tick()
                continue
            del loaded, data
            last_digest[key] = (digest, frame)
            if frame is None:
                report.count(outcome)
                tick()
                continue
            in_flight.append(frame)
            while len(in_flight) > limit:
                complete(in_flight.popleft())
        while in_flight:
            complete(in_flight.popleft())
        for batch in batcher.drain():
            run(batch)
        managers.shutdown(wait=True)
        for future, batch in submitted:  # batches ran in capture order; collect their outcomes
            try:
                result = future.result()
            except Exception as exc:  # e.g. the database went away: these frames failed, the others stand
                log.exception("screenshot batch failed")
                for frame in batch:
                    frame.error = frame.error or f"{type(exc).__name__}: {exc}"
                result = None
            if result is not None:
                report.add_result(result)
            for frame in batch:
                assert frame.outcome is not None  # set by _admit for every frame that reaches a batch
                report.count(self._outcome_after(frame, frame.outcome, result))

        report.ocr_seconds = self.totals.ocr_seconds - ocr_before
        report.text_bytes = self.totals.text_bytes - text_before
        report.thumbnail_bytes = self.totals.thumbnail_bytes - thumbs_before
        report.wall_seconds = time.perf_counter() - started
        report.outcomes.sort(key=lambda o: (o.captured_at or datetime.min.replace(tzinfo=timezone.utc), o.name))
        with self._lock:
            for outcome in report.outcomes:
                self.totals.count(outcome)
            for result in report.results:
                self.totals.add_result(result)
        return report

    def ingest_directory(self, directory: str | Path, *, user_id: str, recursive: bool = False,
                         **kwargs: Any) -> IngestReport:
        return self.ingest_paths(list_image_files(directory, recursive=recursive), user_id=user_id, **kwargs)

    # ------------------------------------------------------------ thumbnails

    def _user_dir(self, user_id: str) -> Path | None:
        if self.thumbnails_dir is None:
            return None
        return user_thumbnail_dir(self.thumbnails_dir, user_id)

    def _thumbnail_due(self, user_id: str, when: datetime) -> bool:
        """A thumbnail has a folder to go to and is not already past its retention period."""
        retention = self.config.thumbnail_retention
        return self._user_dir(user_id) is not None and (retention is None or when >= utcnow() - retention)

    def _write_thumbnail(self, thumb: Image.Image, user_id: str, when: datetime) -> str | None:
        """Write an already downscaled (and masked) thumbnail; its path relative to the thumbnail dir."""
        root = self._user_dir(user_id)
        if root is None or not self._thumbnail_due(user_id, when):
            return None
        day = root / when.astimezone(timezone.utc).strftime("%Y-%m-%d")
        private_dir(day)  # screen text: owner-only, like the rest of the data dir
        path = day / f"{when.astimezone(timezone.utc).strftime('%H%M%S%f')}-{os.urandom(3).hex()}.webp"
        with open_private(path, "wb") as fh:
            thumb.save(fh, format="WEBP", quality=60)
        with self._lock:
            self.totals.thumbnail_bytes += path.stat().st_size
        self.purge_thumbnails()
        return str(path.relative_to(root.parent))  # <hash of user>/<day>/<file>.webp

    def purge_thumbnails(self, now: datetime | None = None) -> int:
        """Delete thumbnails older than the retention period; returns how many files went."""
        if self.thumbnails_dir is None or self.config.thumbnail_retention is None or not self.thumbnails_dir.exists():
            return 0
        cutoff = (now or utcnow()) - self.config.thumbnail_retention
        removed = 0
        for user_dir in self.thumbnails_dir.iterdir():
            if not user_dir.is_dir():
                continue
            for day in user_dir.iterdir():
                try:
                    day_start = datetime.strptime(day.name, "%Y-%m-%d").replace(tzinfo=timezone.utc)
                except ValueError:
                    continue
                if day_start + timedelta(days=1) <= cutoff:  # the whole day is out
                    removed += sum(1 for _ in day.glob("*.webp"))
                    shutil.rmtree(day, ignore_errors=True)
                elif day_start <= cutoff:
                    for file in day.glob("*.webp"):
                        stamp = datetime.strptime(day.name + file.name[:12], "%Y-%m-%d%H%M%S%f").replace(tzinfo=timezone.utc)
                        if stamp < cutoff:
                            file.unlink(missing_ok=True)
                            removed += 1
        return removed

    def thumbnail_path(self, relative: str) -> Path:
        if self.thumbnails_dir is None:
            raise InvalidInput("no thumbnail directory")
        path = (self.thumbnails_dir / relative).resolve()
        if self.thumbnails_dir.resolve() not in path.parents:
            raise InvalidInput("thumbnail path escapes the thumbnail directory")
        return path

    def delete_user(self, user_id: str) -> int:
        """Remove a user's thumbnails and screen state (the host removes rows, vectors and inputs)."""
        with self._lock:
            self._dedup.pop(user_id, None)
        root = self._user_dir(user_id)
        if root is None or not root.exists():
            return 0
        count = sum(1 for _ in root.rglob("*.webp"))
        shutil.rmtree(root, ignore_errors=True)
        return count

    # ------------------------------------------------------------ lifecycle

    def close(self) -> None:
        """Process what is pending, then stop the OCR workers and background threads."""
        try:
            if self.pending() or self._jobs:
                self.flush()
        finally:
            self._stop.set()
            if self._ticker is not None:
                self._ticker.join(timeout=5)
                self._ticker = None
            if self._worker is not None:
                self._worker.shutdown(wait=True)
                self._worker = None
            self.ocr.close()

    def __enter__(self) -> "ScreenshotIngestor":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def results_changes(results: Sequence[AddResult]) -> list[MemoryChange]:
    return [c for r in results for c in r.changes]

