"""Waiting in tests for a state, never for a time: poll a predicate until it holds or the time allowed runs out."""

from __future__ import annotations

import time
from typing import Callable


def wait_for(predicate: Callable[[], object], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "not within the time allowed"
        time.sleep(0.05)


def turns_closed(mx: object) -> bool:
    """`close` has started refusing work: the engine gives no write a turn any more."""
    from mirix_py.llm.loop import EngineClosed

    try:
        mx.user_locks.check_open()  # type: ignore[attr-defined]
    except EngineClosed:
        return True
    return False
