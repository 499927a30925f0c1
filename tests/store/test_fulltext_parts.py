"""A large user's BM25 search in parts side by side gives the same ranking as one search whole."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

import pytest

import mirix_py.store.sqlite_fulltext as sqlite_fulltext
from mirix_py.store.fulltext import Filters, merge_parts
from mirix_py.store.sqlite_fulltext import SQLiteFullText

T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)
WORDS = ["kayak", "lake", "cold", "grey", "paddle", "trip", "friend", "book", "garden", "tea"]


def test_merge_parts_takes_the_best_k_and_orders_equal_scores_by_their_keys():
    one = [("a", 3.0, (1,)), ("c", 2.0, (5,))]
    two = [("b", 2.0, (2,)), ("d", 2.0, (9,)), ("e", 1.0, (0,))]
    assert merge_parts([one, two], 3) == [("a", 3.0), ("b", 2.0), ("c", 2.0)]
    assert merge_parts([one, two], 10) == [("a", 3.0), ("b", 2.0), ("c", 2.0), ("d", 2.0), ("e", 1.0)]
    assert merge_parts([[], two], 1) == [("b", 2.0)]


@pytest.fixture
def populated(fts_conn):
    """Two users; ada's 600 memories of few words, so equal scores are common, and some undated."""
    rng = random.Random(3)
    fts = SQLiteFullText()
    rows, memory = [], []
    for i in range(700):
        user = "ada" if i < 600 else "bob"
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 4)))
        when = None if i % 7 == 0 else (T0 + timedelta(hours=rng.randint(0, 40))).strftime("%Y-%m-%d %H:%M:%S.%f")
        rows.append((f"m{i:03d}", user, "episodic" if i % 3 else "semantic", text))
        memory.append((f"m{i:03d}", user, "episodic" if i % 3 else "semantic", when, text))
    fts.upsert(fts_conn, rows)
    fts_conn.exec_driver_sql("INSERT INTO memory (id, user_id, memory_type, occurred_at, text) VALUES (?, ?, ?, ?, ?)",
                             memory)
    return fts_conn, fts


@pytest.mark.parametrize("query", ["kayak", "cold grey lake", "tea with a friend", "book garden trip paddle"])
@pytest.mark.parametrize("count", [2, 3])
@pytest.mark.parametrize("k", [1, 10, 30])
def test_parts_merged_equal_the_whole_search(populated, query, count, k):
    conn, fts = populated
    filters = Filters(user_id="ada")
    whole = fts.search(conn, query, filters, k)
    parts = [fts.search_part(conn, query, filters, k, (i, count)) for i in range(count)]
    assert all(parts) and merge_parts(parts, k) == whole
    assert len(whole) == k


def test_parts_keep_a_type_filter(populated):
    conn, fts = populated
    filters = Filters(user_id="ada", memory_types=["semantic"])
    whole = fts.search(conn, "kayak lake", filters, 20)
    assert merge_parts([fts.search_part(conn, "kayak lake", filters, 20, (i, 2)) for i in range(2)], 20) == whole


def test_a_user_is_split_only_when_large_and_without_a_time_window(populated, monkeypatch):
    conn, fts = populated
    assert fts.parts(conn, "kayak lake", Filters(user_id="ada")) == 1
    monkeypatch.setattr(sqlite_fulltext, "PARALLEL_MIN_DOCS", 500)
    monkeypatch.setattr(sqlite_fulltext.os, "cpu_count", lambda: 2)
    fresh = SQLiteFullText()  # the count is cached per index
    assert fresh.parts(conn, "kayak lake", Filters(user_id="ada")) == 2
    assert fresh.parts(conn, "kayak lake", Filters(user_id="bob")) == 1
    assert fresh.parts(conn, "kayak lake", Filters(user_id="ada", start=T0)) == 1
    with pytest.raises(ValueError):
        fresh.search_part(conn, "kayak", Filters(user_id="ada", start=T0), 5, (0, 2))


def test_the_searcher_ranks_the_same_whole_or_in_parts(tmp_path, monkeypatch):
    from mirix_py.engine import Mirix
    from mirix_py.tools.ops import InsertOp
    from mirix_py.records import EpisodicMemory

    rng = random.Random(5)
    with Mirix(tmp_path / "data", embedder=None) as mx:
        mx.store.apply([InsertOp(memory=EpisodicMemory(
            user_id="ada", actor="me", occurred_at=T0 + timedelta(minutes=rng.randint(0, 500)),
            summary=" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 5))))) for _ in range(300)],
            user_id="ada", actor="seed")
        queries = ["kayak trip", "cold tea", "a book in the garden", "paddle"]
        whole = [[h.memory.id for h in mx.search(q, user_id="ada", limit=10)] for q in queries]
        monkeypatch.setattr(sqlite_fulltext, "PARALLEL_MIN_DOCS", 100)
        monkeypatch.setattr(sqlite_fulltext.os, "cpu_count", lambda: 2)
        mx.store.fulltext = SQLiteFullText()
        with mx.store.engine.connect() as conn:
            assert mx.store.fulltext.parts(conn, "kayak lake", Filters(user_id="ada")) == 2
        split = [[h.memory.id for h in mx.search(q, user_id="ada", limit=10)] for q in queries]
    assert split == whole and all(len(ids) == 10 for ids in whole)


def test_a_named_questions_two_full_text_legs_run_whole_and_rank_the_same(tmp_path, monkeypatch, embedder):
    from mirix_py.engine import Mirix
    from mirix_py.tools.ops import InsertOp
    from mirix_py.records import EpisodicMemory

    rng = random.Random(7)
    with Mirix(tmp_path / "data", embedder=embedder) as mx:
        mx.store.apply([InsertOp(memory=EpisodicMemory(
            user_id="ada", actor=rng.choice(["Jon", "Gina"]), occurred_at=T0 + timedelta(minutes=i),
            summary=" ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 5))))) for i in range(300)],
            user_id="ada", actor="seed")
        queries = ["Did Jon take the kayak trip?", "cold tea in the garden"]
        small = [[h.memory.id for h in mx.search(q, user_id="ada", limit=10)] for q in queries]
        monkeypatch.setattr(sqlite_fulltext, "PARALLEL_MIN_DOCS", 100)
        monkeypatch.setattr(sqlite_fulltext.os, "cpu_count", lambda: 2)
        mx.store.fulltext = large = SQLiteFullText()
        parts_run: list[str] = []
        plain_part = large.search_part
        monkeypatch.setattr(large, "search_part", lambda conn, q, *a: parts_run.append(q) or plain_part(conn, q, *a))
        assert [h.memory.id for h in mx.search(queries[0], user_id="ada", limit=10)] == small[0]
        assert parts_run == []  # a leg each on the two workers: both cores taken without parts
        assert [h.memory.id for h in mx.search(queries[1], user_id="ada", limit=10)] == small[1]
        assert parts_run == [queries[1], queries[1]]  # names no one: its one full-text leg in two parts
