"""Image files ingested in capture order (`ScreenshotIngestor.ingest_paths`, `mirix ingest-screenshots`).

Headers are read first, without pixels, for the capture times (PNG metadata, EXIF, the file name,
or the mtime); then the frames are decoded, deduplicated and read in that order with a few in
flight, and each batch goes to the memory managers on a thread of its own as it closes, so reading
never waits for them. A file with the same pixels as the previous one of its window is a duplicate
without being decoded. A file the user's input log already holds from an earlier run is not read
again (`ingest.earlier`): `ingested`, or taken up from its logged text when that was never finished;
one another run logs meanwhile is not logged again (`BatchWriter.log(once=True)`). A file is claimed
before it is decoded and read (`FileClaims`), so one another run over the folder at once has claimed
(or logged) is skipped rather than read by both: `ingested` with the input the log holds for it when this
run ends, `claimed` when it holds none (the other run still at it, or it died: the next run reads the file).
A file listed twice (the same path, or a symlink or copy of the same name and capture time: one file to the
log) is read once; the later listings are reported after the first (`_repeated`).
A bad file is reported (status "invalid" with the reason) and the rest goes on.
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
from mirix_py.ingest.earlier import EarlierFrames, Frame, sort_out
from mirix_py.ingest.frames import frame_info_from_file, load_frame, pixel_digest, probe_frame
from mirix_py.ingest.outcomes import FrameOutcome, FrameStatus, IngestReport
from mirix_py.ingest.processed import ProcessedFrame

if TYPE_CHECKING:
    from mirix_py.ingest.batch import BatchWriter
    from mirix_py.ingest.config import ScreenshotConfig
    from mirix_py.ingest.frames import FrameInfo, LoadedFrame
    from mirix_py.ingest.host import FileClaims, ScreenshotHost
    from mirix_py.ingest.read import FrameReader
    from mirix_py.records import AddResult
    from mirix_py.store.inputs import SourceClaim

log = logging.getLogger("mirix_py.screenshots")


class FileIngestor(Protocol):
    """What a run over files uses of the ingestor (`ScreenshotIngestor` has it)."""

    @property
    def config(self) -> ScreenshotConfig: ...
    @property
    def host(self) -> ScreenshotHost: ...
    @property
    def lock(self) -> ContextManager[Any]: ...
    @property
    def totals(self) -> IngestReport: ...
    @property
    def reader(self) -> FrameReader: ...
    @property
    def writer(self) -> BatchWriter: ...

    def check(self) -> None: ...

    def remember(self, loaded: LoadedFrame, *, user_id: str, app: str | None, window_title: str | None) -> None: ...

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
    # one file to the log (its name and capture time) is read once, however many times it is listed
    firsts: set[tuple[str, datetime]] = set()
    repeats: list[Frame] = []
    listed, entries = entries, []
    for when, path, info in listed:
        if (path.name, when) in firsts:
            repeats.append(_frame(path, info, app, window_title))
        else:
            firsts.add((path.name, when))
            entries.append((when, path, info))

    # files an earlier run logged are not read again: skipped, or taken up from the log below
    earlier = sort_out(ingestor.host, user_id, [_frame(path, info, app, window_title) for _, path, info in entries])
    for outcome in earlier.skipped():
        report.count(outcome)
        tick()
    known = earlier.paths

    # files are claimed before their OCR: another run over the folder at once skips those this one reads
    # (`FileClaims`), and those it claimed first are reported at the end (`_claimed_elsewhere`)
    claims = ingestor.host.claim_files(user_id)
    elsewhere: list[tuple[Frame, SourceClaim]] = []
    unreadable: dict[tuple[str, datetime], FrameOutcome] = {}  # files found invalid when read: no capture time
    try:
        # 2. decode, dedup and OCR in time order with a few frames in flight; each batch goes to the
        #    memory managers as it closes, on a thread of its own, so reading frames never waits for them
        batcher: FrameBatcher[ProcessedFrame] = FrameBatcher(ingestor.config.batch, key=lambda f: f.app,
                                                             owner=lambda f: f.user_id, when=lambda f: f.captured_at)
        managers = ThreadPoolExecutor(max_workers=1, thread_name_prefix="mirix-screenshot-batches")
        submitted: list[tuple[Future, list[ProcessedFrame]]] = []

        def write(batch: list[ProcessedFrame]) -> AddResult | None:
            try:  # once: a file another run over the folder logged while this one read it is not logged again
                return ingestor.writer.run(batch, once=True)
            finally:  # logged (which ended their claims) or nothing to log: other runs need not skip them now
                claims.release([frame.claim_id for frame in batch if frame.claim_id])

        def run(batch: list[ProcessedFrame]) -> None:
            submitted.append((managers.submit(write, batch), batch))

        # first on the managers' thread: what an earlier run left unfinished is older than the new frames
        taking_up = managers.submit(ingestor.host.take_up, earlier.to_take_up) if earlier.unfinished else None

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
        # per window, the last file an earlier run kept, until a new frame of it comes: that frame is
        # compared with it, as it would have been in one run (`seed`)
        kept_before: dict[tuple, Path] = {}
        for when, path, info in entries:
            frame_app, frame_window = app or info.app, window_title or info.window_title
            key = ((frame_app or "").strip() or None, (frame_window or "").strip() or None)
            if path in known:
                kept_before[key] = path
                continue
            if key in kept_before:
                seeded = seed(ingestor, kept_before.pop(key), user_id=user_id, app=key[0], window_title=key[1])
                if seeded is not None:
                    last_digest[key] = (seeded, None)
            claim: SourceClaim | None = None
            try:
                data = path.read_bytes()
                digest = pixel_digest(data)
                if ingestor.config.dedup and key in last_digest and last_digest[key][0] == digest:
                    report.count(FrameOutcome(name=path.name, status="duplicate", captured_at=when, app=key[0],
                                              window_title=key[1], similarity=1.0, png_bytes=len(data)))
                    tick()
                    continue
                claim = _claim(claims, path.name, when)
                if claim is not None and not claim.taken:  # another run logged it or reads it: it is not read here
                    elsewhere.append((_frame(path, info, app, window_title), claim))
                    kept_before[key] = path
                    tick()
                    continue
                loaded = load_frame(data, name=path.name)
                if loaded.format == "PNG":
                    loaded.png_bytes = len(data)
                frame, outcome = ingestor.admit(loaded, user_id=user_id, captured_at=when, app=frame_app,
                                                 window_title=frame_window, source_id=path.name)
            except (InvalidInput, OSError) as exc:  # OSError: an unreadable file
                if claim is not None:
                    claims.release([claim.id])
                error = str(exc) if isinstance(exc, InvalidInput) else f"{path.name}: {exc}"
                unreadable[(path.name, when)] = FrameOutcome(name=path.name, status="invalid", error=error)
                report.count(unreadable[(path.name, when)])
                tick()
                continue
            del loaded, data
            last_digest[key] = (digest, frame)
            if frame is None:
                if claim is not None:
                    claims.release([claim.id])
                report.count(outcome)
                tick()
                continue
            frame.claim_id = claim.id if claim is not None else None
            in_flight.append(frame)
            while len(in_flight) > limit:
                complete(in_flight.popleft())
        while in_flight:
            complete(in_flight.popleft())
        for batch in batcher.drain():
            run(batch)
        managers.shutdown(wait=True)
    finally:
        claims.close()
    if taking_up is not None:
        for outcome in _taken_up(ingestor.host, user_id, earlier, taking_up, report):
            report.count(outcome)
            tick()
    for outcome in _claimed_elsewhere(ingestor.host, user_id, elsewhere):
        report.count(outcome)
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
    for outcome in _repeated(repeats, report.outcomes, unreadable):
        report.count(outcome)
        tick()

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


def seed(ingestor: FileIngestor, path: Path, *, user_id: str, app: str | None,
         window_title: str | None) -> bytes | None:
    """A file an earlier run kept, made the last kept frame of its window (not read, not logged), so the
    next frame of the window is skipped when it repeats it. Returns its pixel digest; None when the
    file cannot be read now (the next frame is then read)."""
    try:
        data = path.read_bytes()
        if ingestor.config.dedup:
            ingestor.remember(load_frame(data, name=path.name), user_id=user_id, app=app, window_title=window_title)
        return pixel_digest(data)
    except (InvalidInput, OSError) as exc:
        log.debug("%s: not compared with (%s)", path.name, exc)
        return None


def _frame(path: Path, info: FrameInfo, app: str | None, window_title: str | None) -> Frame:
    """A file as the earlier runs would have logged it: the app and window given over the file's own."""
    def shown(given: str | None, found: str | None) -> str | None:
        return (given or found or "").strip() or None

    return Frame(path=path, captured_at=info.captured_at, app=shown(app, info.app),
                 window_title=shown(window_title, info.window_title))


