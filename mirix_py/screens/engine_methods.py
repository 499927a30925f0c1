"""Screenshot methods of `Mirix`, kept out of engine.py: `add_screenshot`, `ingest_screenshots`,
`configure_screenshots`, and `EngineScreenshotHost`, the engine side of the screenshot pipeline
(`mirix_py.ingest.host.ScreenshotHost`: log inputs, process a batch, data dir, limits).

The engine creates its `ScreenshotIngestor` on first use (so Pillow and Tesseract, the
`screenshots` extra, are only needed by those who ingest screenshots) and closes it with the
engine. Nothing here imports Pillow at import time. The ingest package never sees the engine:
it talks to the host.
"""

from __future__ import annotations

import logging
import threading
import uuid
from datetime import datetime, timedelta, tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Protocol, Sequence

from mirix_py.agents.user_locks import engine_call
from mirix_py.errors import InvalidInput
from mirix_py.ingest.env import screenshot_config_from_env, screenshots_module
from mirix_py.ingest.host import Mode
from mirix_py.boundary.inputs import check_user, parse_when
from mirix_py.boundary.timezones import user_zone
from mirix_py.records import AddResult, InputKind, InputRecord, InputStatus, Memory, MemoryType, Mode as EngineMode
from mirix_py.screens.activity import FrameGroup, ScreenFrame, build_groups, group_frames
from mirix_py.settings import Settings
from mirix_py.store.inputs import ClaimKeeper

if TYPE_CHECKING:
    from mirix_py.agents.batch_runner import BatchRunner
    from mirix_py.agents.user_locks import UserLocks
    from mirix_py.store.inputs import InputLog, LoggedSource, SourceClaim
    from mirix_py.store.memories import MemoryStore
    from mirix_py.ingest.frames import ImageSource
    from mirix_py.ingest.screenshots import (
        IngestReport, ProcessedFrame, ScreenshotConfig, ScreenshotIngestor, ScreenshotResult,
    )

__all__ = ["SCREENSHOT_METHODS", "EngineFileClaims", "EngineScreenshotHost", "ScreenshotsMixin"]

# public methods AsyncMirix wraps as coroutines
SCREENSHOT_METHODS = ("add_screenshot", "ingest_screenshots", "configure_screenshots", "screenshot_thumbnail",
                      "screen_activity")

SCREEN_PAGE = 500  # screenshot inputs read per page while groups are gathered
SCREEN_MAX_FRAMES = 20_000  # at most this many frames read for one call (narrow it with since/until)

_LOCK = threading.Lock()

log = logging.getLogger("mirix_py.screenshots")

ProcessBatch = Callable[..., AddResult]  # (records, images=...): `BatchRunner.process`


class ScreenshotEngine(Protocol):
    """The parts of an engine its screenshot host uses (`Mirix` has them)."""

    @property
    def inputs(self) -> InputLog: ...
    @property
    def worker_id(self) -> str: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def runner(self) -> BatchRunner: ...
    @property
    def mode(self) -> EngineMode: ...
    @property
    def supports_vision(self) -> bool: ...
    def _queue_again(self, records: Sequence[InputRecord]) -> bool: ...


class EngineFileClaims:
    """`FileClaims` of one run over a user's files, in the input log (`InputLog.claim_source`), under a
    claimer id of the run's own (its engine's worker id and a suffix: two runs of one engine skip each
    other's files too), renewed every third of the lease while held (`ClaimKeeper`)."""

    def __init__(self, inputs: InputLog, user_id: str, worker_id: str) -> None:
        self.inputs, self.user_id = inputs, user_id
        self.claimer = f"{worker_id}:{uuid.uuid4().hex[:8]}"
        self.keeper = ClaimKeeper(inputs, [], self.claimer, renew=inputs.renew_source_claims)

    def take(self, name: str, captured_at: datetime) -> SourceClaim:
        claim = self.inputs.claim_source(InputKind.screenshot, self.user_id, name, captured_at, self.claimer)
        if claim.taken:
            self.keeper.hold([claim.id])
        return claim

    def release(self, claim_ids: Sequence[str]) -> None:
        """Best effort: a database that fails here lets the claims lapse after their lease (renewed no more)."""
        self.keeper.forget(claim_ids)
        try:
            self.inputs.release_source_claims(list(claim_ids), self.claimer)
        except Exception as exc:
            log.warning("could not give back the claims on %d file(s) (%s); they lapse after their lease",
                        len(claim_ids), type(exc).__name__)

    def close(self) -> None:
        self.keeper.stop()
        self.release(self.keeper.input_ids)


