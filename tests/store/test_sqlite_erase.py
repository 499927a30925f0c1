"""Taking deleted words out of SQLite's full-text index (`store.sqlite_erase`) for an erasing write and
`delete_user`: none of them stays in the file, and the data dir still opens with the stdlib driver
(an SQLite older than 3.42, which FTS5's `secure-delete` option locked out)."""

from __future__ import annotations

import importlib.util
import sqlite3

import pytest

from mirix_py.store.db import make_engine
from mirix_py.store.sqlite_erase import FTS_TABLES, start_erasing, stop_erasing

HAS_PYSQLITE3 = importlib.util.find_spec("pysqlite3") is not None
SECRET = "zorblattquix"


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "erase.db"
    engine = make_engine(f"sqlite:///{path}")
    with engine.begin() as conn:
        for table in FTS_TABLES:
            conn.exec_driver_sql(f"CREATE VIRTUAL TABLE {table} USING fts5(text)")
            conn.exec_driver_sql(f"INSERT INTO {table} VALUES ('the harbour ferry leaves at nine')")
            conn.exec_driver_sql(f"INSERT INTO {table} VALUES ('my PIN is {SECRET}')")
    yield path, engine
    engine.dispose()


def test_the_deleted_rows_tokens_leave_every_fulltext_table_and_older_sqlite_still_reads_it(db):
    path, engine = db
    with engine.connect() as conn:
        conn.exec_driver_sql("BEGIN IMMEDIATE")
        fts = start_erasing(conn)
        for table in FTS_TABLES:
            conn.exec_driver_sql(f"DELETE FROM {table} WHERE {table} MATCH '{SECRET}'")
        stop_erasing(conn, fts)
        conn.commit()
    assert fts == list(FTS_TABLES)
    with engine.connect() as conn:
        conn.exec_driver_sql("PRAGMA wal_checkpoint(TRUNCATE)")
    engine.dispose()
    assert SECRET.encode() not in path.read_bytes()
    with sqlite3.connect(path) as older:  # Python's own SQLite
        for table in FTS_TABLES:
            assert older.execute(f"SELECT count(*) FROM {table} WHERE {table} MATCH 'ferry'").fetchone() == (1,)
    older.close()


def _erase_a_turn(mx) -> None:
    added = mx.add("My bank PIN is kept in Zorblatt street.", user_id="kim")
    mx.delete(next(c.memory_id for c in added.changes if c.memory_type.value == "episodic"),
              user_id="kim", erase=True)


def _delete_a_user(mx) -> None:
    mx.add("I like coffee.", user_id="bob")
    mx.delete_user("bob")


@pytest.mark.skipif(not HAS_PYSQLITE3, reason="without pysqlite3 the default driver is the stdlib one")
@pytest.mark.parametrize("deleting", [_erase_a_turn, _delete_a_user], ids=["erase", "delete_user"])
def test_a_data_dir_opens_adds_searches_and_chats_with_the_stdlib_driver_after(tmp_path, embedder, monkeypatch,
                                                                              deleting):
    from mirix_py.engine import Mirix

    with Mirix(tmp_path / "data", embedder=embedder) as mx:
        mx.add("I like green tea.", user_id="kim")
        deleting(mx)
    monkeypatch.setenv("MIRIX_SQLITE_DRIVER", "stdlib")
    with Mirix(tmp_path / "data", embedder=embedder) as mx:
        assert mx.describe()["sqlite"] == sqlite3.sqlite_version
        assert mx.add("I like orange juice.", user_id="kim").changes
        assert any("tea" in h.text for h in mx.search("green tea", user_id="kim", method="bm25"))
        assert mx.chat("What do I like to drink?", user_id="kim", remember=False).answer


@pytest.mark.skipif(not HAS_PYSQLITE3, reason="the newer FTS5 format is written and read with pysqlite3")
def test_doctor_finds_and_repair_rewrites_a_fulltext_index_older_sqlite_cannot_read(tmp_path, embedder, monkeypatch):
    """An erase or delete_user of an earlier version (FTS5's secure-delete) left the index in format 5:
    `doctor` names the tables, `--repair` writes them again, and the stdlib driver then searches."""
    import pysqlite3.dbapi2 as pysqlite3

    from mirix_py.engine import Mirix
    from mirix_py.upkeep.doctor import diagnose, repair

    with Mirix(tmp_path / "data", embedder=embedder) as mx:
        mx.add("I like green tea.", user_id="kim")
        mx.add("I live in Lisbon.", user_id="kim")
    raw = pysqlite3.connect(tmp_path / "data" / "mirix.db")
    for table in FTS_TABLES:  # what the earlier erase did: the option on, a row deleted
        raw.execute(f"INSERT INTO {table}({table}, rank) VALUES ('secure-delete', 1)")
        raw.execute(f"DELETE FROM {table} WHERE rowid = (SELECT max(rowid) FROM {table})")
        raw.execute(f"INSERT INTO {table}({table}, rank) VALUES ('secure-delete', 0)")
    raw.commit()
    raw.close()

    with Mirix(tmp_path / "data", embedder=embedder) as mx:
        found = diagnose(mx.store, tmp_path / "data")
        assert found.fulltext_newer_format == list(FTS_TABLES) and not found.clean
        fixed = repair(mx.store, found, data_dir=tmp_path / "data")
        assert fixed.repaired["fulltext_format_rewritten"] == 2 and fixed.fulltext_newer_format == []
    monkeypatch.setenv("MIRIX_SQLITE_DRIVER", "stdlib")
    with Mirix(tmp_path / "data", embedder=embedder) as mx:
        assert any("tea" in h.text for h in mx.search("green tea", user_id="kim", method="bm25"))
        assert any("Lisbon" in h.text for h in mx.search("Lisbon", user_id="kim", method="bm25"))
