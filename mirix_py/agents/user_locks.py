"""One writer at a time for each user inside an engine: a batch's flow reads the user's memories
(the core block it appends to, the episodes a repeat joins) and writes from what it read, so two
writes of one user at once (a waited add beside a queued batch, two REST requests, a core append
beside an add) each read the state before the other and one's writes undo or duplicate the
other's. Other users go on in parallel. Engines in other processes are not covered: they take
their turns through the database (see docs/scaling.md)."""

from __future__ import annotations

import threading
import weakref
from typing import ContextManager


class UserLocks:
    """`locks(user_id)` is a re-entrant lock of that user, the same object while anyone holds it."""

    def __init__(self) -> None:
        self._guard = threading.Lock()
        self._locks: weakref.WeakValueDictionary[str, threading.RLock] = weakref.WeakValueDictionary()

    def __call__(self, user_id: str) -> ContextManager[bool]:
        with self._guard:
            lock = self._locks.get(user_id)
            if lock is None:
                lock = self._locks[user_id] = threading.RLock()
            return lock


__all__ = ["UserLocks"]
