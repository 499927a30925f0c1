"""Background processing of inputs accepted with `wait=False`.

One worker thread takes queued inputs in per-user batches of up to `batch_size`, as soon as a user
has a full batch or the oldest input has waited `max_wait_s`; `flush()` processes everything now.
The input log already holds every queued input, so a crash loses nothing (the inputs stay pending).
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from typing import Callable, Sequence

from mirix_py.records import InputRecord

log = logging.getLogger("mirix_py.facade.background")


def take_batches(queue: "OrderedDict[str, list[tuple[float, InputRecord]]]", *, batch_size: int, max_wait_s: float,
                 now: float, force: bool) -> list[list[InputRecord]]:
    """Pure: remove and return the batches that are due (full, old enough, or forced)."""
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
                 max_wait_s: float = 2.0) -> None:
        self._process = process
        self._batch_size = batch_size
        self._max_wait = max_wait_s
        self._queue: OrderedDict[str, list[tuple[float, InputRecord]]] = OrderedDict()
        self._cond = threading.Condition()
        self._busy = 0
        self._force = False
        self._closing = False
        self._thread: threading.Thread | None = None

    def submit(self, record: InputRecord) -> None:
        with self._cond:
            if self._closing:
                raise RuntimeError("the engine is closed")
            self._queue.setdefault(record.user_id, []).append((time.monotonic(), record))
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name="mirix-ingest", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def pending(self) -> int:
        with self._cond:
            return sum(len(v) for v in self._queue.values()) + self._busy

    def flush(self, timeout: float | None = None) -> None:
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            self._force = True
            self._cond.notify_all()
            while self._queue or self._busy:
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    raise TimeoutError("queued inputs are still being processed")
                self._cond.wait(remaining if remaining is not None else 0.5)
            self._force = False

    def close(self) -> None:
        if self._thread is None:
            return
        self.flush()
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join(timeout=10)

    def _work(self) -> None:
        while True:
            with self._cond:
                batches = take_batches(self._queue, batch_size=self._batch_size, max_wait_s=self._max_wait,
                                       now=time.monotonic(), force=self._force or self._closing)
                if not batches:
                    if self._closing and not self._queue:
                        return
                    self._cond.wait(timeout=min(self._max_wait, 0.25) or 0.05)
                    continue
                self._busy += sum(len(b) for b in batches)
            for batch in batches:
                try:
                    self._process(batch)
                except Exception:  # the inputs stay in the log for retry; keep serving the rest
                    log.exception("background batch of %d input(s) failed", len(batch))
                finally:
                    with self._cond:
                        self._busy -= len(batch)
                        self._cond.notify_all()
