"""One writer at a time for each user: a batch's flow reads the user's memories (the core block it
appends to, the episodes a repeat joins) and writes from what it read, so two writes of one user at
once (a waited add beside a queued batch, two REST requests, a core append beside an add, an undo
beside an update) each read the state before the other, and one's writes undo or duplicate the
other's. Inside an engine a lock per user orders them; on PostgreSQL a session advisory lock per
user orders them across engines and machines too (SQLite has one writer process). Other users go
on in parallel.

Closing the engine closes its turns: no new turn is given, and `close` waits (bounded) for those
held, so the writes running when it was called end before the store closes under them. The engine's
calls that write (`add`, `update`, an import, a doctor's repair...: `call`) are counted the same way,
whole: a call cut at its model calls by the closing still gives its input back from its own thread,
and `close` waits for that too, so it does not write after `close` returns."""

from __future__ import annotations

import functools
import threading
import weakref
from contextlib import contextmanager
from typing import Any, Callable, Iterator, ParamSpec, TypeVar

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
        self._calls: dict[int, tuple[int, str]] = {}  # calls in flight (`call`): key -> (thread, what)
        self._next_call = 0
        self._calls_refused = False  # `refuse_calls`: close started, its queue may still be processed
        self._closed = False

    def check_open(self) -> None:
        """EngineClosed once `close` was called (before a write that would take a turn)."""
        if self._closed:
            raise EngineClosed()

    def close(self, timeout: float | None = None) -> bool:
        """Give no new turn and take no new call, and wait up to `timeout` seconds (None: for good)
        until every turn held or waited for and every call in flight has ended (`wait`); returns
        whether all have."""
        with self._turns:
            self._closed = True
        return self.wait(timeout)

    def wait(self, timeout: float | None = None) -> bool:
        """Wait up to `timeout` seconds (None: for good) until no turn is held or waited for and no
        call is in flight in another thread; returns whether none is. Call it outside any turn."""
        me = threading.get_ident()
        with self._turns:
            return self._turns.wait_for(
                lambda: self._entered == 0 and all(thread == me for thread, _ in self._calls.values()), timeout)

    def in_flight(self) -> list[str]:
        """What the calls in flight in other threads are (`call`'s `what`), oldest first."""
        me = threading.get_ident()
        with self._turns:
            return [what for thread, what in self._calls.values() if thread != me]

    def refuse_calls(self) -> list[str]:
        """Take no new call from now (EngineClosed), while turns are still given (the queue being
        processed); returns what the calls in flight in other threads are."""
        with self._turns:
            self._calls_refused = True
        return self.in_flight()

    @contextmanager
    def call(self, what: str) -> Iterator[None]:
        """One call of the engine that writes, in any thread, counted from before it writes anything
        to after it has given back what it held: EngineClosed once `close` was called, and `close`
        waits for it to end (`in_flight` names it meanwhile)."""
        with self._turns:
            if self._closed or self._calls_refused:
                raise EngineClosed()
            self._next_call += 1
            key = self._next_call
            self._calls[key] = (threading.get_ident(), what)
        try:
            yield
        finally:
            with self._turns:
                del self._calls[key]
                self._turns.notify_all()

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


P = ParamSpec("P")
R = TypeVar("R")


def engine_call(method: Callable[P, R]) -> Callable[P, R]:
    """A method of the engine (anything with `user_locks`) that writes: the whole call is one `call`,
    named by the method and the user it is for."""

    @functools.wraps(method)
    def counted(*args: P.args, **kwargs: P.kwargs) -> R:
        host: Any = args[0]
        user = kwargs.get("user_id")
        with host.user_locks.call(method.__name__ if user is None else f"{method.__name__}(user_id={user!r})"):
            return method(*args, **kwargs)

    return counted


__all__ = ["UserLocks", "engine_call"]
