"""Deleting from SQLite without leaving copies behind: a deleted row's bytes stay in the file's free
pages, in the write-ahead log and in FTS5's index segments until something overwrites them. Every
connection zeroes what it deletes (`PRAGMA secure_delete`, set in `store.db`); an erasing write and
`delete_user`, whose promise is that none of the words remain on disk, also merge each FTS5 index's
segments into one before their commit ('optimize': the index is written again without the deleted
rows' tokens, and the old segments' rows are zeroed as they go), and the log is then checkpointed and
truncated. FTS5's own `secure-delete` option is not used: it raises the table's file format to one
SQLite before 3.42 refuses to read ("invalid fts5 file format"), so the data dir would break under the
stdlib driver or on a machine without pysqlite3. Ingestion's own updates leave FTS5 deleting lazily."""

from __future__ import annotations

from sqlalchemy import text as sql
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import OperationalError

FTS_TABLES = ("memory_fts", "memory_session")  # every FTS5 table that holds a memory's words


def start_erasing(conn: Connection) -> list[str]:
    """In a SQLite transaction on `conn`: what it deletes is zeroed, whatever the connection was
    opened with. Returns the FTS5 tables whose deleted tokens `stop_erasing` takes out before the commit."""
    conn.exec_driver_sql("PRAGMA secure_delete=ON")
    return list(FTS_TABLES)


def stop_erasing(conn: Connection, fts: list[str]) -> None:
    """FTS5 keeps a deleted row's tokens in its index segments (and writes them again, as deletion
    marks) until the segments merge: they are merged now, into one segment without them."""
    for table in fts:
        conn.execute(sql(f"INSERT INTO {table}({table}) VALUES ('optimize')"))


FTS5_FORMAT = 4  # the FTS5 file format every SQLite reads; `secure-delete` made it 5 (3.42+ only)


def newer_format(engine: Engine) -> list[str]:
    """The FTS5 tables in a newer file format than SQLite before 3.42 reads: an erase or `delete_user`
    of versions that used FTS5's `secure-delete` wrote them so, and the stdlib driver then fails on
    every search ("invalid fts5 file format"). Their config rows are plain tables: any SQLite reads them."""
    found = []
    with engine.connect() as conn:
        for table in FTS_TABLES:
            try:
                version = conn.execute(sql(f"SELECT v FROM {table}_config WHERE k = 'version'")).scalar()
            except OperationalError:  # no such table: a store made before it
                continue
            if version is not None and int(version) > FTS5_FORMAT:
                found.append(table)
    return found


def write_format_again(engine: Engine, tables: list[str]) -> int:
    """Rebuild these FTS5 tables from their rows: 'rebuild' writes them in the format every SQLite reads.
    It needs a SQLite that reads the newer one (3.42+, the default driver); an older one raises."""
    with engine.begin() as conn:
        for table in tables:
            conn.execute(sql(f"INSERT INTO {table}({table}) VALUES ('rebuild')"))
    return len(tables)


def truncate_log(engine: Engine) -> bool:
    """Copy the write-ahead log into the database and empty it (the log keeps the pages a delete
    changed, as they were). False when a reader held it: the log empties at a later checkpoint."""
    with engine.connect() as conn:
        busy = conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return not (busy and busy[0])


__all__ = ["FTS5_FORMAT", "FTS_TABLES", "newer_format", "start_erasing", "stop_erasing", "truncate_log",
           "write_format_again"]
