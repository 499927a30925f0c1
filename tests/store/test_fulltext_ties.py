"""A group of equal BM25 scores at the cut comes back whole, from one query, on SQLite; and the
search's order of a tied group does not depend on the index (`Searcher` settles it)."""

from __future__ import annotations

import pytest

from mirix_py.store.fulltext import Filters, SQLiteFullText, through_ties


@pytest.fixture
def conn(fts_conn):
    return fts_conn


def test_through_ties_keeps_the_group_at_the_cut():
    scored = [("a", 3.0), ("b", 2.0), ("c", 2.0), ("d", 2.0), ("e", 1.0)]
    assert through_ties(scored, 2) == scored[:4]
    assert through_ties(scored, 4) == scored[:4]
    assert through_ties(scored, 1) == scored[:1]
    assert through_ties(scored[:2], 5) == scored[:2]


def test_a_tied_group_longer_than_twice_k_comes_back_whole(conn):
    fts = SQLiteFullText()
    tied = [(f"t{i:02d}", "ada", "episodic", "went kayaking") for i in range(25)]  # same words, same length
    best = [("best", "ada", "episodic", "kayaking kayaking")]
    rest = [(f"r{i}", "ada", "episodic", "went kayaking on a long cold grey lake today") for i in range(5)]
    fts.upsert(conn, tied + best + rest)
    hits = fts.search(conn, "kayaking", Filters(user_id="ada"), 3, ties_within=100)
    assert hits[0][0] == "best"
    assert sorted(i for i, _ in hits[1:]) == sorted(t[0] for t in tied)  # all 25, not 2 of them
    assert len({score for _, score in hits[1:]}) == 1
    narrow = fts.search(conn, "kayaking", Filters(user_id="ada"), 3, ties_within=10)
    assert len(narrow) == 10  # looks no deeper than asked
    assert [i for i, _ in fts.search(conn, "kayaking", Filters(user_id="ada"), 3)] == [i for i, _ in hits[:3]]


def test_fewer_matches_than_k_all_come_back(conn):
    fts = SQLiteFullText()
    fts.upsert(conn, [("m1", "ada", "episodic", "kayak trip"), ("m2", "ada", "episodic", "kayak")])
    assert sorted(i for i, _ in fts.search(conn, "kayak", Filters(user_id="ada"), 10, ties_within=320)) == ["m1", "m2"]


@pytest.fixture
def pg_ties(tmp_path, pg_schema_url):
    from mirix_py.engine import Mirix
    from mirix_py.ops import InsertOp
    from mirix_py.records import EpisodicMemory

    user = "user-ties"
    texts = ["went kayaking"] * 25 + ["kayaking kayaking"] + ["went kayaking on a long cold grey lake today"] * 5
    with Mirix(tmp_path / "data", embedder=None, database_url=pg_schema_url) as mx:
        mx.store.apply([InsertOp(memory=EpisodicMemory(user_id=user, summary=t, actor="me")) for t in texts],
                       user_id=user, actor="seed")
        yield mx.store.engine, user


@pytest.mark.parametrize("prune_min_docs", [0, 10**9])
def test_postgres_returns_the_whole_tied_group_too(pg_ties, prune_min_docs):
    from mirix_py.store.fulltext import PostgresFullText

    engine, user = pg_ties
    fts = PostgresFullText(prune_min_docs=prune_min_docs)
    with engine.connect() as conn:
        hits = fts.search(conn, "kayaking", Filters(user_id=user), 3, ties_within=100)
        narrow = fts.search(conn, "kayaking", Filters(user_id=user), 3)
    assert len(hits) == 26 and len({score for _, score in hits[1:]}) == 1  # the best, then all 25 tied
    assert len(narrow) == 3 and narrow[0] == hits[0]