def _claim(claims: FileClaims, name: str, captured_at: datetime) -> SourceClaim | None:
    """The run's claim on a file it is about to read; None when the claim could not be written (the database
    failing): the file is read unclaimed then, as before claims, and another run may read it too."""
    try:
        return claims.take(name, captured_at)
    except Exception as exc:
        log.warning("%s: read without a claim (%s); another run over the folder may read it too", name,
                    type(exc).__name__)
        return None


def _repeated(repeats: list[Frame], outcomes: list[FrameOutcome],
              unreadable: dict[tuple[str, datetime], FrameOutcome]) -> list[FrameOutcome]:
    """Outcomes of the later listings of files listed twice, not read again: `ingested` with the input of the
    first listing when it made one that was processed (or the log held), a `duplicate` of it when it gave
    nothing to log (no text, a repeat), else what the first was (pending, failed, invalid, claimed)."""
    firsts = {(o.name, o.captured_at): o for o in outcomes if o.captured_at is not None} | unreadable
    repeated = []
    for frame in repeats:
        first = firsts.get((frame.path.name, frame.captured_at))
        status: FrameStatus = "duplicate" if first is None else first.status
        if first is not None and first.status in ("processed", "ingested") and first.input_id is not None:
            status = "ingested"
        elif status in ("no_text", "duplicate"):
            status = "duplicate"
        repeated.append(FrameOutcome(name=frame.path.name, status=status, captured_at=frame.captured_at,
                                     app=frame.app, window_title=frame.window_title,
                                     input_id=None if first is None else first.input_id,
                                     error=None if first is None else first.error,
                                     similarity=1.0 if status == "duplicate" else None))
    return repeated


