"""The capture loop: grab the screen every `interval` seconds and hand frames to the engine.

A `FrameSource` is anything with `grab() -> GrabbedFrame | None` (None: nothing to capture right
now, e.g. the screen is locked). `ImageGrabSource` grabs the real screen with `PIL.ImageGrab`
and asks the OS which window is in front; `ReplaySource` plays back images (tests, demos), so
nothing here needs a display except `ImageGrabSource` itself, which says clearly when there is none.

    with Mirix() as mx:
        run_capture(ImageGrabSource(), mx, user_id="ada", interval=1.5, duration=3600)
"""

from __future__ import annotations

import logging
import os
import platform
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Iterable, Iterator, Protocol, runtime_checkable

from PIL import Image

from mirix_py.errors import MirixError
from mirix_py.records import utcnow

log = logging.getLogger("mirix_py.capture")

__all__ = [
    "CaptureStats", "CaptureUnavailable", "FrameSource", "GrabbedFrame", "ImageGrabSource", "ReplaySource",
    "active_window", "run_capture",
]


class CaptureUnavailable(MirixError, RuntimeError):
    """The screen cannot be captured here (no display, no permission, no backend)."""


@dataclass
class GrabbedFrame:
    image: Image.Image
    app: str | None = None
    window_title: str | None = None
    captured_at: datetime | None = None  # filled in by the loop when the source does not know


@runtime_checkable
class FrameSource(Protocol):
    def grab(self) -> GrabbedFrame | None:
        """One frame of the screen now, or None when there is nothing to capture."""


# ---------------------------------------------------------------- which window is in front


def _run(args: list[str], timeout: float = 1.0) -> str | None:
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=timeout, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def _linux_active_window() -> tuple[str | None, str | None]:
    if shutil.which("xdotool"):
        title = _run(["xdotool", "getactivewindow", "getwindowname"])
        pid = _run(["xdotool", "getactivewindow", "getwindowpid"])
        app = None
        if pid and pid.isdigit():
            try:
                app = open(f"/proc/{pid}/comm", encoding="utf-8").read().strip() or None
            except OSError:
                app = None
        return app, title
    if shutil.which("xprop"):
        active = _run(["xprop", "-root", "_NET_ACTIVE_WINDOW"])
        if active and "#" in active:
            wid = active.split("#")[-1].strip().split(",")[0]
            props = _run(["xprop", "-id", wid, "WM_CLASS", "_NET_WM_NAME"]) or ""
            app = title = None
            for line in props.splitlines():
                if line.startswith("WM_CLASS") and '"' in line:
                    app = line.split('"')[-2]
                elif line.startswith("_NET_WM_NAME") and '"' in line:
                    title = line.split("=", 1)[1].strip().strip('"')
            return app, title
    return None, None


def _mac_active_window() -> tuple[str | None, str | None]:
    app = _run(["osascript", "-e", 'tell application "System Events" to get name of first application process '
                                  "whose frontmost is true"])
    title = _run(["osascript", "-e", 'tell application "System Events" to get name of front window of (first '
                                    "application process whose frontmost is true)"]) if app else None
    return app, title


def _windows_active_window() -> tuple[str | None, str | None]:  # pragma: no cover - needs Windows
    import ctypes
    from ctypes import wintypes

    user32 = ctypes.windll.user32  # type: ignore[attr-defined]
    hwnd = user32.GetForegroundWindow()
    length = user32.GetWindowTextLengthW(hwnd)
    buf = ctypes.create_unicode_buffer(length + 1)
    user32.GetWindowTextW(hwnd, buf, length + 1)
    pid = wintypes.DWORD()
    user32.GetWindowThreadProcessId(hwnd, ctypes.byref(pid))
    app = None
    try:
        import psutil  # optional

        app = psutil.Process(pid.value).name()
    except Exception:
        pass
    return app, buf.value or None


def active_window() -> tuple[str | None, str | None]:
    """(app, window title) of the window in front, or (None, None) when the OS will not say.

    X11 via xdotool or xprop, macOS via osascript (window titles need the Accessibility
    permission), Windows via the Win32 API. Wayland does not expose it.
    """
    try:
        system = platform.system()
        if system == "Linux":
            return _linux_active_window()
        if system == "Darwin":
            return _mac_active_window()
        if system == "Windows":
            return _windows_active_window()
    except Exception:  # never let window lookup stop the capture
        log.debug("active window lookup failed", exc_info=True)
    return None, None


# ---------------------------------------------------------------- sources


