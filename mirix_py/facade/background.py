"""Background processing of inputs accepted with `wait=False`.

One worker thread takes queued inputs in per-user batches of up to `batch_size`, as soon as a user
has a full batch or the oldest input has waited `max_wait_s`; `flush()` processes everything now.
The input log already holds every queued input, so a crash loses nothing (the inputs stay pending).
A batch that raises (the database restarting, say) is tried again after 1, 2, 4, … times
`retry_base_s`, `retries` times; then it leaves the queue and its inputs wait in the log, where the
worker's `sweep`, called every `sweep_every_s` while it is idle, takes them up again. Inputs the
worker already held (a waited add, a screenshot batch) are first given back (`release`), since the
sweep takes pending inputs only; while that cannot be written either, the batch stays queued.
`close(timeout)` processes the queue for that long at most, then leaves the rest to the log; `join`
then waits for the batch that was running (the engine cuts its model calls first), bounded when asked,
and says what was left, what was waited for and what still runs.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import Counter, OrderedDict, deque
from typing import Callable, Sequence

from mirix_py.llm.loop import EngineClosed
from mirix_py.records import InputRecord

log = logging.getLogger("mirix_py.facade.background")

RELEASE_CHUNK = 500  # inputs given back in one statement when `close` leaves them


def take_batches(queue: "OrderedDict[str, list[tuple[float, InputRecord]]]", *, batch_size: int, max_wait_s: float,
                 now: float, force: bool) -> list[list[InputRecord]]:
    """Pure: remove and return the batches that are due (full, old enough, or forced). Each item is
    (when it was queued, the input)."""
    due: list[list[InputRecord]] = []
    for user_id in list(queue):
        items = queue[user_id]
        while items and (len(items) >= batch_size or force or now - items[0][0] >= max_wait_s):
            chunk, queue[user_id] = items[:batch_size], items[batch_size:]
            items = queue[user_id]
            due.append([record for _, record in chunk])
        if not items:
            del queue[user_id]
    return due


class BackgroundQueue:
    def __init__(self, process: Callable[[Sequence[InputRecord]], None], *, batch_size: int = 8,
                 max_wait_s: float = 2.0, retries: int = 6, retry_base_s: float = 1.0,
                 sweep: Callable[[], None] | None = None, sweep_every_s: float = 60.0,
                 release: Callable[[Sequence[InputRecord]], None] | None = None) -> None:
        self._process = process
        self._release = release
        self._batch_size = batch_size
        self._max_wait = max_wait_s
        self.retries, self.retry_base_s = retries, retry_base_s
        self._sweep, self.sweep_every_s = sweep, sweep_every_s
        self._queue: OrderedDict[str, list[tuple[float, InputRecord]]] = OrderedDict()
        self._tries: dict[str, int] = {}  # input id -> failed tries of the batches it was in
        self._later: list[tuple[float, list[InputRecord]]] = []  # (when to try again, a failed batch)
        self._cond = threading.Condition()
        self._busy = 0
        self._taken: Counter[str] = Counter()  # user id -> batches taken from the queue, not done yet
        self._backlog: deque[list[InputRecord]] = deque()  # batches taken, not started: `close` may leave them
        self._running: list[InputRecord] = []  # the batch being processed
        self._left: list[str] = []  # input ids `close` left pending: not started, or cut short by the closing
        self._waited: list[str] = []  # input ids of the batch running when `close` left the queue
        self._force = False
        self._closing = False
        self._thread: threading.Thread | None = None

    def submit(self, record: InputRecord) -> None:
        with self._cond:
            if self._closing:
                raise RuntimeError("the engine is closed")
            self._queue.setdefault(record.user_id, []).append((time.monotonic(), record))
            self._start()
            self._cond.notify_all()

    def start(self) -> None:
        """Start the worker before anything is queued, so that its sweep runs from now on."""
        with self._cond:
            if self._closing:
                raise RuntimeError("the engine is closed")
            self._start()

    def _start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._work, name="mirix-ingest", daemon=True)
            self._thread.start()

    def forget_user(self, user_id: str) -> int:
        """Drop the user's queued inputs and wait until no batch of theirs is running (the user is
        being deleted: nothing of theirs may be written after). Returns how many were dropped."""
        with self._cond:
            gone = [record for _, record in self._queue.pop(user_id, [])]
            gone += [record for _, batch in self._later if batch[0].user_id == user_id for record in batch]
            self._later = [(when, batch) for when, batch in self._later if batch[0].user_id != user_id]
            for record in gone:  # their failed tries are forgotten with them
                self._tries.pop(record.id, None)
            while self._taken[user_id] > 0:  # taken before the drop: let them end, their writes go too
                self._cond.wait(0.5)
            del self._taken[user_id]
            self._cond.notify_all()  # a flush may be waiting on what was dropped
            return len(gone)

    def pending(self) -> int:
        with self._cond:
            return sum(len(v) for v in self._queue.values()) + self._busy + sum(len(b) for _, b in self._later)

    def flush(self, timeout: float | None = None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            self._force = True
            self._cond.notify_all()
            while self._queue or self._busy or self._later:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise TimeoutError("queued inputs are still being processed")
                self._cond.wait(remaining if remaining is not None else 0.5)
            self._force = False

    def close(self, timeout: float | None = None) -> int:
        """Process what is queued, then stop the worker. With `timeout`, batches are started only until
        it has passed: what is still queued then is left in the input log, pending (inputs this worker
        held are given back), for the next start to take up; the batch running then is not waited for
        past it (`join` waits for it). Returns how many inputs were left."""
        deadline = None if timeout is None else time.monotonic() + max(0.0, timeout)
        if self._thread is None:
            with self._cond:
                self._closing = True
            return 0
        try:
            self.flush(timeout)
        except TimeoutError:
            pass
        with self._cond:
            self._closing = True
            left = self._leave_queued()
            self._left += [record.id for record in left]
            self._waited = [record.id for record in self._running]
            self._cond.notify_all()
        if left:
            self._give_back_left(left)
        self._thread.join(timeout=10 if deadline is None else max(0.0, deadline - time.monotonic()))
        return len(left)

    def join(self, timeout: float | None = None) -> tuple[list[str], list[str], list[str]]:
        """After `close`: wait up to `timeout` seconds (None: for good) for the worker to end, the batch
        it was running included (call it once that batch's model calls are cut: its rules and writes
        are waited for, so none lands after). Returns the ids of the inputs left pending in the log
        (not started, or cut short and given back), of the batch that was running when `close` left
        the queue, and what still runs when `timeout` passed (in words; none once the worker ended)."""
        if self._thread is not None:
            self._thread.join(timeout)
        with self._cond:
            still = []
            if self._thread is not None and self._thread.is_alive():
                still = [f"the background batch of inputs {', '.join(r.id for r in self._running)}" if self._running
                         else "the background worker (giving back inputs, or its idle sweep)"]
            return list(dict.fromkeys(self._left)), list(self._waited), still

    def _leave_queued(self) -> list[InputRecord]:
        """Under the lock: take every input not started out of the queue (queued, waiting for a retry,
        or taken in a batch not started yet); the log still has them."""
        left = [record for items in self._queue.values() for _, record in items]
        left += [record for _, batch in self._later for record in batch]
        self._queue.clear()
        self._later = []
        while self._backlog:
            batch = self._backlog.popleft()
            self._busy -= len(batch)
            self._taken[batch[0].user_id] -= 1
            left += batch
        for record in left:
            self._tries.pop(record.id, None)
        return left

    def _give_back_left(self, left: Sequence[InputRecord]) -> None:
        """What `close` left: those held by this worker go back to the log as pending (the rest are
        pending already), so the next start takes them up at once. Best effort: a claim that cannot be
        given back lapses after its lease."""
        log.info("closing: %d queued input(s) left pending in the input log for the next start", len(left))
        if self._release is None:
            return
        try:
            for start in range(0, len(left), RELEASE_CHUNK):
                self._release(left[start:start + RELEASE_CHUNK])
        except Exception as exc:
            log.warning("closing: could not give back queued inputs (%s); their claims lapse after the lease",
                        type(exc).__name__)

    def _work(self) -> None:
        last_sweep = time.monotonic()
        while True:
            with self._cond:
                now, force = time.monotonic(), self._force or self._closing
                next_sweep = last_sweep + self.sweep_every_s
                batches = [batch for when, batch in self._later if force or when <= now]  # failed, due again
                self._later = [(when, batch) for when, batch in self._later if not (force or when <= now)]
                batches += take_batches(self._queue, batch_size=self._batch_size, max_wait_s=self._max_wait,
                                        now=now, force=force)
                if not batches:
                    if self._closing and not self._queue:
                        return
                    sweep_now = (self._sweep is not None and not self._queue and not self._later
                                 and now >= next_sweep)
                    if not sweep_now:
                        if self._queue or self._later:
                            self._cond.wait(timeout=min(self._max_wait, 0.25) or 0.05)
                        else:  # idle: until something is queued (submit notifies), the next sweep, or a second
                            self._cond.wait(timeout=None if self._sweep is None else min(1.0, max(0.05, next_sweep - now)))
                        continue
                self._busy += sum(len(b) for b in batches)
                self._taken.update(batch[0].user_id for batch in batches)
                self._backlog.extend(batches)
            if not batches:
                last_sweep = time.monotonic()
                self._swept()
                continue
            while (batch := self._next_taken()) is not None:
                try:
                    self._process(batch)
                    self._forget_tries(batch)
                except Exception as exc:  # the inputs stay in the log; keep serving the rest
                    self._failed(batch, exc)
                finally:
                    with self._cond:
                        self._running = []
                        self._taken[batch[0].user_id] -= 1
                        self._busy -= len(batch)
                        self._cond.notify_all()

    def _next_taken(self) -> list[InputRecord] | None:
        """The next batch taken and not started, unless `close` left it meanwhile."""
        with self._cond:
            self._running = self._backlog.popleft() if self._backlog else []
            return self._running or None

    def _swept(self) -> None:
        assert self._sweep is not None
        try:
            self._sweep()
        except Exception as exc:  # the next sweep tries again
            log.warning("taking up inputs left pending failed (%s)", type(exc).__name__)

    def _forget_tries(self, batch: Sequence[InputRecord]) -> None:
        with self._cond:
            for record in batch:
                self._tries.pop(record.id, None)

    def _failed(self, batch: list[InputRecord], exc: Exception) -> None:
        """Try the batch again after a wait that doubles each time, or give it up to the sweep."""
        with self._cond:
            tries = 1 + max(self._tries.get(r.id, 0) for r in batch)
            again = tries <= self.retries and not self._closing
            for record in batch:
                if again:
                    self._tries[record.id] = tries
                else:
                    self._tries.pop(record.id, None)
            if again:
                self._later.append((time.monotonic() + self.retry_base_s * 2 ** (tries - 1), batch))
        if again:
            log.warning("background batch of %d input(s) failed (%s); trying again (%d of %d)",
                        len(batch), type(exc).__name__, tries, self.retries)
            return
        if isinstance(exc, EngineClosed):  # cut short by the closing: left in the log for the next start
            with self._cond:
                self._left += [record.id for record in batch]
        if self._release is not None and not self._given_back(batch):
            return
        if isinstance(exc, EngineClosed):  # `close` ended its wait while this batch ran: no fault
            log.info("closing: a batch of %d input(s) was cut short; its inputs wait in the input log for "
                     "the next start", len(batch))
            return
        log.error("background batch of %d input(s) failed; its inputs wait in the input log for the "
                  "next sweep or restart", len(batch), exc_info=exc)

    def _given_back(self, batch: list[InputRecord]) -> bool:
        """Release the batch's held inputs to the log; when that fails too, keep the batch for another
        round of tries after `sweep_every_s` (unless the queue is being flushed or closed: then the
        inputs wait, held, for the next start's `resume`). False when the batch stays queued."""
        assert self._release is not None
        try:
            self._release(batch)
            return True
        except Exception as exc:
            with self._cond:
                keep = not (self._closing or self._force)
                if keep:
                    self._later.append((time.monotonic() + self.sweep_every_s, batch))
            if keep:
                log.warning("background batch of %d input(s) failed and could not be given back (%s); "
                            "trying again in %.0f s", len(batch), type(exc).__name__, self.sweep_every_s)
                return False
            log.error("background batch of %d input(s) failed and could not be given back; they wait "
                      "for the next start", len(batch), exc_info=exc)
            return False