def _claimed_elsewhere(host: ScreenshotHost, user_id: str,
                       skipped: list[tuple[Frame, SourceClaim]]) -> list[FrameOutcome]:
    """Outcomes of the files another run had logged, or claimed to read, when this one came to them:
    `ingested`, with the input the log holds for the file once this run's batches are done (the other
    run's); `claimed`, without an input, when it holds none: that run is still at it, found nothing in the
    file to remember, or died before it logged it (the next run over the folder reads it then)."""
    if not skipped:
        return []
    try:
        now = host.logged_frames(user_id, [frame.path.name for frame, _ in skipped])
    except Exception:  # the database away: the inputs known when the files were skipped
        log.exception("reading which input the files other runs read are logged as failed")
        now = []
    logged = {(entry.source_id, entry.occurred_at): entry for entry in now}
    outcomes = []
    for frame, claim in skipped:
        entry = logged.get((frame.path.name, frame.captured_at)) or claim.logged
        outcomes.append(FrameOutcome(name=frame.path.name, status="claimed" if entry is None else "ingested",
                                     captured_at=frame.captured_at,
                                     app=frame.app, window_title=frame.window_title,
                                     input_id=entry.id if entry is not None else None))
    return outcomes


def _taken_up(host: ScreenshotHost, user_id: str, earlier: EarlierFrames, taking_up: Future,
              report: IngestReport) -> list[FrameOutcome]:
    """The outcomes of the files whose earlier inputs were taken up, as the log has them now."""
    try:
        result = taking_up.result()
    except Exception:  # the inputs stay in the log as they were: reported as they stand
        log.exception("taking up screenshot inputs left unfinished failed")
        result = None
    if result is not None:
        report.add_result(result)
    try:
        now = host.logged_frames(user_id, [frame.path.name for frame, _ in earlier.unfinished])
    except Exception:  # the database away: they stand as they did before the take-up, for all we know
        log.exception("reading where the taken-up screenshot inputs stand failed")
        now = []
    return earlier.taken_up(now)
