"""One writer at a time for each user: a batch's flow reads the user's memories (the core block it
appends to, the episodes a repeat joins) and writes from what it read, so two writes of one user at
once (a waited add beside a queued batch, two REST requests, a core append beside an add, an undo
beside an update) each read the state before the other, and one's writes undo or duplicate the
other's. Inside an engine a lock per user orders them; on PostgreSQL a session advisory lock per
user orders them across engines and machines too (SQLite has one writer process). Other users go
on in parallel."""

from __future__ import annotations

import threading
import weakref
from contextlib import contextmanager
from typing import Iterator

from sqlalchemy import text as sql
from sqlalchemy.engine import Engine


class UserLocks:
    """`with locks(user_id):` holds that user's turn, re-entrantly for the thread that has it."""

    def __init__(self, engine: Engine | None = None) -> None:
        self._engine = engine if engine is not None and engine.dialect.name == "postgresql" else None
        self._guard = threading.Lock()
        self._locks: weakref.WeakValueDictionary[str, threading.RLock] = weakref.WeakValueDictionary()
        self._depth: dict[str, int] = {}  # changed only by the thread holding that user's lock

    def _lock(self, user_id: str) -> threading.RLock:
        with self._guard:
            lock = self._locks.get(user_id)
            if lock is None:
                lock = self._locks[user_id] = threading.RLock()
            return lock

    @contextmanager
    def __call__(self, user_id: str) -> Iterator[None]:
        with self._lock(user_id):
            depth = self._depth.get(user_id, 0)
            self._depth[user_id] = depth + 1
            try:
                if depth == 0 and self._engine is not None:
                    with self._across_engines(user_id):
                        yield
                else:
                    yield
            finally:
                if depth:
                    self._depth[user_id] = depth
                else:
                    self._depth.pop(user_id, None)

    @contextmanager
    def _across_engines(self, user_id: str) -> Iterator[None]:
        """A session advisory lock on a connection of its own, in autocommit: no transaction stays
        open while the batch runs; a lost connection lets it go."""
        assert self._engine is not None
        key = {"key": f"mirix writer {user_id}"}
        with self._engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(sql("SELECT pg_advisory_lock(hashtext(:key))"), key)
            try:
                yield
            finally:
                conn.execute(sql("SELECT pg_advisory_unlock(hashtext(:key))"), key)


__all__ = ["UserLocks"]
