"""A large user's search leaves out the query words most of its memories hold, while a rarer one stays."""

from __future__ import annotations

import pytest

import mirix_py.store.sqlite_fulltext as sqlite_fulltext
from mirix_py.store.fulltext import Filters
from mirix_py.store.fts5_scoring import fts5_averages
from mirix_py.store.sqlite_fulltext import SQLiteFullText, left_out_terms


def test_fts5_averages_reads_the_row_count_and_the_token_total(fts_engine):
    with fts_engine.begin() as conn:
        SQLiteFullText().upsert(conn, [("a", "ada", "episodic", "one two three"), ("b", "ada", "semantic", "four")])
    with fts_engine.connect() as conn:  # FTS5 writes its totals when the transaction commits
        blob = conn.exec_driver_sql("SELECT block FROM memory_fts_data WHERE id = 1").scalar_one()
    assert fts5_averages(bytes(blob)) == (2, 4 + 2 * 2)  # the words, and a user and a type token per row
    assert fts5_averages(bytes([0x81, 0x00, 0x05])) == (128, 5)  # a two-byte varint


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

    monkeypatch.setattr(sqlite_fulltext, "PARALLEL_MIN_DOCS", 50)  # ada now counts as large
    large = SQLiteFullText()
    found = [i for i, _ in large.search(conn, "cousin at work", filters, 100)]
    assert sorted(found) == ["c0", "c1", "c2"]  # only the rarer word selects memories
    assert len(large.search(conn, "work", filters, 100)) == 61  # alone, the common word still searches


@pytest.fixture
def crowd(fts_engine):
    """ada: 400 memories; "work" in the own words of 60 of them (15%), "cousin" in 6, "porto" in 3;
    bob: 100 more, so the table's counts are not ada's. Committed, as FTS5 writes the table's
    totals (which the rescoring reads) when a transaction commits."""
    with fts_engine.begin() as conn:
        fill_crowd(conn)
    with fts_engine.connect() as conn:
        yield conn


def fill_crowd(conn):
    fts = SQLiteFullText()
    rows = [(f"w{i:03d}", "ada", "episodic", f"[2024-05-{1 + i % 28:02d}] Ada: long day at work, shift {i}")
            for i in range(57)]
    rows += [(f"o{i:03d}", "ada", "episodic", f"Ada: walked the dog past bakery {i} and the river") for i in range(337)]
    rows += [("c0", "ada", "episodic", "Ada: my cousin is at work"),
             ("c1", "ada", "episodic", "Ada: a cousin visited"),
             ("c2", "ada", "semantic", "cousin: lives in Porto and loves work"),
             ("c3", "ada", "episodic", "Ada: cousin cousin, work work again at work"),
             ("c4", "ada", "episodic", "Ada: the cousin from Porto called me at home today"),
             ("c5", "ada", "episodic", "Ada: Porto cousin")]
    rows += [(f"b{i:03d}", "bob", "episodic", f"Bob: work and more work {i}") for i in range(100)]
    fts.upsert(conn, rows)
    conn.exec_driver_sql("INSERT INTO memory (id, user_id, memory_type, text) VALUES (?, ?, ?, ?)",
                         [(r[0], r[1], r[2], r[3]) for r in rows])


COUSINS = {"c0", "c1", "c2", "c3", "c4", "c5"}


@pytest.mark.parametrize(("query", "selected"), [("cousin at work", COUSINS), ("work cousin Porto", COUSINS),
                                                 ("Porto work", {"c2", "c4", "c5"})])
def test_the_common_word_still_scores_the_rows_the_rarer_ones_select(crowd, monkeypatch, query, selected):
    """Rows holding a left-out word once score as bm25() scores the whole query; rows holding it
    more often keep their place among the selected rows (counted once)."""
    conn = crowd
    filters = Filters(user_id="ada")
    monkeypatch.setattr(sqlite_fulltext, "PARALLEL_MIN_DOCS", 50)
    monkeypatch.setattr(sqlite_fulltext, "LEFT_OUT_SHARE", 1.0)  # the rule off: bm25() of the whole query
    exact = dict(SQLiteFullText().search(conn, query, filters, 500))
    monkeypatch.setattr(sqlite_fulltext, "LEFT_OUT_SHARE", 0.05)
    large = SQLiteFullText()
    found = large.search(conn, query, filters, 500)
    assert large._match(conn, query, filters).scoring_only == ("work",)
    assert {i for i, _ in found} == selected
    for memory_id, score in found:
        if memory_id != "c3":  # c3 holds "work" three times; the rescoring counts one
            assert score == pytest.approx(exact[memory_id], rel=1e-9)
    assert [i for i, _ in found if i != "c3"] == [i for i in sorted(exact, key=lambda i: -exact[i])
                                                 if i in selected and i != "c3"]


def test_a_query_that_leaves_a_word_out_is_searched_whole(office, monkeypatch):
    conn, _ = office
    monkeypatch.setattr(sqlite_fulltext, "PARALLEL_MIN_DOCS", 50)
    monkeypatch.setattr(sqlite_fulltext.os, "cpu_count", lambda: 2)
    large = SQLiteFullText()
    assert large.parts(conn, "cousin at work", Filters(user_id="ada")) == 1  # rescored in one part
    assert large.parts(conn, "work", Filters(user_id="ada")) == 2  # nothing left out: two parts