class EngineScreenshotHost:
    """`ScreenshotHost` over an engine's parts: frames are logged claimed by the engine's worker (no
    other worker takes them while their batch waits) and processed by its batch runner
    (`agents.batch_runner`), with their downscaled images when the model takes them."""

    def __init__(self, engine: ScreenshotEngine) -> None:
        self.inputs, self.worker_id, self.settings = engine.inputs, engine.worker_id, engine.settings
        self.process: ProcessBatch = engine.runner.process
        self.mode: Mode = "llm" if engine.mode == "llm" else "offline"
        self.supports_vision = engine.supports_vision
        self._queue_again: Callable[[Sequence[InputRecord]], bool] = engine._queue_again

    @property
    def data_dir(self) -> Path | None:
        return Path(self.settings.data_dir)

    @property
    def max_input_chars(self) -> int:
        return self.settings.max_input_chars

    def log_inputs(self, records: Sequence[InputRecord]) -> None:
        self.inputs.append(list(records), claimed_by=self.worker_id)

    def log_new_inputs(self, records: Sequence[InputRecord]) -> dict[str, LoggedSource]:
        return self.inputs.append_new(list(records), claimed_by=self.worker_id)

    def process_batch(self, records: Sequence[InputRecord], frames: Sequence[ProcessedFrame]) -> AddResult:
        """One screenshot batch through the managers. With a vision model, each frame's downscaled
        image (held in memory for this batch only, the lines of its secrets already painted out by
        the ingestor: `secrets.masking`, `ingest.masking`) goes with its OCR text; otherwise the OCR text alone."""
        images: dict[str, Any] = {}
        if self.supports_vision:
            for frame in frames:
                if frame.record is not None and frame.vision_image is not None:
                    images[frame.record.id] = frame.vision_image
        return self.process(list(records), images=images or None)

    def mark_failed(self, input_ids: Sequence[str], error: str) -> None:
        self.inputs.mark(list(input_ids), InputStatus.failed, error)

    def compact_inputs(self, input_ids: Sequence[str]) -> None:
        self.inputs.compact(list(input_ids))

    def logged_frames(self, user_id: str, names: Sequence[str]) -> Sequence[LoggedSource]:
        return self.inputs.by_source(InputKind.screenshot, user_id=user_id, source_ids=names)

    def claim_files(self, user_id: str) -> EngineFileClaims:
        return EngineFileClaims(self.inputs, user_id, self.worker_id)

    def take_up(self, input_ids: Sequence[str]) -> AddResult | None:
        """Claimed as `resume` claims (pending, or held by a worker that died), and failed ones too, then
        run as one batch; one that raises (the database failing, the engine closing) goes back to the
        background worker, or to the log as pending, and is reported pending."""
        claimed = self.inputs.claim(self.worker_id, input_ids=list(input_ids), limit=max(len(input_ids), 1),
                                    statuses=(InputStatus.pending, InputStatus.failed))
        if not claimed:
            return None
        try:
            return self.process(claimed, images=None)
        except Exception as exc:
            self.queue_again(claimed)
            return AddResult(input_ids=[r.id for r in claimed], status=InputStatus.pending, mode=self.mode,
                             error=f"{type(exc).__name__}: {exc}")

    def queue_again(self, records: Sequence[InputRecord]) -> bool:
        """To the engine's background worker, to be tried again; while the engine closes, given back
        to the log as pending, for the next start to take up (not marked failed: nothing failed)."""
        if not self._queue_again(records):
            self._give_back(records)
        return True

    def _give_back(self, records: Sequence[InputRecord]) -> None:
        """Best effort: a database that fails here lets the claims lapse after their lease."""
        try:
            self.inputs.release([r.id for r in records], self.worker_id)
        except Exception:
            log.warning("could not give back %d screenshot input(s) to the log; their claim lapses after its lease",
                        len(records))


