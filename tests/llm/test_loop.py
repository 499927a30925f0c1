"""The engine's event loop thread (`llm.loop`): closing it never leaves a caller waiting for good,
and nothing runs on it after."""

from __future__ import annotations

import asyncio
import inspect
import threading

import pytest
from waiting import wait_for

from mirix_py.llm.loop import EngineClosed, LoopThread


async def _answer() -> int:
    return 42


def _call(loop: LoopThread, coro, out: list) -> threading.Thread:
    def run() -> None:
        try:
            out.append(loop.run(coro))
        except EngineClosed as exc:
            out.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _refuses(loop: LoopThread) -> bool:
    coro = _answer()
    try:
        loop.run(coro)
    except EngineClosed:
        return True
    return False


def test_a_caller_waiting_on_a_coroutine_close_cuts_short_gets_engine_closed():
    """The caller used to wait for good: its coroutine stayed pending on the stopped loop."""
    loop, started, out = LoopThread(), threading.Event(), []

    async def never_ends() -> None:
        started.set()
        await asyncio.Event().wait()

    caller = _call(loop, never_ends(), out)
    assert started.wait(60)
    loop.close()
    caller.join(60)
    assert not caller.is_alive(), "the caller never returned"
    assert isinstance(out[0], EngineClosed) and "closed before" in str(out[0])


def test_close_waits_for_a_coroutine_that_ends():
    loop, go, out = LoopThread(), threading.Event(), []

    async def ends_on_go() -> int:
        await asyncio.to_thread(go.wait, 60)
        return 7

    caller = _call(loop, ends_on_go(), out)
    closed: list = []
    closer = threading.Thread(target=lambda: closed.append(loop.close(wait_s=60)), daemon=True)
    closer.start()
    wait_for(lambda: _refuses(loop))  # closing: it waits for the coroutine
    go.set()
    closer.join(60)
    caller.join(60)
    assert out == [7] and closed == [True]


def test_nothing_runs_after_close():
    """`run` used to start a new loop after close, one that nothing would stop."""
    loop = LoopThread()
    assert loop.run(_answer()) == 42
    loop.close()
    coro = _answer()
    with pytest.raises(EngineClosed, match="the engine is closed"):
        loop.run(coro)
    assert inspect.getcoroutinestate(coro) == inspect.CORO_CLOSED  # closed, not left never awaited
