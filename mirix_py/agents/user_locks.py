"""One writer at a time for each user: a batch's flow reads the user's memories (the core block it
appends to, the episodes a repeat joins) and writes from what it read, so two writes of one user at
once (a waited add beside a queued batch, two REST requests, a core append beside an add, an undo
beside an update) each read the state before the other, and one's writes undo or duplicate the
other's. Inside an engine a lock per user orders them; on PostgreSQL a session advisory lock per
user orders them across engines and machines too (SQLite has one writer process). Other users go
on in parallel.

Closing the engine closes its turns: no new turn is given, and `close` waits (bounded) for those
held, so the writes running when it was called end before the store closes under them."""

from __future__ import annotations

import threading
import weakref
from contextlib import contextmanager
from typing import Iterator

from sqlalchemy import text as sql
from sqlalchemy.engine import Engine

from mirix_py.llm.loop import EngineClosed


class UserLocks:
    """`with locks(user_id):` holds that user's turn, re-entrantly for the thread that has it;
    EngineClosed for a new turn once `close` was called."""

    def __init__(self, engine: Engine | None = None) -> None:
        self._engine = engine if engine is not None and engine.dialect.name == "postgresql" else None
        self._guard = threading.Lock()
        self._locks: weakref.WeakValueDictionary[str, threading.Lock] = weakref.WeakValueDictionary()
        self._local = threading.local()  # `users`: the users whose turn this thread holds
        self._turns = threading.Condition()  # guards `_entered` and `_closed`
        self._entered = 0  # turns held or waited for
        self._closed = False

    def check_open(self) -> None:
        """EngineClosed once `close` was called (before a write that would take a turn)."""
        if self._closed:
            raise EngineClosed()

    def close(self, timeout: float | None = None) -> bool:
        """Give no new turn, and wait up to `timeout` seconds (None: for good) until every turn held
        or waited for has ended; returns whether all have. Call it outside any turn."""
        with self._turns:
            self._closed = True
            return self._turns.wait_for(lambda: self._entered == 0, timeout)

    @contextmanager
    def __call__(self, user_id: str) -> Iterator[None]:
        mine = self._mine()
        if user_id in mine:  # the thread holds it already
            yield
            return
        self._enter()
        try:
            with self._lock(user_id):
                mine.add(user_id)
                try:
                    if self._engine is not None:
                        with self._across_engines(user_id):
                            yield
                    else:
                        yield
                finally:
                    mine.discard(user_id)
        finally:
            self._leave()

    def _mine(self) -> set[str]:
        users: set[str] | None = getattr(self._local, "users", None)
        if users is None:
            users = self._local.users = set()
        return users

    def _enter(self) -> None:
        """Counted from before the wait for the lock: close waits for a writer already in line."""
        with self._turns:
            if self._closed:
                raise EngineClosed()
            self._entered += 1

    def _leave(self) -> None:
        with self._turns:
            self._entered -= 1
            self._turns.notify_all()

    def _lock(self, user_id: str) -> threading.Lock:
        with self._guard:
            lock = self._locks.get(user_id)
            if lock is None:
                lock = self._locks[user_id] = threading.Lock()
            return lock

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
