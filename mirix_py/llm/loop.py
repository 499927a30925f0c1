"""The engine's own event loop, on a thread of its own: a model client is bound to the loop it
first ran on, so every coroutine of the synchronous API runs there (`LoopThread.run`).

Closing waits a while for the coroutines still running, then cancels them: a thread waiting on a
coroutine of a stopped loop would otherwise wait forever (its result can no longer arrive). What the
coroutines handed to threads (`asyncio.to_thread`: the rules, the store's writes; no model call) is not
cut but waited for (`join`, bounded when asked), so none of it writes after the engine's `close` returns."""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Coroutine, TypeVar

T = TypeVar("T")

UNWIND_S = 5.0  # how long the stopped loop lets cancelled coroutines unwind (their `finally`s)


class EngineClosed(RuntimeError):
    """The engine was closed: no new work is taken, and work it could not wait for is cut short
    (its input stays logged and is taken up at the next start)."""

    def __init__(self, message: str = "the engine is closed") -> None:
        super().__init__(message)


class _Work(ThreadPoolExecutor):
    """The loop's `to_thread` work, each job kept until it ends, so that closing can wait for it
    within a bound (`shutdown(wait=True)` has none)."""

    def __init__(self) -> None:
        super().__init__(thread_name_prefix="mirix-loop-work")
        self._guard = threading.Lock()
        self._jobs: set[Future[Any]] = set()

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        job = super().submit(fn, *args, **kwargs)
        with self._guard:
            self._jobs.add(job)
        job.add_done_callback(self._ended)
        return job

    def _ended(self, job: Future[Any]) -> None:
        with self._guard:
            self._jobs.discard(job)

    def wait(self, timeout: float | None) -> int:
        """Wait up to `timeout` seconds (None: for good) for the jobs submitted; how many still run."""
        with self._guard:
            jobs = set(self._jobs)
        _, left = concurrent.futures.wait(jobs, timeout=timeout)
        return len(left)


class LoopThread:
    """Started by the first `run`; `close` waits for the coroutines running, closes the model
    client on it, then stops it. Nothing runs on it after `close`."""

    def __init__(self) -> None:
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._executor: _Work | None = None  # the loop's `to_thread` work: `join` waits for it
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
            self._executor = _Work()
            self._loop.set_default_executor(self._executor)
            self._thread = threading.Thread(target=_serve, args=(self._loop,), name="mirix-loop", daemon=True)
            self._thread.start()
        return self._loop

    def close(self, client: Any = None, *, wait_s: float = 0.0, stop_s: float | None = None) -> bool:
        """Refuse new coroutines, wait up to `wait_s` for those running, cancel the rest (their
        callers get EngineClosed at once), close `client` (best effort, 5 s) and stop the loop (its
        thread waited for `stop_s` at most, else 10 s). The work they handed to threads is not cut
        (it runs no model call): `join` waits for it. Returns whether every running coroutine ended
        by itself."""
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
            self._thread.join(timeout=UNWIND_S + 5 if stop_s is None else min(UNWIND_S + 5, stop_s))
        if self._executor is not None:
            self._executor.shutdown(wait=False)  # no new job; those submitted still run
        return not left

    def join(self, timeout: float | None = None) -> int:
        """After `close`: wait up to `timeout` seconds (None: for good) for the work the coroutines
        handed to threads (the rules, the store's writes), which would otherwise write after the
        engine closed; returns how many of those jobs still run."""
        return 0 if self._executor is None else self._executor.wait(timeout)


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
