"""Image files ingested in capture order (`ScreenshotIngestor.ingest_paths`, `mirix ingest-screenshots`).

Headers are read first, without pixels, for the capture times (PNG metadata, EXIF, the file name,
or the mtime); then the frames are decoded, deduplicated and read in that order with a few in
flight, and each batch goes to the memory managers on a thread of its own as it closes, so reading
never waits for them. A file with the same pixels as the previous one of its window is a duplicate
without being decoded. A bad file is reported (status "invalid" with the reason) and the rest goes on.
"""

from __future__ import annotations

import logging
import time
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timezone, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, ContextManager, Iterable, Protocol

from mirix_py.errors import InvalidInput
from mirix_py.ingest.batch import outcome_after
from mirix_py.ingest.batching import FrameBatcher
from mirix_py.ingest.frames import frame_info_from_file, load_frame, pixel_digest, probe_frame
from mirix_py.ingest.outcomes import FrameOutcome, IngestReport
from mirix_py.ingest.processed import ProcessedFrame

if TYPE_CHECKING:
    from mirix_py.ingest.batch import BatchWriter
    from mirix_py.ingest.config import ScreenshotConfig
    from mirix_py.ingest.frames import LoadedFrame
    from mirix_py.ingest.read import FrameReader

log = logging.getLogger("mirix_py.screenshots")


class FileIngestor(Protocol):
    """What a run over files uses of the ingestor (`ScreenshotIngestor` has it)."""

    @property
    def config(self) -> ScreenshotConfig: ...
    @property
    def lock(self) -> ContextManager[Any]: ...
    @property
    def totals(self) -> IngestReport: ...
    @property
    def reader(self) -> FrameReader: ...
    @property
    def writer(self) -> BatchWriter: ...

    def check(self) -> None: ...

    def admit(self, loaded: LoadedFrame, *, user_id: str, captured_at: datetime | str | None, app: str | None,
              window_title: str | None, source_id: str | None) -> tuple[ProcessedFrame | None, FrameOutcome]: ...


def ingest_files(ingestor: FileIngestor, paths: Iterable[str | Path], *, user_id: str, app: str | None = None,
                 window_title: str | None = None, default_tz: tzinfo | None = None,
                 progress: Callable[[int], None] | None = None) -> IngestReport:
    """A report of this run (also counted in `ingestor.totals`); all its batches are processed when it returns."""
    ingestor.check()
    if not isinstance(user_id, str) or not user_id.strip():
        raise InvalidInput("user_id is required")
    started = time.perf_counter()
    report = IngestReport()
    ocr_before, text_before, thumbs_before = ingestor.totals.ocr_seconds, ingestor.totals.text_bytes, ingestor.totals.thumbnail_bytes

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
    batcher: FrameBatcher[ProcessedFrame] = FrameBatcher(ingestor.config.batch, key=lambda f: f.app,
                                                         owner=lambda f: f.user_id, when=lambda f: f.captured_at)
    managers = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mirix-screenshot-batches")
    submitted: list[tuple[Future, list[ProcessedFrame]]] = []

    def run(batch: list[ProcessedFrame]) -> None:
        submitted.append((managers.submit(ingestor.writer.run, batch), batch))

    # a file with the same pixels as the previous one of its window is a duplicate: no decoding
    last_digest: dict[tuple, tuple[bytes, ProcessedFrame | None]] = {}

    def complete(frame: ProcessedFrame) -> None:
        ingestor.reader.finish(frame)
        key = (frame.app, frame.window_title)
        if frame.error is not None and last_digest.get(key, (b"", None))[1] is frame:
            del last_digest[key]  # its OCR failed: an identical file gets another chance
        tick()
        for batch in batcher.add(frame):
            run(batch)

    in_flight: deque[ProcessedFrame] = deque()
    limit = 3 * max(ingestor.reader.workers, 1)
    for when, path, info in entries:
        frame_app, frame_window = app or info.app, window_title or info.window_title
        key = ((frame_app or "").strip() or None, (frame_window or "").strip() or None)
        try:
            data = path.read_bytes()
            digest = pixel_digest(data)
            if ingestor.config.dedup and key in last_digest and last_digest[key][0] == digest:
                report.count(FrameOutcome(name=path.name, status="duplicate", captured_at=when, app=key[0],
                                          window_title=key[1], similarity=1.0, png_bytes=len(data)))
                tick()
                continue
            loaded = load_frame(data, name=path.name)
            if loaded.format == "PNG":
                loaded.png_bytes = len(data)
            frame, outcome = ingestor.admit(loaded, user_id=user_id, captured_at=when, app=frame_app,
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
            assert frame.outcome is not None  # set on admission for every frame that reaches a batch
            report.count(outcome_after(frame, frame.outcome, result))

    report.ocr_seconds = ingestor.totals.ocr_seconds - ocr_before
    report.text_bytes = ingestor.totals.text_bytes - text_before
    report.thumbnail_bytes = ingestor.totals.thumbnail_bytes - thumbs_before
    report.wall_seconds = time.perf_counter() - started
    report.outcomes.sort(key=lambda o: (o.captured_at or datetime.min.replace(tzinfo=timezone.utc), o.name))
    with ingestor.lock:
        for outcome in report.outcomes:
            ingestor.totals.count(outcome)
        for result in report.results:
            ingestor.totals.add_result(result)
    return report