class ScreenshotsMixin:
    """Mixed into `Mirix` (its public screenshot methods). Expects `settings`, `inputs`, `runner`,
    `worker_id`, `mode`, `model_client` and `user_locks`."""

    settings: Settings
    model_client: Any
    inputs: InputLog
    store: MemoryStore
    user_locks: UserLocks

    _screenshot_config: ScreenshotConfig | None = None

    # ------------------------------------------------------------ ingestor

    @property
    def screenshots(self) -> ScreenshotIngestor:
        """The engine's screenshot pipeline (created on first use)."""
        ingestor = self.__dict__.get("_screenshot_ingestor")
        if ingestor is None:
            with _LOCK:
                ingestor = self.__dict__.get("_screenshot_ingestor")
                if ingestor is None:
                    config = self._screenshot_config or screenshot_config_from_env()
                    ingestor = screenshots_module().ScreenshotIngestor(self._screenshot_host(), config)
                    self.__dict__["_screenshot_ingestor"] = ingestor
        return ingestor

    def configure_screenshots(self, config: ScreenshotConfig | None = None, **changes: Any) -> ScreenshotConfig:
        """Set how screenshots are read (OCR language, workers, dedup threshold, batches,
        thumbnails). Pending frames are processed first."""
        from dataclasses import replace

        base = config or self._screenshot_config or screenshot_config_from_env()
        try:
            new = replace(base, **changes) if changes else base
        except TypeError as exc:
            raise InvalidInput(f"unknown screenshot setting: {exc}") from exc
        with _LOCK:
            old = self.__dict__.pop("_screenshot_ingestor", None)
            self._screenshot_config = new
        if old is not None:
            old.close()
        return new

    @engine_call  # close waits for it; a closed engine starts no screenshot pipeline again
    def add_screenshot(self, image: ImageSource, *, user_id: str, captured_at: datetime | str | None,
                       app: str | None = None, window_title: str | None = None, wait: bool = True,
                       source_id: str | None = None) -> ScreenshotResult:
        """Remember what is on a screenshot (a PIL image, a path, or PNG/JPEG/WebP bytes).

        The frame is validated, skipped when it nearly repeats the last kept frame of its window,
        read with Tesseract, and its text logged with `captured_at` (None: now), `app` and
        `window_title`. wait=True processes it as a batch of its own (searchable on return);
        wait=False queues it into per-app batches of N frames / T seconds, and `flush()` processes
        what is pending. The image itself is never stored. Bad images raise InvalidInput; a closed
        engine raises EngineClosed, reading and logging nothing.
        """
        return self.screenshots.add(image, user_id=user_id, captured_at=captured_at, app=app,
                                    window_title=window_title, wait=wait, source_id=source_id)

    @engine_call  # close waits for it; a closed engine reads no file and logs nothing
    def ingest_screenshots(self, source: str | Path | Iterable[str | Path], *, user_id: str,
                           recursive: bool = False, app: str | None = None, window_title: str | None = None,
                           default_tz: tzinfo | None = None,
                           progress: Callable[[int], None] | None = None) -> IngestReport:
        """Ingest a directory (or a list) of screenshot files in capture order.

        Capture times come from PNG metadata, EXIF, the file name, or the file's mtime; a time written
        without a zone is read in `default_tz`, else `MIRIX_TIMEZONE`, else this machine's zone, with
        the offset in force on its date. A file the user's input log already holds (same file name and
        capture time) is not read again: `ingested` when its input was processed, taken up from its
        logged text when that was left pending or failed (`ingest.earlier`). Bad files are reported in
        the returned IngestReport and the rest are processed. A bad user id is the call's error,
        raised once before any file is read, not each file's; so is a closed engine's EngineClosed.
        """
        from mirix_py.ingest.frames import list_image_files

        check_user(user_id)
        if default_tz is None:
            default_tz = user_zone(self.settings.timezone)

        if isinstance(source, (str, Path)):
            path = Path(source)
            paths = list_image_files(path, recursive=recursive) if path.is_dir() else [path]
        else:
            paths = [Path(p) for p in source]
        return self.screenshots.ingest_paths(paths, user_id=user_id, app=app, window_title=window_title,
                                             default_tz=default_tz, progress=progress)

    def screenshot_thumbnail(self, input_id: str, *, user_id: str) -> Path | None:
        """The WebP kept for one of the user's screenshot inputs (`keep_thumbnails`); None when none
        was kept, it has expired, or the input is not this user's."""
        record = self.inputs.get(input_id, user_id=user_id)
        if record is None:
            return None
        return screenshots_module().kept_thumbnail(Path(self.settings.data_dir) / "thumbnails", user_id,
                                                   record.metadata.get("thumbnail"), self._thumbnail_retention())

    def _thumbnail_retention(self) -> timedelta | None:
        return (self._screenshot_config or screenshot_config_from_env()).thumbnail_retention

    def purge_thumbnails(self) -> int:
        """Delete the thumbnails past their retention (the idle sweep does it too); returns how many."""
        root = Path(self.settings.data_dir) / "thumbnails"
        if not root.exists():  # none was ever kept (nor need the screenshot packages be installed)
            return 0
        retention = self._thumbnail_retention()
        if retention is None:
            return 0
        module = screenshots_module()
        thumbnails = module.Thumbnails(root, retention, module.IngestReport(), threading.RLock())
        return int(thumbnails.purge())

    def screen_activity(self, *, user_id: str, since: datetime | str | None = None,
                        until: datetime | str | None = None, limit: int = 50) -> list[FrameGroup]:
        """What was on the user's screen, newest first: screenshot inputs grouped by app and window
        (`mirix_py.screens.activity`: a new group on a change of window or after `SCREEN_GAP`), each
        with its times, frame count, input ids, kept thumbnails, the memories made from it and the
        text read (the input log's while kept, else those memories'). `since`/`until` bound the
        capture time ([since, until)); `limit` groups at most (1-500)."""
        check_user(user_id)
        if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 500:
            raise InvalidInput(f"limit must be an integer from 1 to 500, not {limit!r}")
        start, end = parse_when(since, "since"), parse_when(until, "until")
        if start is not None and end is not None and start >= end:
            raise InvalidInput("since must be before until")
        records = self._newest_screenshots(user_id, start, end, limit)
        frames = [self._screen_frame(r) for r in records]
        made_from = self.store.made_from(user_id, [f.input_id for f in frames],
                                         [MemoryType.episodic, MemoryType.resource])
        memories = self.store.get_many(sorted({m for ids in made_from.values() for m in ids}), user_id=user_id)
        linked: dict[str, list[Memory]] = {
            input_id: [memories[m] for m in ids if m in memories] for input_id, ids in made_from.items()}
        return list(reversed(build_groups(frames, linked)))[:limit]

    def _newest_screenshots(self, user_id: str, start: datetime | None, end: datetime | None,
                            limit: int) -> list[InputRecord]:
        """The newest screenshot inputs that make up the newest `limit` whole groups: pages are read
        until a group older than those has started (or the log, or SCREEN_MAX_FRAMES, runs out)."""
        records: list[InputRecord] = []
        while len(records) < SCREEN_MAX_FRAMES:
            page = self.inputs.by_kind(InputKind.screenshot, user_id=user_id, start=start, end=end,
                                       limit=SCREEN_PAGE, offset=len(records))
            records += page
            if len(page) < SCREEN_PAGE or len(group_frames(map(self._bare_frame, records))) > limit:
                break
        return records

    @staticmethod
    def _bare_frame(record: InputRecord) -> ScreenFrame:
        """An input as a frame to group: id, capture time, app and window (a secret in a title, a
        settings page's, replaced by its placeholder as in the memories)."""
        from mirix_py.secrets.redaction import scrub

        app, title = record.metadata.get("app"), record.metadata.get("window_title")
        return ScreenFrame(input_id=record.id, at=record.occurred_at, app=scrub(app) if app else app,
                           window_title=scrub(title) if title else title)

    def _screen_frame(self, record: InputRecord) -> ScreenFrame:
        """An input as a frame to show: with its OCR text, secrets replaced by placeholders (the log
        keeps the raw text encrypted; what leaves goes through the vault rules, as memories do),
        and whether its thumbnail is still kept."""
        from mirix_py.secrets.redaction import scrub

        raw = "\n".join(m.content for m in record.messages)
        thumbnail = record.metadata.get("thumbnail")
        kept = bool(thumbnail) and screenshots_module().kept_thumbnail(
            Path(self.settings.data_dir) / "thumbnails", record.user_id, thumbnail,
            self._thumbnail_retention()) is not None
        return self._bare_frame(record).model_copy(update={"text": scrub(raw) if raw else None, "thumbnail": kept})

    def _screenshot_host(self) -> EngineScreenshotHost:
        return EngineScreenshotHost(self)  # type: ignore[arg-type]  # mixed into Mirix only

    # ------------------------------------------------------------ the LLM path

    @property
    def supports_vision(self) -> bool:
        """True when the engine's model takes images (`model_info["vision"]`): screenshot batches
        then carry their downscaled frames along with the OCR text."""
        if self.model_client is None:
            return False
        from mirix_py.ingest.multimodal import model_supports_vision

        return model_supports_vision(self.model_client)

    def _flush_screenshots(self) -> None:
        ingestor = self.__dict__.get("_screenshot_ingestor")
        if ingestor is not None:
            ingestor.flush()

    def _stop_screenshots(self, timeout: float | None) -> None:
        """Closing: process the queued frames, starting batches for `timeout` seconds at most (None:
        all); those left are logged and handed back (`QueuedBatches.stop`) when `_close_screenshots` runs."""
        with _LOCK:
            ingestor = self.__dict__.pop("_screenshot_ingestor", None)
            if ingestor is not None:
                self.__dict__["_screenshots_closing"] = ingestor
        if ingestor is not None:
            ingestor.stop(timeout)

    def _close_screenshots(self, timeout: float | None = None) -> tuple[list[str], list[str], list[str]]:
        """After `_stop_screenshots`, once model calls are cut: wait (up to `timeout` seconds; None: for
        good) for the batch running, log and hand back those left. Returns the input ids left pending,
        those of the batch that was running, and what still runs when `timeout` passed (in words: the
        ingestor is then kept for the next `close` to wait for)."""
        with _LOCK:
            ingestor = self.__dict__.pop("_screenshots_closing", None) or self.__dict__.pop("_screenshot_ingestor", None)
        if ingestor is None:
            return [], [], []
        if not ingestor.queued.wait(timeout):
            with _LOCK:
                self.__dict__["_screenshots_closing"] = ingestor
            return [], [], ["a screenshot batch (its rules and writes, or the reading of the frames left)"]
        left, waited = ingestor.close()
        return left, waited, []

    def _delete_user_screenshots(self, user_id: str) -> int:
        ingestor = self.__dict__.get("_screenshot_ingestor")
        if ingestor is None:
            root = Path(self.settings.data_dir) / "thumbnails"
            if not root.exists():
                return 0
            module = screenshots_module()
            ingestor = module.ScreenshotIngestor(self._screenshot_host(),
                                                 self._screenshot_config or module.ScreenshotConfig())
            try:
                return int(ingestor.delete_user(user_id))
            finally:
                ingestor.ocr.close()
        return int(ingestor.delete_user(user_id))
