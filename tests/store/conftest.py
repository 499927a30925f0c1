"""Fixtures shared by the store tests."""

from __future__ import annotations

import pytest
from sqlalchemy import create_engine, text


@pytest.fixture
def fts_engine(tmp_path):
    """A SQLite file holding the engine's FTS5 table and the columns of `memory` a search orders
    ties by (empty unless a test fills it)."""
    engine = create_engine(f"sqlite:///{tmp_path / 'fts.db'}")
    with engine.begin() as c:
        c.execute(text("CREATE VIRTUAL TABLE memory_fts USING fts5("
                       "text, near, ukey, mtype, memory_id UNINDEXED, tokenize='porter unicode61')"))
        c.execute(text("CREATE TABLE memory (id TEXT PRIMARY KEY, user_id TEXT, memory_type TEXT, occurred_at TEXT, "
                       "created_at TEXT, text TEXT, input_id TEXT)"))
    yield engine
    engine.dispose()


@pytest.fixture
def fts_conn(fts_engine):
    """A connection, in a transaction, to `fts_engine`'s file."""
    with fts_engine.begin() as c:
        yield c
