"""The SQLite library a database is opened with."""

from __future__ import annotations

import importlib.util
import sqlite3

import pytest

from mirix_py.store.db import make_engine, sqlite_dbapi

HAS_PYSQLITE3 = importlib.util.find_spec("pysqlite3") is not None


def test_stdlib_is_pythons_sqlite3():
    assert sqlite_dbapi("stdlib") is sqlite3


@pytest.mark.skipif(not HAS_PYSQLITE3, reason="pysqlite3-binary has wheels for Linux x86_64 only")
def test_auto_takes_pysqlite3_where_installed():
    module = sqlite_dbapi("auto")
    assert module.__name__ == "pysqlite3.dbapi2"
    assert module.sqlite_version_info >= (3, 45)  # FTS5 ranks faster than in the system's 3.40


def test_an_unknown_driver_is_refused():
    with pytest.raises(ValueError, match="unknown SQLite driver"):
        sqlite_dbapi("sqlite4")


@pytest.mark.parametrize("driver", ["stdlib", "auto"])
def test_a_store_works_on_either_library(tmp_path, driver, monkeypatch):
    from mirix_py.engine import Mirix

    monkeypatch.setenv("MIRIX_SQLITE_DRIVER", driver)
    with Mirix(tmp_path / "data", embedder=None) as mx:
        mx.add("My sister Mia is a marine biologist in Faro.", user_id="ada")
        assert mx.search("marine biologist", user_id="ada", method="bm25")
        assert mx.describe()["sqlite"] == sqlite_dbapi(driver).sqlite_version
    engine = make_engine(f"sqlite:///{tmp_path / 'data' / 'mirix.db'}", driver)
    assert engine.dialect.dbapi is sqlite_dbapi(driver)
    engine.dispose()


def test_a_database_file_deleted_under_the_engine_is_refused_not_written(tmp_path, embedder):
    """An open SQLite connection reads and writes a deleted file on: every write would be answered
    as done and be gone when the process ends."""
    import os

    from mirix_py import Mirix
    from mirix_py.errors import DatabaseGone

    with Mirix(tmp_path / "data", embedder=embedder) as mx:
        mx.add("Carla planted tomatoes.", user_id="u")
        db = tmp_path / "data" / "mirix.db"
        os.replace(db, tmp_path / "moved.db")  # the data dir stays: a new connection would make a new file
        with pytest.raises(DatabaseGone, match="was deleted or replaced"):
            mx.add("Carla bought seeds.", user_id="u")
        assert not db.exists() or os.path.getsize(db) == 0



def test_a_relative_data_dir_stays_where_it_was_opened(tmp_path, embedder, monkeypatch):
    """New connections after a change of working directory open the same files."""
    from mirix_py import Mirix

    monkeypatch.chdir(tmp_path)
    with Mirix("data", embedder=embedder) as mx:
        mx.add("Carla planted tomatoes.", user_id="u")
        monkeypatch.chdir(tmp_path.parent)
        assert mx.add("Carla bought seeds.", user_id="u").status.value == "processed"
        assert len(mx.list(user_id="u")) >= 2 and mx.settings.data_dir == tmp_path / "data"


def test_a_deleted_user_leaves_no_byte_of_their_words_in_the_data_dir(tmp_path, embedder):
    """Deleted rows stayed in free pages, the write-ahead log and FTS5's index segments (seven copies
    of a deleted user's screen text were found in the file)."""
    from mirix_py import Mirix

    with Mirix(tmp_path / "data", embedder=embedder) as mx:
        for i in range(30):
            mx.add(f"Filler note {i}: Bob likes gardening and tomatoes number {i}.", user_id="bob")
        mx.add("Diagnosis letter for Philomena Vasquezoyelaran about the zyxwquartz treatment.", user_id="ada")
        mx.add("Philomena Vasquezoyelaran visited Quillbrook clinic twice.", user_id="ada", wait=False)
        mx.flush()
        mx.delete_user("ada")
        assert mx.search("tomatoes", user_id="bob")

        def found() -> list[str]:
            words = (b"vasquezoyelaran", b"zyxwquartz", b"quillbrook")
            return [str(f) for f in (tmp_path / "data").rglob("*") if f.is_file()
                    and any(w in f.read_bytes().lower() for w in words)]

        assert found() == []
    assert found() == []
