"""The engine's own event loop, on a thread of its own: a model client is bound to the loop it
first ran on, so every coroutine of the synchronous API runs there (`LoopThread.run`).

Closing waits a while for the coroutines still running, then cancels them: a thread waiting on a
coroutine of a stopped loop would otherwise wait forever (its result can no longer arrive). What the
coroutines handed to threads (`asyncio.to_thread`: the rules, the store's writes; no model call) is not
cut but waited for, so none of it writes after `close` returns."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Coroutine

UNWIND_S = 5.0  # how long the stopped loop lets cancelled coroutines unwind (their `finally`s)


class EngineClosed(RuntimeError):
    """The engine was closed: no new work is taken, and work it could not wait for is cut short
    (its input stays logged and is taken up at the next start)."""

    def __init__(self, message: str = "the engine is closed") -> None:
        super().__init__(message)


class LoopThread:
    """Started by the first `run`; `close` waits for the coroutines running, closes the model
    client on it, then stops it. Nothing runs on it after `close`."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._executor: ThreadPoolExecutor | None = None  # the loop's `to_thread` work: `close` waits for it
        self._lock = threading.Lock()
        self._closed = False
        self._running: set[concurrent.futures.Future[Any]] = set()

    def run(self, coro: Coroutine[Any, Any, Any]) -> Any:
        """Wait for `coro` on the loop's thread; EngineClosed once the loop is closed, or when it
        closed before `coro` finished."""
        with self._lock:
            if self._closed:
                coro.close()  # never awaited, on purpose
                raise EngineClosed()
            future = asyncio.run_coroutine_threadsafe(coro, self._started())
            self._running.add(future)
        try:
            return future.result()
        except concurrent.futures.CancelledError:
            if self._closed:
                raise EngineClosed("the engine was closed before this call's work on its event loop ended "
                                   "(close waits only so long); an input it was processing stays logged "
                                   "and is taken up at the next start") from None
            raise
        finally:
            with self._lock:
                self._running.discard(future)

    def _started(self) -> asyncio.AbstractEventLoop:
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
            self._executor = ThreadPoolExecutor(thread_name_prefix="mirix-loop-work")
            self._loop.set_default_executor(self._executor)
            self._thread = threading.Thread(target=_serve, args=(self._loop,), name="mirix-loop", daemon=True)
            self._thread.start()
        return self._loop

    def close(self, client: Any = None, *, wait_s: float = 0.0) -> bool:
        """Refuse new coroutines, wait up to `wait_s` for those running, cancel the rest (their
        callers get EngineClosed at once), close `client` (best effort, 5 s) and stop the loop, then
        wait for the work they handed to threads to end (not cut: it runs no model call, and would
        otherwise write after this returns). Returns whether every running coroutine ended by itself."""
        with self._lock:
            self._closed = True
            loop, self._loop = self._loop, None
            running = set(self._running)
        if loop is None:
            return True
        _, left = concurrent.futures.wait(running, timeout=wait_s)
        for future in left:
            future.cancel()
        if client is not None:
            try:
                asyncio.run_coroutine_threadsafe(client.close(), loop).result(timeout=5)
            except Exception:  # closing is best effort
                pass
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(timeout=UNWIND_S + 5)
        if self._executor is not None:
            self._executor.shutdown(wait=True)
        return not left


def _serve(loop: asyncio.AbstractEventLoop) -> None:
    """The loop thread: run until stopped, then cancel what is still pending and let it unwind
    (bounded: a coroutine stuck in blocking code is left to the daemon thread)."""
    asyncio.set_event_loop(loop)
    loop.run_forever()
    pending = asyncio.all_tasks(loop)
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.wait(pending, timeout=UNWIND_S))
    loop.close()


__all__ = ["EngineClosed", "LoopThread"]