class ImageGrabSource:
    """The real screen through `PIL.ImageGrab` (X11 on Linux, macOS, Windows)."""

    def __init__(self, *, all_screens: bool = False, bbox: tuple[int, int, int, int] | None = None,
                 window_info: Callable[[], tuple[str | None, str | None]] | None = active_window,
                 environ: dict[str, str] | None = None) -> None:
        self.all_screens = all_screens
        self.bbox = bbox
        self.window_info = window_info
        self.environ = os.environ if environ is None else environ

    def check(self) -> None:
        """Raise CaptureUnavailable with the reason when this machine cannot be captured."""
        if sys.platform.startswith("linux"):
            if not self.environ.get("DISPLAY") and not self.environ.get("WAYLAND_DISPLAY"):
                raise CaptureUnavailable(
                    "no display to capture: DISPLAY and WAYLAND_DISPLAY are not set (a server or SSH session?). "
                    "Run `mirix capture` inside the desktop session, or ingest saved screenshots with "
                    "`mirix ingest-screenshots DIR`.")
        try:
            from PIL import ImageGrab  # noqa: F401
        except ImportError as exc:
            raise CaptureUnavailable(f"PIL.ImageGrab is not available on this platform: {exc}") from exc
        self.grab()

    def grab(self) -> GrabbedFrame | None:
        try:
            from PIL import ImageGrab

            image = ImageGrab.grab(bbox=self.bbox, all_screens=self.all_screens)
        except ImportError as exc:
            raise CaptureUnavailable(f"PIL.ImageGrab is not available on this platform: {exc}") from exc
        except OSError as exc:
            hint = ""
            if sys.platform.startswith("linux"):
                hint = (" (on Linux Pillow needs an X11 display via XCB, or gnome-screenshot / spectacle / "
                        "grim on Wayland)")
            elif sys.platform == "darwin":
                hint = " (allow Screen Recording for this terminal in System Settings > Privacy & Security)"
            raise CaptureUnavailable(f"screen capture failed: {exc}{hint}") from exc
        app, title = self.window_info() if self.window_info else (None, None)
        return GrabbedFrame(image=image, app=app, window_title=title)


class ReplaySource:
    """Frames from a sequence of images or GrabbedFrames, then None (or repeat with `loop`)."""

    def __init__(self, frames: Iterable[Image.Image | GrabbedFrame], *, loop: bool = False) -> None:
        self._items = list(frames)
        self._loop = loop
        self._it: Iterator = iter(self._items)

    def grab(self) -> GrabbedFrame | None:
        try:
            item = next(self._it)
        except StopIteration:
            if not self._loop or not self._items:
                return None
            self._it = iter(self._items)
            item = next(self._it)
        return item if isinstance(item, GrabbedFrame) else GrabbedFrame(image=item)


# ---------------------------------------------------------------- the loop


@dataclass
class CaptureStats:
    grabbed: int = 0
    empty: int = 0  # grab() returned None
    duplicates: int = 0
    queued: int = 0
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"grabbed": self.grabbed, "empty": self.empty, "duplicates": self.duplicates, "queued": self.queued,
                "errors": self.errors[-20:], "seconds": round(self.seconds, 2)}


def run_capture(source: FrameSource, target: Any, *, user_id: str, interval: float = 1.5,
                duration: float | None = None, max_frames: int | None = None, stop: threading.Event | None = None,
                app: str | None = None, clock: Callable[[], float] = time.monotonic,
                now: Callable[[], datetime] = utcnow, on_frame: Callable[[GrabbedFrame, Any], None] | None = None,
                flush: bool = True, stop_when_empty: bool = False) -> CaptureStats:
    """Grab a frame every `interval` seconds and queue it (`add_screenshot(..., wait=False)`).

    `target` is a Mirix engine (or anything with `add_screenshot` and `flush`). Stops after
    `duration` seconds, `max_frames` grabs, when `stop` is set, or (with `stop_when_empty`) when
    the source returns None; then, with `flush`, processes what is pending. A frame that fails
    validation is counted in `errors` and the loop goes on; CaptureUnavailable ends it.
    """
    if not interval > 0:
        raise ValueError("interval must be positive (MIRIX captured every 1.5-3 s)")
    stop = stop or threading.Event()
    stats = CaptureStats()
    started = clock()
    try:
        while not stop.is_set():
            tick = clock()
            if duration is not None and tick - started >= duration:
                break
            grabbed = source.grab()
            if grabbed is None:
                stats.empty += 1
                if stop_when_empty:
                    break
            else:
                stats.grabbed += 1
                try:
                    result = target.add_screenshot(grabbed.image, user_id=user_id,
                                                   captured_at=grabbed.captured_at or now(),
                                                   app=grabbed.app or app, window_title=grabbed.window_title,
                                                   wait=False)
                except MirixError as exc:
                    stats.errors.append(str(exc))
                    result = None
                else:
                    frame = getattr(result, "frame", None)
                    if getattr(frame, "status", None) == "duplicate":
                        stats.duplicates += 1
                    else:
                        stats.queued += 1
                if on_frame is not None:
                    on_frame(grabbed, result)
            if max_frames is not None and stats.grabbed >= max_frames:
                break
            stop.wait(max(0.0, interval - (clock() - tick)))
    finally:
        stats.seconds = clock() - started
        if flush:
            target.flush()
    return stats
