"""Deleting from SQLite without leaving copies behind: a deleted row's bytes stay in the file's free
pages, in the write-ahead log and in FTS5's index segments until something overwrites them. Every
connection zeroes the pages it frees (`PRAGMA secure_delete`, set in `store.db`); for `delete_user`,
whose promise is that nothing of the user remains on disk, FTS5 also drops the user's tokens from its
index (its `secure-delete` option, then a merge of its segments) and the log is checkpointed and
truncated. Ingestion's own updates leave FTS5 deleting lazily."""

from __future__ import annotations

import logging
from sqlalchemy import text as sql
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import OperationalError

log = logging.getLogger("mirix_py.store")

FTS_TABLES = ("memory_fts", "memory_session")  # every FTS5 table that holds a memory's words


def start_erasing(conn: Connection) -> list[str]:
    """In a SQLite transaction on `conn`: FTS5 drops a deleted row's tokens from its index at once.
    (Every connection zeroes what it frees: `PRAGMA secure_delete` in `store.db`.) Returns the FTS5
    tables set to do so, for `stop_erasing` before the commit."""
    return [table for table in FTS_TABLES if _fts_option(conn, table, 1)]


def stop_erasing(conn: Connection, fts: list[str]) -> None:
    """FTS5 keeps a term whose every row went in its index pages until the segments merge: they are
    merged now; then the tables go back to deleting lazily (ingestion's updates do not pay for it)."""
    for table in FTS_TABLES:
        conn.execute(sql(f"INSERT INTO {table}({table}) VALUES ('optimize')"))
    for table in fts:
        _fts_option(conn, table, 0)


def _fts_option(conn: Connection, table: str, value: int) -> bool:
    """FTS5's secure-delete (SQLite 3.42+): a deleted row's tokens leave the index segments at once.
    False where this SQLite lacks it (the tokens then stay until segments merge); a busy or locked
    database is not a missing feature, and raises."""
    try:
        with conn.begin_nested():
            conn.execute(sql(f"INSERT INTO {table}({table}, rank) VALUES ('secure-delete', :v)"), {"v": value})
        return True
    except OperationalError as exc:
        if _is_busy(exc):
            raise
        log.warning("%s: FTS5 secure-delete is not available in this SQLite (%s): deleted words stay in "
                    "the index until its segments merge", table, exc.orig)
        return False


def _is_busy(exc: OperationalError) -> bool:
    """SQLITE_BUSY or SQLITE_LOCKED (another connection holds the lock), by its code where the driver
    gives it, else by its message."""
    name = getattr(exc.orig, "sqlite_errorname", None)
    if isinstance(name, str):
        return name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED"))
    message = str(exc.orig).lower()
    return "locked" in message or "busy" in message


def truncate_log(engine: Engine) -> bool:
    """Copy the write-ahead log into the database and empty it (the log keeps the pages a delete
    changed, as they were). False when a reader held it: the log empties at a later checkpoint."""
    with engine.connect() as conn:
        busy = conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return not (busy and busy[0])


__all__ = ["FTS_TABLES", "start_erasing", "stop_erasing", "truncate_log"]
