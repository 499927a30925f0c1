"""SQLite full text: rows live in per-user rowid ranges; colliding home slots and colliding user
ranges still give every memory its own row and every user only their own hits."""

from __future__ import annotations

import pytest
from sqlalchemy import text

from mirix_py.store import sqlite_fulltext
from mirix_py.store.fulltext import Filters
from mirix_py.store.sqlite_fulltext import PROBE_SLOTS, SQLiteFullText


@pytest.fixture
def conn(fts_conn):
    return fts_conn


def _rowids(conn) -> dict[str, int]:
    return {r[1]: int(r[0]) for r in conn.execute(text("SELECT rowid, memory_id FROM memory_fts"))}


def test_rows_sit_in_the_users_range(conn):
    fts = SQLiteFullText()
    fts.upsert(conn, [("m1", "ada", "episodic", "kayaking on the lake"), ("m2", "bob", "episodic", "kayaking alone")])
    rowids = _rowids(conn)
    for mid, user in (("m1", "ada"), ("m2", "bob")):
        low, high = sqlite_fulltext.user_rowid_range(user)
        assert low <= rowids[mid] <= high
    assert [i for i, _ in fts.search(conn, "kayaking", Filters(user_id="ada"), 10)] == ["m1"]
    assert [i for i, _ in fts.search(conn, "kayaking", Filters(user_id="bob"), 10)] == ["m2"]


def test_shared_home_slot_probes_onwards_and_deletes_the_right_row(conn, monkeypatch):
    low, _ = sqlite_fulltext.user_rowid_range("ada")
    monkeypatch.setattr(sqlite_fulltext, "fts_rowid", lambda user_id, memory_id: low + 100)
    fts = SQLiteFullText()
    fts.upsert(conn, [("m1", "ada", "episodic", "red kayak"), ("m2", "ada", "episodic", "blue kayak")])
    fts.upsert(conn, [("m3", "ada", "episodic", "green kayak")])
    fts.upsert(conn, [("m2", "ada", "episodic", "blue kayak, repainted")])  # an update keeps one row
    rowids = _rowids(conn)
    assert sorted(rowids) == ["m1", "m2", "m3"]
    assert len(set(rowids.values())) == 3 and all(low + 100 <= r < low + 100 + PROBE_SLOTS for r in rowids.values())
    fts.delete(conn, [("ada", "m1")])
    assert sorted(_rowids(conn)) == ["m2", "m3"]
    assert sorted(i for i, _ in fts.search(conn, "kayak", Filters(user_id="ada"), 10)) == ["m2", "m3"]
    assert [i for i, _ in fts.search(conn, "repainted", Filters(user_id="ada"), 10)] == ["m2"]


def test_users_sharing_a_range_see_only_their_own_hits(conn, monkeypatch):
    shared = sqlite_fulltext.user_rowid_range("ada")
    monkeypatch.setattr(sqlite_fulltext, "user_rowid_range", lambda user_id: shared)
    fts = SQLiteFullText()
    fts.upsert(conn, [(f"b{i}", "bob", "episodic", "kayak kayak kayak trip") for i in range(5)])
    fts.upsert(conn, [("a1", "ada", "episodic", "a long day with one kayak in it somewhere"),
                      ("a2", "ada", "semantic", "kayak: a small boat")])
    hits = fts.search(conn, "kayak", Filters(user_id="ada"), 3)
    assert sorted(i for i, _ in hits) == ["a1", "a2"]
    assert [i for i, _ in fts.search(conn, "kayak", Filters(user_id="ada", memory_types=["semantic"]), 3)] == ["a2"]
    assert len(fts.search(conn, "kayak", Filters(user_id="bob"), 3)) == 3


def test_rebuild_reindexes_every_memory_row(conn):
    conn.execute(text("INSERT INTO memory (id, user_id, memory_type, text) VALUES ('m1', 'ada', 'episodic', 'kayak'), ('m2', 'bob', 'semantic', 'kayak')"))
    fts = SQLiteFullText()
    fts.upsert(conn, [("stale", "ada", "episodic", "kayak")])
    assert fts.rebuild(conn) == 2
    assert sorted(_rowids(conn)) == ["m1", "m2"]
    assert [i for i, _ in fts.search(conn, "kayak", Filters(user_id="bob"), 5)] == ["m2"]


def test_delete_user_removes_only_that_users_rows_even_in_a_shared_range(conn, monkeypatch):
    shared = sqlite_fulltext.user_rowid_range("ada")
    monkeypatch.setattr(sqlite_fulltext, "user_rowid_range", lambda user_id: shared)
    fts = SQLiteFullText()
    fts.upsert(conn, [(f"a{i}", "ada", "episodic", f"kayak trip {i}") for i in range(40)])
    fts.upsert(conn, [("b1", "bob", "episodic", "kayak lesson"), ("c1", "cy", "semantic", "kayak club")])
    fts.delete_user(conn, "ada")
    assert sorted(_rowids(conn)) == ["b1", "c1"]
    assert fts.search(conn, "kayak", Filters(user_id="ada"), 10) == []
    assert [i for i, _ in fts.search(conn, "kayak", Filters(user_id="bob"), 10)] == ["b1"]
