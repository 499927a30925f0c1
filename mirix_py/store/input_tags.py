"""The caller's ids of inputs (`add(..., source_id="conv-26/session_1")`). Every memory of such an
input cites the id beside the input's own, and it says nothing: a turn citing its input, the tag and
its own message id is one thing said, not a summary of two (`summaries.sums_up`). Only the user's
own inputs are read for their memories: a memory may cite any id (a caller's `source_ids`), and
another user's input would let that user's tag rank this one's memories. An input's tag and user
never change, so one read is kept."""

from __future__ import annotations

import threading
from typing import Iterable, NamedTuple, Sequence

from sqlalchemy import select
from sqlalchemy.engine import Connection, Engine
from sqlmodel import col

from mirix_py.store.questions import INPUT_PREFIX
from mirix_py.store.tables import InputRow

MAX_KEPT = 200_000  # inputs whose tag is kept in memory; the oldest half is dropped past it
_CHUNK = 500  # ids per IN (...)


def cited_inputs(source_ids: Iterable[Sequence[str]]) -> set[str]:
    """The input ids among these memories' cited ids."""
    return {s for cited in source_ids for s in cited or () if s.startswith(INPUT_PREFIX)}


class LoggedTag(NamedTuple):
    """A logged input's user and its caller's id."""

    user_id: str
    tag: str | None  # None when the input was added without one


def logged_tags(conn: Connection, input_ids: Iterable[str]) -> dict[str, LoggedTag]:
    """Input id -> its user and caller's id, for the logged ones among these (by id only: the user
    is checked on the rows read, whoever's memories cite them)."""
    ids = list(dict.fromkeys(input_ids))
    found: dict[str, LoggedTag] = {}
    for n in range(0, len(ids), _CHUNK):
        rows = conn.execute(select(col(InputRow.id), col(InputRow.user_id), col(InputRow.source_id))
                            .where(col(InputRow.id).in_(ids[n:n + _CHUNK]))).all()
        found.update({input_id: LoggedTag(owner, tag) for input_id, owner, tag in rows})
    return found


def tags_of(conn: Connection, input_ids: Iterable[str], *, user_id: str) -> dict[str, str | None]:
    """Input id -> its caller's id (None when it has none), for the user's own logged inputs among these."""
    return {i: logged.tag for i, logged in logged_tags(conn, input_ids).items() if logged.user_id == user_id}


def cited_tags(conn: Connection, source_ids: Iterable[Sequence[str]], *, user_id: str) -> frozenset[str]:
    """The caller's ids of the user's own inputs these memories of the user cite (read inside a write's
    transaction)."""
    return frozenset(t for t in tags_of(conn, cited_inputs(source_ids), user_id=user_id).values() if t)


def cited_tags_by_user(conn: Connection, source_ids: Iterable[Sequence[str]]) -> dict[str, frozenset[str]]:
    """User -> the caller's ids of their own inputs among those these memories (of any users) cite."""
    by_user: dict[str, set[str]] = {}
    for logged in logged_tags(conn, cited_inputs(source_ids)).values():
        if logged.tag:
            by_user.setdefault(logged.user_id, set()).add(logged.tag)
    return {user_id: frozenset(tags) for user_id, tags in by_user.items()}


class InputTags:
    """`tags_of` for search and chat, each input read once (for every user: its user is kept with it)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._kept: dict[str, LoggedTag | None] = {}  # None: no such input logged
        self._lock = threading.Lock()

    def __call__(self, input_ids: Iterable[str], *, user_id: str) -> frozenset[str]:
        """The caller's ids of the user's own inputs among these."""
        wanted = set(input_ids)
        with self._lock:
            known = {i: self._kept[i] for i in wanted if i in self._kept}
        missing = wanted - known.keys()
        if missing:
            with self.engine.connect() as conn:
                logged = logged_tags(conn, missing)
            found = {i: logged.get(i) for i in missing}  # a memory cites only logged inputs (an import logs
            # those it brings, then `forget`s them): a miss stays one
            known.update(found)
            with self._lock:
                if len(self._kept) + len(found) > MAX_KEPT:
                    for stale in list(self._kept)[:len(self._kept) // 2]:
                        del self._kept[stale]
                self._kept.update(found)
        return frozenset(k.tag for k in known.values() if k is not None and k.user_id == user_id and k.tag)

    def forget(self, input_ids: Iterable[str]) -> None:
        """Read these inputs again next time: an import has just logged them (a miss was kept)."""
        with self._lock:
            for input_id in input_ids:
                self._kept.pop(input_id, None)

    def cited(self, source_ids: Iterable[Sequence[str]], *, user_id: str) -> frozenset[str]:
        """The caller's ids of the user's own inputs these memories of the user cite."""
        return self(cited_inputs(source_ids), user_id=user_id)
