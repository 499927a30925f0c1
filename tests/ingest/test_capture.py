"""The capture loop with a pluggable frame source: no display needed; the real source says when there is none."""

from __future__ import annotations

import sys
import threading
from datetime import datetime, timedelta, timezone

import pytest
from PIL import Image

from mirix_py.errors import InvalidInput
from mirix_py.ingest import capture
from mirix_py.ingest.capture import (
    CaptureUnavailable, FrameSource, GrabbedFrame, ImageGrabSource, ReplaySource, active_window, run_capture,
)

T0 = datetime(2024, 6, 3, 9, 0, tzinfo=timezone.utc)


class Target:
    """Stands in for Mirix: records add_screenshot calls; a frame of size 1x1 is 'invalid'."""

    def __init__(self):
        self.calls, self.flushed = [], 0

    def add_screenshot(self, image, *, user_id, captured_at, app, window_title, wait):
        if image.size == (1, 1):
            raise InvalidInput("image is 1x1 pixels, too small")
        self.calls.append((image.size, user_id, captured_at, app, window_title, wait))

        class Result:
            frame = type("F", (), {"status": "duplicate" if image.size == (20, 20) else "pending"})()
        return Result()

    def flush(self):
        self.flushed += 1


class FakeClock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t


class TickingStop(threading.Event):
    """A stop event whose wait() advances the fake clock instead of sleeping."""

    def __init__(self, clock):
        super().__init__()
        self.clock, self.waits = clock, []

    def wait(self, timeout=None):
        self.waits.append(timeout)
        self.clock.t += timeout or 0
        return self.is_set()


def test_loop_queues_frames_at_the_interval_and_flushes():
    clock = FakeClock()
    stop = TickingStop(clock)
    frames = [GrabbedFrame(Image.new("RGB", (64, 48)), app="Slack", window_title="#team"),
              Image.new("RGB", (20, 20)), Image.new("RGB", (64, 48))]
    target = Target()
    stats = run_capture(ReplaySource(frames), target, user_id="ada", interval=1.5, stop=stop, clock=clock,
                        now=lambda: T0 + timedelta(seconds=clock.t), stop_when_empty=True)
    assert [c[0] for c in target.calls] == [(64, 48), (20, 20), (64, 48)]
    assert target.calls[0][1:] == ("ada", T0, "Slack", "#team", False)
    assert [c[2] for c in target.calls] == [T0, T0 + timedelta(seconds=1.5), T0 + timedelta(seconds=3)]
    assert (stats.grabbed, stats.duplicates, stats.queued, stats.empty) == (3, 1, 2, 1)
    assert stop.waits == [1.5, 1.5, 1.5] and target.flushed == 1


def test_duration_and_max_frames_end_the_loop():
    clock = FakeClock()
    target = Target()
    stats = run_capture(ReplaySource([Image.new("RGB", (64, 48))], loop=True), target, user_id="u", interval=2,
                        duration=10, stop=TickingStop(clock), clock=clock)
    assert stats.grabbed == 5 and stats.seconds == 10
    stats = run_capture(ReplaySource([Image.new("RGB", (64, 48))], loop=True), Target(), user_id="u", interval=2,
                        max_frames=3, stop=TickingStop(FakeClock()), clock=FakeClock())
    assert stats.grabbed == 3


def test_a_bad_frame_is_counted_and_the_loop_goes_on():
    clock = FakeClock()
    stats = run_capture(ReplaySource([Image.new("RGB", (1, 1)), Image.new("RGB", (64, 48))]), Target(), user_id="u",
                        interval=1, stop=TickingStop(clock), clock=clock, stop_when_empty=True)
    assert stats.grabbed == 2 and stats.queued == 1 and "too small" in stats.errors[0]


def test_a_stop_event_from_another_thread_ends_the_loop():
    stop = threading.Event()
    target = Target()
    timer = threading.Timer(0.3, stop.set)
    timer.start()
    stats = run_capture(ReplaySource([Image.new("RGB", (64, 48))], loop=True), target, user_id="u", interval=0.05,
                        stop=stop)
    timer.join()
    assert stats.grabbed >= 2 and target.flushed == 1


def test_interval_must_be_positive():
    with pytest.raises(ValueError):
        run_capture(ReplaySource([]), Target(), user_id="u", interval=0)


def test_sources_follow_the_protocol():
    assert isinstance(ReplaySource([]), FrameSource) and isinstance(ImageGrabSource(), FrameSource)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the DISPLAY check is Linux's")
def test_no_display_is_a_clear_error():
    with pytest.raises(CaptureUnavailable, match="no display.*ingest-screenshots"):
        ImageGrabSource(environ={}).check()


def test_grab_failure_is_a_clear_error(monkeypatch):
    from PIL import ImageGrab

    def broken(**kwargs):
        raise OSError("X connection failed")

    monkeypatch.setattr(ImageGrab, "grab", broken)
    with pytest.raises(CaptureUnavailable, match="screen capture failed: X connection failed"):
        ImageGrabSource(environ={"DISPLAY": ":99"}, window_info=None).check()


def test_grab_returns_the_image_and_the_window(monkeypatch):
    from PIL import ImageGrab

    monkeypatch.setattr(ImageGrab, "grab", lambda **kw: Image.new("RGB", (320, 200)))
    frame = ImageGrabSource(window_info=lambda: ("Firefox", "Docs")).grab()
    assert frame.image.size == (320, 200) and (frame.app, frame.window_title) == ("Firefox", "Docs")


def test_active_window_never_raises(monkeypatch):
    monkeypatch.setattr(capture.shutil, "which", lambda name: None)  # no xdotool / xprop
    assert active_window() == (None, None) or sys.platform != "linux"
