"""Log positions on a streaming replica, and read-your-writes: per user, where the primary's
write-ahead log stood after that user's last write through this engine. A search reads the replica
once the replica has replayed past that point and the primary until then, so a caller never misses
its own write and never waits for replication; writes made by other processes are seen once the
replica replays them."""

from __future__ import annotations

import threading

from sqlalchemy import text
from sqlalchemy.engine import Connection, Engine

# The insert position, not pg_current_wal_lsn() (written out): with synchronous_commit off a commit
# returns before its record is written, so the write position can stop short of it.
_INSERTED = text("SELECT CAST(pg_current_wal_insert_lsn() AS text), CAST(current_setting('wal_block_size') AS int), "
                 "pg_size_bytes(current_setting('wal_segment_size'))")
_REPLAYED = text("SELECT CAST(pg_last_wal_replay_lsn() AS text)")
SHORT_PAGE_HEADER = 24  # bytes of a log page's header (PostgreSQL's SizeOfXLogShortPHD)
LONG_PAGE_HEADER = 40  # the header of a segment's first page (SizeOfXLogLongPHD)


def lsn_value(lsn: str) -> int:
    """A PostgreSQL log position ('16/B374D848') as a number, so two positions compare."""
    high, _, low = lsn.partition("/")
    if not low:
        raise ValueError(f"not a log position: {lsn!r}")
    return (int(high, 16) << 32) | int(low, 16)


def lsn_text(value: int) -> str:
    """A log position as PostgreSQL writes it ('16/B374D848'): the token a caller carries between processes."""
    return f"{value >> 32:X}/{value & 0xFFFFFFFF:X}"


def record_end(inserted: int, page_size: int, segment_size: int) -> int:
    """Where the last record the primary inserted ends, from its insert position: at a page's start
    that position points past the page's header, while a replica that has replayed every record
    stops before it (so an idle primary would read as a header's bytes ahead for ever)."""
    if inserted % segment_size == LONG_PAGE_HEADER:
        return inserted - LONG_PAGE_HEADER
    if inserted % page_size == SHORT_PAGE_HEADER:
        return inserted - SHORT_PAGE_HEADER
    return inserted


def inserted_position(conn: Connection) -> int:
    """The end of the primary's log as inserted: at or past the record of every commit made so far,
    flushed yet or not. What a replica must have replayed to hold those commits."""
    inserted, page_size, segment_size = conn.execute(_INSERTED).one()
    return record_end(lsn_value(inserted), page_size, segment_size)


def replayed_position(replica: Engine) -> int | None:
    """The replica's replay position; None when it is not in recovery (a promoted replica, or the
    primary itself), which holds every write."""
    with replica.connect() as conn:
        replayed = conn.execute(_REPLAYED).scalar()
    return None if replayed is None else lsn_value(replayed)


def replica_behind(primary: Engine, replica: Engine) -> int | None:
    """Bytes of the primary's log the replica has not replayed yet (0: it holds every commit made
    before the call, as read-your-writes' marks count them); None when the replica is not in
    recovery, so has no replay position to tell."""
    with primary.connect() as conn:
        inserted = inserted_position(conn)
    replayed = replayed_position(replica)
    return None if replayed is None else max(0, inserted - replayed)


class WriteMarks:
    """What the replica must have replayed before a user's searches may read it (`write_marks` of
    `MemoryStore`): the primary's insert position, read on the writing connection after each commit
    (at or past the commit's own record, which an asynchronous commit may not have flushed yet)."""

    def __init__(self, replica: Engine, *, prune_at: int = 4096) -> None:
        """`prune_at`: marks held before those the replica has passed are dropped (users who write
        and never search would otherwise keep one each for the life of the process)."""
        self.replica = replica
        self._marks: dict[str, int] = {}  # user -> log position of the user's last write
        self._lock = threading.Lock()
        self._prune_at = self._least_prune = prune_at
        self.kept_on_primary = 0  # reads (searches, chats, /context) sent to the primary since the engine opened

    def wrote(self, conn: Connection, user_id: str) -> None:
        """Called after a commit of `user_id`'s memories on the primary's connection `conn`."""
        position = inserted_position(conn)
        with self._lock:
            self._marks[user_id] = max(position, self._marks.get(user_id, 0))
            crowded = len(self._marks) >= self._prune_at
        if crowded:
            self._prune()

    def held(self) -> int:
        """How many users have a write the replica may not have replayed."""
        with self._lock:
            return len(self._marks)

    def position(self, user_id: str) -> str | None:
        """Where the primary's log stood after `user_id`'s last write through this engine, while this
        engine holds a mark of it (None once a read found the replica past it): what another process's
        read waits for (`Readers.side`'s `after`)."""
        with self._lock:
            mark = self._marks.get(user_id)
        return None if mark is None else lsn_text(mark)

    def _prune(self) -> None:
        try:
            replayed = replayed_position(self.replica)
        except Exception:  # the replica is down: keep every mark, try again after as many more
            replayed = 0
        with self._lock:
            if replayed is None:
                self._marks.clear()
            else:
                self._marks = {user: mark for user, mark in self._marks.items() if mark > replayed}
            # a replica far behind keeps most marks: the next prune waits until they have doubled
            self._prune_at = max(self._least_prune, 2 * len(self._marks))

    def pending(self, user_id: str) -> bool:
        """True while the replica has not replayed `user_id`'s last write: read the primary. One query
        on the replica for a user with a write outstanding, none otherwise."""
        with self._lock:
            mark = self._marks.get(user_id)
        if mark is None:
            return False
        replayed = replayed_position(self.replica)
        if replayed is not None and replayed < mark:
            with self._lock:
                self.kept_on_primary += 1
            return True
        with self._lock:
            if self._marks.get(user_id) == mark:  # a newer write meanwhile keeps its own mark
                del self._marks[user_id]
        return False
