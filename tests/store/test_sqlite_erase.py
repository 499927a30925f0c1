"""FTS5's secure-delete for `delete_user` (`store.sqlite_erase`): a database another writer holds is
busy, not a SQLite without the feature."""

from __future__ import annotations

import pytest
from sqlalchemy.exc import OperationalError

from mirix_py.store.db import make_engine
from mirix_py.store.sqlite_erase import FTS_TABLES, start_erasing


@pytest.fixture
def engine(tmp_path):
    engine = make_engine(f"sqlite:///{tmp_path / 'erase.db'}")
    with engine.begin() as conn:
        for table in FTS_TABLES:
            conn.exec_driver_sql(f"CREATE VIRTUAL TABLE {table} USING fts5(text)")
    yield engine
    engine.dispose()


def test_secure_delete_is_set_on_every_fulltext_table(engine):
    with engine.connect() as conn:
        conn.exec_driver_sql("BEGIN IMMEDIATE")
        assert start_erasing(conn) == list(FTS_TABLES)
        conn.rollback()


def test_a_database_another_writer_holds_raises_instead_of_passing_for_a_missing_feature(engine, caplog):
    """The busy error was taken for "secure-delete is not available": the deleted words would have
    stayed in the index, and the transaction went on to fail later."""
    with engine.connect() as writer, engine.connect() as deleting:
        writer.exec_driver_sql("BEGIN IMMEDIATE")
        deleting.exec_driver_sql("PRAGMA busy_timeout = 0")  # busy at once, whatever the wait
        with pytest.raises(OperationalError, match="locked"):
            start_erasing(deleting)
        writer.rollback()
    assert "not available" not in caplog.text
