"""A large user's search leaves out the query words most of its memories hold, while a rarer one stays."""

from __future__ import annotations

import pytest

import mirix_py.store.fulltext as fulltext
from mirix_py.store.fulltext import Filters, SQLiteFullText, left_out_terms


def test_a_common_term_is_left_out_while_a_rarer_matching_one_stays():
    counts = {"work": (80, 60), "cousin": (9, 3), "sam": (12, 4)}  # (any column, own words) of 100
    assert left_out_terms(counts, 100, 0.05) == {"work"}
    assert left_out_terms(counts, 100, 0.5) == {"work"}
    assert left_out_terms(counts, 100, 0.7) == frozenset()


def test_nothing_is_left_out_when_every_term_is_common_or_the_rarer_ones_match_nothing():
    assert left_out_terms({"work": (80, 60), "book": (90, 70)}, 100, 0.05) == frozenset()
    assert left_out_terms({"work": (80, 60), "zyzzyva": (0, 0)}, 100, 0.05) == frozenset()
    # a term held only in neighbours' words still matches: the common one goes
    assert left_out_terms({"work": (80, 60), "drummer": (4, 0)}, 100, 0.05) == {"work"}


@pytest.fixture
def office(fts_conn):
    """ada: 100 memories, 60 of them about work, 3 about her cousin (one of those at work)."""
    fts = SQLiteFullText()
    rows = [(f"w{i:02d}", "ada", "episodic", f"Long day at work number {i}") for i in range(60)]
    rows += [(f"o{i:02d}", "ada", "episodic", f"Walked the dog past bakery {i}") for i in range(37)]
    rows += [("c0", "ada", "episodic", "My cousin got a new work badge"),
             ("c1", "ada", "episodic", "My cousin visited"), ("c2", "ada", "semantic", "cousin: lives in Porto")]
    fts.upsert(fts_conn, rows)
    fts_conn.exec_driver_sql("INSERT INTO memory (id, user_id, memory_type, text) VALUES (?, ?, ?, ?)",
                             [(r[0], r[1], r[2], r[3]) for r in rows])
    return fts_conn, fts


def test_a_large_users_search_leaves_the_common_word_out(office, monkeypatch):
    conn, fts = office
    filters = Filters(user_id="ada")
    small = [i for i, _ in fts.search(conn, "cousin at work", filters, 100)]
    assert len(small) == 63 and {"c0", "c1", "c2"} <= set(small)  # every memory holding either word

    monkeypatch.setattr(fulltext, "PARALLEL_MIN_DOCS", 50)  # ada now counts as large
    large = SQLiteFullText()
    found = [i for i, _ in large.search(conn, "cousin at work", filters, 100)]
    assert sorted(found) == ["c0", "c1", "c2"]  # only the rarer word selects memories
    assert [i for i, _ in large.search(conn, "work", filters, 100)] != []  # alone, the common word still searches
    assert len(large.search(conn, "work", filters, 100)) == 61
