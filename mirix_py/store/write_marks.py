"""Read-your-writes on a streaming replica: per user, where the primary's write-ahead log stood after
that user's last write through this engine. A search reads the replica once the replica has replayed
past that point and the primary until then, so a caller never misses its own write and never waits
for replication; writes made by other processes are seen once the replica replays them."""

from __future__ import annotations

import threading

from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine

_WRITTEN = text("SELECT CAST(pg_current_wal_insert_lsn() AS text)")
_REPLAYED = text("SELECT CAST(pg_last_wal_replay_lsn() AS text)")


def lsn_value(lsn: str) -> int:
    """A PostgreSQL log position ('16/B374D848') as a number, so two positions compare."""
    high, _, low = lsn.partition("/")
    if not low:
        raise ValueError(f"not a log position: {lsn!r}")
    return (int(high, 16) << 32) | int(low, 16)


class WriteMarks:
    """What the replica must have replayed before a user's searches may read it (`write_marks` of
    `MemoryStore`): the primary's insert position, read on the writing connection after each commit
    (at or past the commit's own record, which an asynchronous commit may not have flushed yet)."""

    def __init__(self, replica: Engine) -> None:
        self.replica = replica
        self._marks: dict[str, int] = {}  # user -> log position of the user's last write
        self._lock = threading.Lock()
        self.kept_on_primary = 0  # reads (searches, chats, /context) sent to the primary since the engine opened

    def wrote(self, conn: Connection, user_id: str) -> None:
        """Called after a commit of `user_id`'s memories on the primary's connection `conn`."""
        position = lsn_value(conn.execute(_WRITTEN).scalar_one())
        with self._lock:
            self._marks[user_id] = max(position, self._marks.get(user_id, 0))

    def pending(self, user_id: str) -> bool:
        """True while the replica has not replayed `user_id`'s last write: read the primary. One query
        on the replica for a user with a write outstanding, none otherwise."""
        with self._lock:
            mark = self._marks.get(user_id)
        if mark is None:
            return False
        with self.replica.connect() as conn:
            replayed = conn.execute(_REPLAYED).scalar()
        # NULL: the server is not in recovery (a promoted replica, or the primary itself): it holds every write
        if replayed is not None and lsn_value(replayed) < mark:
            with self._lock:
                self.kept_on_primary += 1
            return True
        with self._lock:
            if self._marks.get(user_id) == mark:  # a newer write meanwhile keeps its own mark
                del self._marks[user_id]
        return False
