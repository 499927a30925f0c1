"""`close(timeout=T)` with screenshots queued (`add_screenshot(wait=False)`, the capture loop) used to
run every queued batch through the managers, whatever T. Now batches start until T only: the frames
of those left are logged (read first, as every queued frame is before its batch) and given back,
pending, for the next start; the batch running at T is cut at its model calls and waited for, and
given back too. Processing is stood in for by a batch that waits on a gate; nothing here waits for a
time."""

from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

from mirix_py.engine import Mirix
from mirix_py.ingest.batching import BatchPolicy
from mirix_py.llm.loop import EngineClosed
from mirix_py.records import InputStatus
from waiting import turns_closed, wait_for

USER = "ada"
T0 = datetime(2024, 6, 3, 9, 0, tzinfo=timezone.utc)


def test_close_with_a_timeout_leaves_queued_screenshots_pending_for_the_next_open(tmp_path, tesseract, synth):
    mx = Mirix(tmp_path, embedder=None)
    mx.configure_screenshots(workers=0, batch=BatchPolicy(max_frames=1, max_seconds=3600))  # a batch per frame
    started, gate = threading.Event(), threading.Event()
    flow = mx.runner.flow
    process = flow.process

    def gated(*args, **kwargs):  # the first batch's rules wait for the gate; the other batches queue behind it
        started.set()
        gate.wait()
        return process(*args, **kwargs)

    flow.process = gated  # type: ignore[method-assign]
    ids = []
    for i, scene in enumerate(("chat", "email", "terminal")):
        queued = mx.add_screenshot(synth.frame(scene, 1), user_id=USER, captured_at=T0 + timedelta(seconds=i),
                                   app=scene.title(), window_title=scene, wait=False)
        assert queued.status is InputStatus.pending
        ids += queued.input_ids
    assert len(ids) == 3 and started.wait(120)

    reports = []
    closer = threading.Thread(target=lambda: reports.append(mx.close(timeout=0)), daemon=True)
    closer.start()
    try:
        wait_for(lambda: turns_closed(mx), 120)
        closer.join(5)  # a bound for a close that returns too soon, not a measure of time
        assert closer.is_alive(), "close returned while the screenshot batch it cut could still write"
    finally:
        gate.set()
    closer.join(120)
    assert not closer.is_alive()
    report = reports[0]
    assert report is not None, "close says what it left"
    assert sorted(report.left_pending) == sorted(ids) and report.waited_for == ids[:1]

    with Mirix(tmp_path, embedder=None, resume=False) as looked:  # none processed, none marked failed, none held
        assert sorted(r.id for r in looked.inputs.by_status(InputStatus.pending, user_id=USER)) == sorted(ids)
        assert all(looked.inputs.get(i).messages for i in ids)  # the OCR text is in the log to resume from
    with Mirix(tmp_path, embedder=None) as reopened:  # a start takes them up
        wait_for(lambda: len(reopened.inputs.by_status(InputStatus.processed, user_id=USER)) == 3, 120)
        reopened.flush()
        episodes = reopened.list(user_id=USER, memory_types=["episodic"])
        assert sorted(i for m in episodes for i in m.source_ids if i in ids) == sorted(ids)  # each once


def test_a_closed_engine_reads_and_logs_no_screenshot(tmp_path, tesseract, synth):
    """After close, `ingest_screenshots` read the folder (an OCR thread of a new pipeline), logged the frame
    and returned a report with it pending; both screenshot calls now raise as `add` does."""
    path = tmp_path / "shots" / "frame.png"
    path.parent.mkdir()
    synth.frame("editor").save(path)
    mx = Mirix(tmp_path / "data", embedder=None)
    mx.close()
    calls = {
        "ingest_screenshots": lambda: mx.ingest_screenshots(path.parent, user_id=USER),
        "add_screenshot": lambda: mx.add_screenshot(path, user_id=USER, captured_at=T0),
        "queued add_screenshot": lambda: mx.add_screenshot(path, user_id=USER, captured_at=T0, wait=False),
    }
    for name, call in calls.items():
        try:
            call()
        except EngineClosed:
            continue
        raise AssertionError(f"{name} ran after close")
    with Mirix(tmp_path / "data", embedder=None, resume=False) as again:
        assert again.inputs.newest(user_id=USER, statuses=list(InputStatus), limit=10) == [], \
            "a screenshot call after close logged its frame"
