"""The engine's own event loop, on a thread of its own: a model client is bound to the loop it
first ran on, so every coroutine of the synchronous API runs there (`LoopThread.run`)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any, Coroutine


class LoopThread:
    """Started by the first `run`; `close` closes the model client on it, then stops it."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Wait for `coro` on the loop's thread."""
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=self._loop.run_forever, name="mirix-loop", daemon=True)
                self._thread.start()
            loop = self._loop
        return asyncio.run_coroutine_threadsafe(coro, loop).result()

    def close(self, client: Any = None) -> None:
        """Close `client` (best effort, 5 s) on the loop if it ever ran, and stop the loop."""
        loop, self._loop = self._loop, None
        if loop is None:
            return
        if client is not None:
            try:
                asyncio.run_coroutine_threadsafe(client.close(), loop).result(timeout=5)
            except Exception:  # closing is best effort
                pass
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=5)
