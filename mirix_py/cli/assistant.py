"""The desktop assistant in one process: capture the screen into memory and serve the viewer, the
REST API and MCP (streamable HTTP at /mcp) over the same engine, so everything that reads memory
sees every frame at once (one process per data dir, no second writer).

`Assistant` is the piece a program embeds (`start()` / `stop()`); `mirix assistant` runs it in the
foreground. Without a display the screen source's check fails first, with its reason, and
nothing is served."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from mirix_py.ingest.capture import CaptureStats, FrameSource, run_capture


@dataclass
class Assistant:
    """Capture from `source` into `mx` for `user_id` on a thread, and serve `app` (create_app over
    the same engine) with uvicorn on another. `source.check()` (when it has one) runs first."""

    mx: Any
    source: FrameSource
    user_id: str
    app: Any
    host: str = "127.0.0.1"
    port: int = 8000
    interval: float = 1.5
    stats: CaptureStats | None = None
    _stop: threading.Event = field(default_factory=threading.Event)
    _capture: threading.Thread | None = None
    _server: Any = None

    def start(self) -> "Assistant":
        check = getattr(self.source, "check", None)
        if check is not None:
            check()  # CaptureUnavailable with the reason, before anything is served
        from mirix_py.server.thread import ServerThread

        self._server = ServerThread(self.app, host=self.host, port=self.port).start()
        self._capture = threading.Thread(target=self._run_capture, name="mirix-capture", daemon=True)
        self._capture.start()
        return self

    @property
    def url(self) -> str:
        return self._server.url if self._server is not None else ""

    def _run_capture(self) -> None:
        self.stats = run_capture(self.source, self.mx, user_id=self.user_id, interval=self.interval,
                                 stop=self._stop)

    def wait(self, timeout: float | None = None) -> bool:
        """Until the capture stops (its source ended, or `stop()`); whether it has."""
        if self._capture is not None:
            self._capture.join(timeout)
            return not self._capture.is_alive()
        return True

    def stop(self) -> None:
        self._stop.set()
        self.wait(30)  # the capture flushes what is pending before it returns
        if self._server is not None:
            self._server.stop()

    def __enter__(self) -> "Assistant":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
