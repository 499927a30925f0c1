"""When memories expire: the rules, as pure functions, and the SQL condition reads share.

A memory past its `expires_at` is not read (search, get, list, the turns shown around a hit) and the
background worker's sweep deletes it (`Maintenance.delete_expired`). A caller sets an expiry on a
memory (`Mirix.update(..., expires_at=...)`, a LangGraph item's `ttl`) or on an input
(`Mirix.add(..., expires_at=...)`, mem0's `expiration_date`): the memories the input's batch writes
then take it, except core blocks, which hold lines of many inputs.

A memory made from several inputs expires only when every one of them does, at the latest of their
expiries: what an input without an expiry said is kept. So an update from such an input clears an
expiry, and one from an expiring input can only put it later.
"""

from __future__ import annotations

from datetime import datetime
from typing import Iterable

from sqlalchemy import ColumnElement, or_
from sqlmodel import col

from mirix_py.records import MemoryType
from mirix_py.store.tables import MemoryRow

# the types an input's expiry reaches: a core block holds lines of many inputs and is never expired
EXPIRING_TYPES: tuple[str, ...] = tuple(t.value for t in MemoryType if t is not MemoryType.core)


def combined(expiries: Iterable[datetime | None]) -> datetime | None:
    """The expiry of what came from sources with these expiries: None (never) when any of them never
    expires, else the latest."""
    latest: datetime | None = None
    for when in expiries:
        if when is None:
            return None
        latest = when if latest is None or when > latest else latest
    return latest


def after_batch(current: datetime | None, *, inserted: bool, batch: Iterable[datetime | None]) -> datetime | None:
    """A memory's expiry once a batch wrote it: `batch` holds the expiries of the batch's inputs it
    cites. A memory the batch inserted takes theirs; one it changed keeps its own in the reckoning."""
    batch = list(batch)
    if not batch:
        return current
    return combined(batch) if inserted else combined([current, *batch])


def has_expired(expires_at: datetime | None, now: datetime) -> bool:
    return expires_at is not None and expires_at <= now


def unexpired(now: datetime) -> ColumnElement[bool]:
    """SQL: the memory has not expired at `now`."""
    at = col(MemoryRow.expires_at)
    return or_(at.is_(None), at > now)
