"""`close` and the engine's calls running in other threads, and close's waits bounded.

A waited `add` running in another thread when close cut it gave its input back from that thread
after close had returned: a write to the data dir of a closed engine. close now waits for the calls
in flight to end, says which (`CloseReport.calls_waited_for`), and refuses new ones from its first
moment. `close(timeout=T)` waited without a bound for a batch's rules: a rules pass that hangs held
close as long. Its waits now end at T plus `grace`; what still runs then is named
(`CloseReport.still_running`), the engine keeps its writer lock, and a second `close()` finishes.
Processing is stood in for by gates; nothing here waits for a time."""

from __future__ import annotations

import threading

from mirix_py.engine import Mirix
from mirix_py.llm.loop import EngineClosed
from mirix_py.records import InputStatus
from mirix_py.store import writer_lock
from waiting import wait_for


def _gated(fn, reached: threading.Event, gate: threading.Event):
    def call(*args, **kwargs):
        reached.set()
        gate.wait()
        return fn(*args, **kwargs)

    return call


def test_close_waits_for_a_waited_add_cut_in_another_thread_to_give_its_input_back(tmp_path):
    mx = Mirix(tmp_path, embedder=None)
    in_rules, rules = threading.Event(), threading.Event()
    giving_back, give_back = threading.Event(), threading.Event()
    mx.runner.flow.process = _gated(mx.runner.flow.process, in_rules, rules)  # type: ignore[method-assign]
    mx.inputs.release = _gated(mx.inputs.release, giving_back, give_back)  # type: ignore[method-assign]
    raised: list[BaseException] = []

    def add() -> None:
        try:
            mx.add("My sister Anna is a painter in Lyon.", user_id="bo")
        except EngineClosed as exc:
            raised.append(exc)

    adder = threading.Thread(target=add, daemon=True)
    adder.start()
    reports = []
    closer = threading.Thread(target=lambda: reports.append(mx.close(timeout=0)), daemon=True)
    try:
        assert in_rules.wait(120)
        (held,) = mx.inputs.by_status(InputStatus.processing, user_id="bo")
        closer.start()
        assert giving_back.wait(120)  # close cut the add at its model calls: its thread gives the input back
        rules.set()  # the rules it handed to the engine's threads end
        closer.join(5)  # a bound for a close that returns too soon (the fault), not a measure of time
        assert closer.is_alive(), "close returned while the add's thread still had its input to give back"
    finally:
        rules.set()
        give_back.set()
    closer.join(120)
    assert not closer.is_alive()
    assert reports[0].calls_waited_for == ["add(user_id='bo')"] and not reports[0].still_running
    with Mirix(tmp_path, embedder=None, resume=False) as looked:  # as close left it: given back, pending
        assert looked.input_status(held.id).status is InputStatus.pending
    adder.join(120)
    assert len(raised) == 1  # the caller is told its add was cut; the input waits for the next start


def test_a_call_that_writes_is_refused_from_the_moment_close_starts(tmp_path):
    """While close processes the queue (before, only once it had: the call wrote meanwhile)."""
    mx = Mirix(tmp_path, embedder=None)
    started, gate, closing = threading.Event(), threading.Event(), threading.Event()
    mx.runner.process_queued = _gated(mx.runner.process_queued, started, gate)  # type: ignore[method-assign]
    close_queue = mx._queue.close

    def queue_closed(*args, **kwargs):
        closing.set()
        return close_queue(*args, **kwargs)

    mx._queue.close = queue_closed  # type: ignore[method-assign]
    mx.add("Line 1: the blue kettle sits on the shelf.", user_id="bo", wait=False)
    closer = threading.Thread(target=mx.close, daemon=True)
    try:
        assert started.wait(120)
        closer.start()
        assert closing.wait(120)  # close is processing the queue (its batch waits on the gate)
        try:
            mx.core_append("human", "Likes green tea.", user_id="zed")
        except EngineClosed:
            pass
        else:
            raise AssertionError("core_append wrote while close was under way")
    finally:
        gate.set()
    closer.join(120)
    assert not closer.is_alive()
    with Mirix(tmp_path, embedder=None, resume=False) as looked:
        assert looked.core_memory(user_id="zed")["human"].value == ""
        assert looked.stats(user_id="bo")["memories"]["episodic"] == 1  # the queue was processed


def test_close_with_a_timeout_ends_at_its_cap_names_what_still_runs_and_keeps_the_data_dir_locked(tmp_path):
    mx = Mirix(tmp_path, embedder=None)
    started, gate = threading.Event(), threading.Event()
    mx.runner.flow.process = _gated(mx.runner.flow.process, started, gate)  # type: ignore[method-assign]
    ids = [mx.add(f"Line {i}: the green teapot number {i} sits on shelf {i}.", user_id="bo", wait=False).input_ids[0]
           for i in range(8)]
    reports = []
    closer = threading.Thread(target=lambda: reports.append(mx.close(timeout=0, grace=0)), daemon=True)
    try:
        assert started.wait(120)  # the batch's rules hang (until the gate opens)
        closer.start()
        closer.join(120)  # a bound for a close without a cap (the fault), never reached with one
        assert not closer.is_alive(), "close waited for a rules pass that hangs"
        report = reports[0]
        assert report.still_running and report.waited_for == ids
        assert writer_lock.held_here(tmp_path), "the data dir was let go while its batch could still write"
    finally:
        gate.set()
    again = mx.close()  # waits for what was left running, then closes
    assert again.still_running == [] and sorted(again.left_pending) == sorted(ids)
    assert not writer_lock.held_here(tmp_path)
    with Mirix(tmp_path, embedder=None, resume=False) as looked:
        assert looked.stats(user_id="bo")["memories"]["episodic"] == 8  # the cut batch's rules wrote, before that
        assert sorted(r.id for r in looked.inputs.by_status(InputStatus.pending, user_id="bo")) == sorted(ids)
    with Mirix(tmp_path, embedder=None) as reopened:  # the next start processes them, none twice
        wait_for(lambda: len(reopened.inputs.by_status(InputStatus.processed, user_id="bo")) == 8, 120)
        reopened.flush()
        assert reopened.stats(user_id="bo")["memories"]["episodic"] == 8
