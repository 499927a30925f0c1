"""`close(timeout=T)` with thousands of inputs queued (`add(wait=False)`) used to process the whole
queue first, whatever T: it ends within T now, and what it did not process stays pending in the
input log, which the next engine opened on the data dir takes up. The batch running when T passes
used to go on after close returned, and write then (its rules' memories landed seconds later in a
data dir the caller may be copying or deleting): close now cuts its model calls and waits for the
rest of it, and says what it left and what it waited for (`CloseReport`). Processing is stood in for
by a batch that waits on a gate; nothing here waits for a time."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

from mirix_py.boundary.inputs import normalize_add
from mirix_py.engine import Mirix
from mirix_py.facade.background import BackgroundQueue
from mirix_py.records import InputRecord, InputStatus
from waiting import turns_closed, wait_for

if TYPE_CHECKING:
    from mirix_py.records import CloseReport

QUEUED = 40  # five batches of `batch_size` 8


def _gated(process, started: threading.Event, gate: threading.Event):
    """`process`, once `gate` opens; `started` is set when the first batch reaches it."""

    def call(*args, **kwargs):
        started.set()
        gate.wait()
        return process(*args, **kwargs)

    return call


def _closed_in_thread(close) -> threading.Thread:
    thread = threading.Thread(target=close, daemon=True)
    thread.start()
    thread.join(120)  # a bound for a hung close, never reached when it keeps its timeout
    return thread


def _closing(mx: Mirix, timeout: float, gate: threading.Event) -> CloseReport:
    """`mx.close(timeout)` while a batch waits on `gate`: close must not return while that batch could
    still write; once the gate opens, it does."""
    reports: list[CloseReport] = []
    closer = threading.Thread(target=lambda: reports.append(mx.close(timeout=timeout)), daemon=True)
    closer.start()
    try:
        wait_for(lambda: turns_closed(mx), 120)
        closer.join(5)  # a bound for a close that returns too soon (the fault), not a measure of time
        assert closer.is_alive(), "close returned while the batch it left running could still write"
    finally:
        gate.set()
    closer.join(120)
    assert not closer.is_alive(), "close went on processing the queue"
    return reports[0]


def test_close_with_a_timeout_leaves_the_queue_pending_for_the_next_open(tmp_path):
    mx = Mirix(tmp_path, embedder=None)
    started, gate = threading.Event(), threading.Event()
    mx.runner.process_queued = _gated(mx.runner.process_queued, started, gate)  # type: ignore[method-assign]
    ids = [mx.add(f"Line {i}: the blue kettle number {i} sits on shelf {i}.", user_id="bo", wait=False).input_ids[0]
           for i in range(QUEUED)]
    assert started.wait(120)  # the first batch is being processed, the rest queued
    report = _closing(mx, 0.5, gate)  # the batch that was running goes on: the closed engine takes no turn for it
    assert sorted(report.left_pending) == sorted(ids) and report.waited_for == ids[:8]

    with Mirix(tmp_path, embedder=None, resume=False) as looked:
        pending = looked.inputs.by_status(InputStatus.pending, user_id="bo")
        assert sorted(r.id for r in pending) == sorted(ids)  # in the log, none processed, none held
        assert looked.stats(user_id="bo")["memories"].get("episodic", 0) == 0

    with Mirix(tmp_path, embedder=None) as reopened:  # a start takes up what is pending
        wait_for(lambda: len(reopened.inputs.by_status(InputStatus.processed, user_id="bo")) == QUEUED, 120)
        reopened.flush()
        assert reopened.stats(user_id="bo")["memories"]["episodic"] == QUEUED
        assert any("number 39 " in h.text for h in reopened.search("kettle number 39", user_id="bo", limit=3))


def test_the_batch_running_when_close_times_out_writes_before_close_returns_never_after(tmp_path):
    """Its rules and writes (on the engine's event loop's threads) were left running by close: their
    memories landed after it returned. Now close cuts the batch's model calls, waits for its rules
    and writes, and leaves its inputs pending (the next start skips the managers that wrote)."""
    mx = Mirix(tmp_path, embedder=None)
    started, gate = threading.Event(), threading.Event()
    flow = mx.runner.flow
    flow.process = _gated(flow.process, started, gate)  # type: ignore[method-assign]
    ids = [mx.add(f"Line {i}: the green teapot number {i} sits on shelf {i}.", user_id="bo", wait=False).input_ids[0]
           for i in range(16)]
    assert started.wait(120)  # the first batch is in its rules, on a thread of the event loop
    report = _closing(mx, 0, gate)
    assert report.waited_for == ids[:8] and sorted(report.left_pending) == sorted(ids)

    with Mirix(tmp_path, embedder=None, resume=False) as looked:  # what close left, as it left it
        assert looked.stats(user_id="bo")["memories"]["episodic"] == 8  # the cut batch's rules wrote, before close returned
        assert sorted(r.id for r in looked.inputs.by_status(InputStatus.pending, user_id="bo")) == sorted(ids)
    with Mirix(tmp_path, embedder=None) as reopened:
        wait_for(lambda: len(reopened.inputs.by_status(InputStatus.processed, user_id="bo")) == 16, 120)
        reopened.flush()
        assert reopened.stats(user_id="bo")["memories"]["episodic"] == 16  # none written twice


def test_close_without_a_timeout_still_processes_everything_queued(tmp_path):
    mx = Mirix(tmp_path, embedder=None)
    for i in range(QUEUED):
        mx.add(f"Line {i}: the red kettle number {i} sits on shelf {i}.", user_id="bo", wait=False)
    report = mx.close()
    assert report.left_pending == []
    with Mirix(tmp_path, embedder=None, resume=False) as looked:
        assert len(looked.inputs.by_status(InputStatus.processed, user_id="bo")) == QUEUED
        assert not looked.inputs.by_status(InputStatus.pending, user_id="bo")


def _record(i: int) -> InputRecord:
    return normalize_add(f"note {i}", user_id="ada", occurred_at=None, source_id=None, kind="text", max_chars=1000)


def test_the_queue_gives_back_what_close_left_and_processes_none_of_it():
    """Queued, waiting for a retry or taken in a batch not started: each input left is handed to
    `release` (which gives back those the worker held) and none is processed after close."""
    started, gate = threading.Event(), threading.Event()
    processed: list[str] = []
    released: list[str] = []
    queue = BackgroundQueue(_gated(lambda batch: processed.extend(r.id for r in batch), started, gate),
                            batch_size=8, max_wait_s=3600, release=lambda batch: released.extend(r.id for r in batch))
    records = [_record(i) for i in range(QUEUED)]
    for record in records:
        queue.submit(record)
    assert started.wait(120)
    left: list[int] = []
    closer = _closed_in_thread(lambda: left.append(queue.close(timeout=0.2)))
    assert not closer.is_alive(), "close went on processing the queue"
    gate.set()
    wait_for(lambda: len(processed) == 8)  # the batch that was running ends; no other starts
    assert left == [QUEUED - 8] and sorted(released) == sorted(r.id for r in records[8:])
    assert processed == [r.id for r in records[:8]] and queue.pending() == 0
