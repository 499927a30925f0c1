"""Engine creation: SQLite (WAL) under the data directory by default, PostgreSQL by URL."""

from __future__ import annotations

import importlib
import json
import os
import time
from types import ModuleType
from typing import Any

from sqlalchemy import event, text
from sqlalchemy.engine import Engine
from sqlmodel import create_engine

from mirix_py.errors import DatabaseGone
from mirix_py.store import tables  # noqa: F401  (registers the tables)
from mirix_py.store.private import private_file


def _json(value: object) -> str:
    """JSON columns as UTF-8 ("—", not "\\u2014": half the bytes for screen titles and the like)."""
    return json.dumps(value, ensure_ascii=False)


def sqlite_dbapi(driver: str = "auto") -> ModuleType:
    """The DB-API module SQLite databases are opened with.

    pysqlite3-binary builds a newer SQLite into the same API as Python's `sqlite3` (which uses the
    system's library: 3.40 on Debian 12), and FTS5 ranks faster in it (benchmarks/docs/fts_ranking.md).
    "auto" takes it where it is installed. One process must open a database file with one library
    only: two copies of SQLite do not see each other's POSIX locks, so everything that opens a data
    dir's database goes through the engine (or this function)."""
    if driver not in ("auto", "pysqlite3", "stdlib"):
        raise ValueError(f"unknown SQLite driver {driver!r}: use auto, pysqlite3 or stdlib")
    if driver != "stdlib":
        try:
            return importlib.import_module("pysqlite3.dbapi2")
        except ImportError:
            if driver == "pysqlite3":
                raise
    return importlib.import_module("sqlite3")


# The first bytes of a SQLite file read through a memory map: a search reads index pages without a
# system call each (benchmarks/docs/search_latency.md, 2026-12-07); address space, not memory.
SQLITE_MMAP_BYTES = 256 * 1024 * 1024


def make_engine(url: str, sqlite_driver: str = "auto") -> Engine:
    if url.startswith("sqlite"):
        path = url.split("///", 1)[-1]
        on_disk = bool(path) and path != ":memory:" and not path.startswith("file:") and "?" not in path
        if on_disk:
            private_file(path)  # 0600 before SQLite opens it: its -wal and -shm take the same mode
        engine = create_engine(url, module=sqlite_dbapi(sqlite_driver),
                               connect_args={"check_same_thread": False, "timeout": 30}, json_serializer=_json)
        if on_disk:
            _refuse_a_file_gone(engine, path)

        @event.listens_for(engine, "connect")
        def _sqlite_pragmas(dbapi_conn, _record):
            cur = dbapi_conn.cursor()
            _into_wal(cur)
            cur.execute("PRAGMA synchronous=NORMAL")
            cur.execute("PRAGMA secure_delete=ON")  # a freed page is zeroed: no deleted memory stays in the file
            cur.execute("PRAGMA foreign_keys=ON")
            cur.execute(f"PRAGMA mmap_size={SQLITE_MMAP_BYTES}")  # pages read in place, not copied by read()
            cur.close()

        return engine
    if url.startswith("postgresql://"):
        url = "postgresql+psycopg://" + url[len("postgresql://"):]
    return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20, json_serializer=_json)


WAL_WAIT_S = 30.0  # as the connection's busy timeout


def _into_wal(cur: Any) -> None:
    """`PRAGMA journal_mode=WAL`, tried again while another process holds a lock on a new file: the
    change takes an exclusive lock, and SQLite answers "database is locked" at once instead of
    waiting (two processes opening one new data dir). Once the file is in WAL the pragma takes no lock."""
    deadline = time.monotonic() + WAL_WAIT_S
    while True:
        try:
            cur.execute("PRAGMA journal_mode=WAL")
            return
        except Exception as exc:  # the driver's OperationalError (sqlite3 or pysqlite3)
            if "locked" not in str(exc) or time.monotonic() >= deadline:
                raise
            time.sleep(0.05)


def _refuse_a_file_gone(engine: Engine, path: str) -> None:
    """Each use of a connection first checks that `path` is still the file the engine opened. An open
    SQLite connection keeps reading and writing a deleted file, so without this a server whose data
    dir was removed answered every write as done, into a file gone when the process ends; a new
    connection would make a fresh empty database in its place."""
    opened = _identity(path)

    @event.listens_for(engine, "checkout")
    def _still_there(_dbapi_conn, _record, _proxy):
        if _identity(path) != opened:
            raise DatabaseGone(path)


def _identity(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return None
    return st.st_dev, st.st_ino


def create_schema(engine: Engine) -> None:
    """Create or upgrade the schema through the migrations (one source of DDL for both backends)."""
    from mirix_py.store.migrations import upgrade

    upgrade(engine)


def database_info(engine: Engine) -> dict[str, str | None]:
    """The database's dialect, and on SQLite the version of the library it is opened with."""
    sqlite = engine.dialect.name == "sqlite"
    return {"database": engine.dialect.name,
            "sqlite": getattr(engine.dialect.dbapi, "sqlite_version", None) if sqlite else None}


def ping(engine: Engine) -> str:
    """Ask the database for `SELECT 1` (raises when it does not answer); returns its dialect name."""
    with engine.connect() as conn:
        conn.execute(text("SELECT 1"))
    return engine.dialect.name
