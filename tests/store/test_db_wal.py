"""A new SQLite file put into WAL while another process holds a lock on it: the pragma is tried again
instead of failing the open with "database is locked" (`store.db._into_wal`)."""

from __future__ import annotations

import sqlite3

import pytest

from mirix_py.store import db


class _Cursor:
    """Answers the pragma as SQLite does while another process holds the new file: locked, `busy` times."""

    def __init__(self, busy: int, error: str = "database is locked") -> None:
        self.busy, self.error, self.calls = busy, error, 0

    def execute(self, sql: str) -> None:
        self.calls += 1
        if self.calls <= self.busy:
            raise sqlite3.OperationalError(self.error)


def test_the_pragma_is_tried_again_while_the_file_is_locked():
    cursor = _Cursor(busy=3)
    db._into_wal(cursor)
    assert cursor.calls == 4


def test_another_error_is_raised_at_once():
    cursor = _Cursor(busy=1, error="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O"):
        db._into_wal(cursor)
    assert cursor.calls == 1
