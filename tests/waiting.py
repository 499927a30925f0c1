"""Waiting in tests for a state, never for a time: poll a predicate until it holds or the time allowed runs out."""

from __future__ import annotations

import time
from typing import Callable


def wait_for(predicate: Callable[[], object], timeout_s: float = 60.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "not within the time allowed"
        time.sleep(0.05)
