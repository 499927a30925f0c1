"""A screenshot batch cut by `close` was logged as a failure ("…failed (EngineClosed); queued to be tried
again", a WARNING): nothing failed, its frames are left pending for the next open, and the log says so
at INFO. The batch's rules wait on a gate; nothing here waits for a time."""

from __future__ import annotations

import logging
import threading
from datetime import datetime, timezone

from mirix_py.engine import Mirix
from mirix_py.ingest.batching import BatchPolicy
from mirix_py.records import InputStatus
from waiting import wait_for

USER = "ada"
T0 = datetime(2024, 6, 3, 9, 0, tzinfo=timezone.utc)


def test_a_screenshot_batch_cut_by_close_is_logged_as_left_pending_not_as_failed(tmp_path, tesseract, synth, caplog):
    mx = Mirix(tmp_path, embedder=None)
    mx.configure_screenshots(workers=0, batch=BatchPolicy(max_frames=1, max_seconds=3600))
    started, gate = threading.Event(), threading.Event()
    process = mx.runner.flow.process

    def gated(*args, **kwargs):
        started.set()
        gate.wait()
        return process(*args, **kwargs)

    mx.runner.flow.process = gated  # type: ignore[method-assign]
    queued = mx.add_screenshot(synth.frame("chat", 1), user_id=USER, captured_at=T0, app="Chat",
                               window_title="chat", wait=False)
    assert started.wait(120)
    caplog.set_level(logging.INFO, logger="mirix_py")
    closer = threading.Thread(target=lambda: mx.close(timeout=0), daemon=True)
    closer.start()
    try:  # close cuts the batch at its model calls: its thread logs what became of it
        wait_for(lambda: any(r.name == "mirix_py.screenshots" and ("cut short" in r.getMessage()
                                                                  or "EngineClosed" in r.getMessage())
                             for r in caplog.records), 120)
    finally:
        gate.set()
    closer.join(120)
    assert not closer.is_alive()
    shots = [r for r in caplog.records if r.name == "mirix_py.screenshots"]
    assert not [r for r in shots if r.levelno >= logging.WARNING], "a batch cut by close was logged as failed"
    assert any(r.levelno == logging.INFO and "left pending" in r.getMessage() for r in shots)
    with Mirix(tmp_path, embedder=None, resume=False) as looked:
        assert looked.input_status(queued.input_ids[0]).status is InputStatus.pending

