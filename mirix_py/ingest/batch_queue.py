"""Frames queued into batches in the background (`add(wait=False)` and the capture loop).

Frames wait in per-user, per-app groups (`ingest.batching`) that close after `max_frames` frames or
`max_seconds`; a closed batch runs on one worker thread, in the order batches closed, and a ticker
thread closes groups that waited long enough. A frame's text is logged as soon as its OCR is done,
before its batch runs, so nothing acknowledged is lost. `flush()` runs whatever is pending.
`stop(timeout)` starts batches for that long at most; the frames of those it leaves are read and
logged, not processed, and handed back to the host (pending in the log, for the next start).
"""

from __future__ import annotations

import functools
import logging
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Callable

from mirix_py.ingest.batch import BatchWriter, outcome_after
from mirix_py.ingest.batching import BatchPolicy, FrameBatcher
from mirix_py.ingest.outcomes import IngestReport
from mirix_py.ingest.processed import ProcessedFrame
from mirix_py.records import AddResult, InputStatus

log = logging.getLogger("mirix_py.screenshots")


class QueuedBatches:
    """Queued frames of one ingestor; their outcomes settle in `totals` as their batches run."""

    def __init__(self, policy: BatchPolicy, writer: BatchWriter, *, totals: IngestReport,
                 lock: threading.RLock) -> None:
        self.policy = policy
        self.writer = writer
        self.totals = totals
        self._lock = lock
        self._batcher: FrameBatcher[ProcessedFrame] = FrameBatcher(
            policy, key=lambda f: f.app, owner=lambda f: f.user_id, when=lambda f: f.captured_at)
        self._worker: ThreadPoolExecutor | None = None
        self._jobs: list[Future] = []
        self._ticker: threading.Thread | None = None
        self._stop = threading.Event()
        self._unflushed: list[AddResult] = []
        self._stopped = False
        self._leaving = False  # past `stop`'s timeout: batches are logged and handed back, not processed
        self._current: list[ProcessedFrame] | None = None  # the batch running
        self._running_at_stop: list[ProcessedFrame] | None = None
        self.left: list[str] = []  # input ids left pending (`stop`)
        self.waited: list[str] = []  # input ids of the batch running when `stop`'s timeout passed

    def enqueue(self, frame: ProcessedFrame) -> None:
        with self._lock:
            closed = self._batcher.add(frame, now=time.monotonic())
            self._ensure_ticker()
        future = frame.future
        if future is not None:  # log the text as soon as OCR is done: nothing acknowledged is lost
            future.add_done_callback(functools.partial(self._log_when_done, frame))
        for batch in closed:
            self._submit_job(self._run_batch, batch)

    def _log_when_done(self, frame: ProcessedFrame, _future: Future[Any]) -> None:
        if self._stopped:  # every batch is submitted: the frame's own logs it
            return
        self._submit_job(self._log_when_read, frame)

    def _log_when_read(self, frame: ProcessedFrame) -> None:
        if self.writer.finish(frame):
            self.writer.log([frame])

    def _run_batch(self, batch: list[ProcessedFrame]) -> None:
        with self._lock:
            leaving, self._current = self._leaving, batch
        try:
            result = self._left_pending(batch) if leaving else self.writer.run(batch)
        except Exception as exc:  # e.g. the database went away: the frames fail, the loop goes on
            log.exception("screenshot batch failed")
            for frame in batch:
                frame.error = frame.error or f"{type(exc).__name__}: {exc}"
            result = None
        with self._lock:
            for frame in batch:
                if frame.outcome is not None and frame.outcome.status == "pending":
                    outcome_after(frame, frame.outcome, result)
                    self.totals.settle(frame.outcome, "pending")
            if result is not None:
                self.totals.add_result(result)
                self._unflushed.append(result)
                if self._leaving and result.status is InputStatus.pending:  # left, or cut short by the closing
                    self.left += result.input_ids
                if batch is self._running_at_stop:
                    self.waited = list(result.input_ids)
            self._current = None

    def _left_pending(self, batch: list[ProcessedFrame]) -> AddResult | None:
        """A batch `stop` left: its frames read and logged (as they are before any batch runs), not
        processed; the host takes their inputs back (pending in the log, for the next start)."""
        for frame in batch:
            self.writer.finish(frame)
        records = [f.record for f in self.writer.log(batch) if f.record is not None]
        for frame in batch:
            frame.vision_image = None  # images do not outlive their batch
        if not records:
            return None
        self.writer.host.queue_again(records)
        return AddResult(input_ids=[r.id for r in records], status=InputStatus.pending,
                         error="left pending by close(timeout): the next start processes it")

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
        period = min(1.0, self.policy.max_seconds / 4)
        while not self._stop.wait(period):
            self.tick()

    def tick(self, now: float | None = None) -> int:
        """Send batches that have waited max_seconds to the managers; returns how many were sent."""
        with self._lock:
            due = self._batcher.due(time.monotonic() if now is None else now)
        for batch in due:
            self._submit_job(self._run_batch, batch)
        return len(due)

    def pending(self) -> int:
        with self._lock:
            return len(self._batcher)

    @property
    def busy(self) -> bool:
        """Frames wait, or jobs were submitted (done or not) since the last flush."""
        return bool(self.pending() or self._jobs)

    def flush(self) -> list[AddResult]:
        """Process every queued frame now and wait; returns the results since the last flush."""
        with self._lock:
            batches = self._batcher.drain()
        for batch in batches:
            self._submit_job(self._run_batch, batch)
        self._wait_jobs()
        with self._lock:
            out, self._unflushed = self._unflushed, []
        return out

    def _wait_jobs(self, deadline: float | None = None) -> bool:
        """Wait for the jobs submitted (until `deadline`, a `time.monotonic()`); whether all ended."""
        while True:
            with self._lock:
                jobs = [j for j in self._jobs if not j.done()]
            if not jobs:
                return True
            for job in jobs:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    return False
                try:
                    job.result(timeout=remaining)
                except FutureTimeout:
                    return False
                except Exception:  # logged where it happened; keep draining
                    log.exception("screenshot job failed")

    def wait(self, timeout: float | None = None) -> bool:
        """Wait up to `timeout` seconds (None: for good) for the batches submitted, the one running
        included; whether all have ended (the engine's `close` is bounded so)."""
        return self._wait_jobs(None if timeout is None else time.monotonic() + max(0.0, timeout))

    def stop(self, timeout: float | None = None) -> None:
        """Stop the ticker and run every queued batch, starting them for `timeout` seconds at most
        (None: all, as `flush`); from then on a batch is logged and handed back, not processed
        (`_left_pending`). The batch running then is not waited for here: `close` does."""
        if self._stopped:
            return
        self._stopped = True
        self._stop.set()
        if self._ticker is not None:
            self._ticker.join(timeout=5)
            self._ticker = None
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        with self._lock:
            batches = self._batcher.drain()
        for batch in batches:
            self._submit_job(self._run_batch, batch)
        if not self._wait_jobs(deadline):
            with self._lock:
                self._leaving = True
                self._running_at_stop = self._current
                if self._current is not None:  # it may end before `close` looks
                    self.waited = [f.input_id for f in self._current if f.input_id]

    def close(self, timeout: float | None = None) -> tuple[list[str], list[str]]:
        """`stop(timeout)` (unless called), then stop the worker once the batch it runs and those left
        are done. Returns the input ids left pending, and those of the batch running at the timeout."""
        self.stop(timeout)
        if self._worker is not None:
            self._worker.shutdown(wait=True)
            self._worker = None
        with self._lock:
            return list(dict.fromkeys(self.left)), list(self.waited)
