"""The caller's ids of inputs (`add(..., source_id="conv-26/session_1")`). Every memory of such an
input cites the id beside the input's own, and it says nothing: a turn citing its input, the tag and
its own message id is one thing said, not a summary of two (`summaries.sums_up`). An input's tag
never changes, so one read is kept."""

from __future__ import annotations

import threading
from typing import Iterable, Sequence

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


def tags_of(conn: Connection, input_ids: Iterable[str]) -> dict[str, str | None]:
    """Input id -> its caller's id (None when it has none), for the logged ones among these."""
    ids = list(dict.fromkeys(input_ids))
    found: dict[str, str | None] = {}
    for n in range(0, len(ids), _CHUNK):
        rows = conn.execute(select(col(InputRow.id), col(InputRow.source_id))
                            .where(col(InputRow.id).in_(ids[n:n + _CHUNK]))).all()
        found.update({input_id: tag for input_id, tag in rows})
    return found


def cited_tags(conn: Connection, source_ids: Iterable[Sequence[str]]) -> frozenset[str]:
    """The caller's ids of the inputs these memories cite (read inside a write's transaction)."""
    return frozenset(t for t in tags_of(conn, cited_inputs(source_ids)).values() if t)


class InputTags:
    """`tags_of` for search and chat, each input read once."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self._kept: dict[str, str | None] = {}
        self._lock = threading.Lock()

    def __call__(self, input_ids: Iterable[str]) -> frozenset[str]:
        """The caller's ids of these inputs."""
        wanted = set(input_ids)
        with self._lock:
            known = {i: self._kept[i] for i in wanted if i in self._kept}
        missing = wanted - known.keys()
        if missing:
            with self.engine.connect() as conn:
                found = tags_of(conn, missing)
            found = {i: found.get(i) for i in missing}  # a memory cites only logged inputs (an import logs
            # those it brings, then `forget`s them): a miss stays one
            known.update(found)
            with self._lock:
                if len(self._kept) + len(found) > MAX_KEPT:
                    for stale in list(self._kept)[:len(self._kept) // 2]:
                        del self._kept[stale]
                self._kept.update(found)
        return frozenset(t for t in known.values() if t)

    def forget(self, input_ids: Iterable[str]) -> None:
        """Read these inputs again next time: an import has just logged them (a miss was kept)."""
        with self._lock:
            for input_id in input_ids:
                self._kept.pop(input_id, None)

    def cited(self, source_ids: Iterable[Sequence[str]]) -> frozenset[str]:
        """The caller's ids of the inputs these memories cite."""
        return self(cited_inputs(source_ids))
