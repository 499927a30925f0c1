"""A named question of a large user whose memories hold the names everywhere (two people talking):
its full-text leg and its name-free one come from one FTS5 query and rank exactly as each alone."""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone

import pytest

import mirix_py.store.sqlite_fulltext as sqlite_fulltext
from mirix_py.store.fulltext import Filters
from mirix_py.store.sqlite_fulltext import SQLiteFullText

T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)
WORDS = ["kayak", "lake", "cold", "grey", "paddle", "trip", "friend", "book", "garden", "tea", "bread", "storm",
         "violin", "market", "ferry", "sunset", "pottery", "cousin", "train", "museum"]
# made-up words, so each word of a memory is rare beside its speaker's name
RARE = WORDS + [a + b for a in ("bl", "cr", "dr", "fl", "gr") for b in ("ank", "ope", "ick", "ust", "ade", "ime", "orn",
                                                                          "ale", "ush", "ing", "ent", "ow")]


def _fill(conn, rows: list[tuple[str, str, str, str]], when: dict[str, datetime | None]) -> SQLiteFullText:
    fts = SQLiteFullText()
    fts.upsert(conn, rows)
    conn.exec_driver_sql(
        "INSERT INTO memory (id, user_id, memory_type, occurred_at, text) VALUES (?, ?, ?, ?, ?)",
        [(r[0], r[1], r[2], when[r[0]].strftime("%Y-%m-%d %H:%M:%S.%f") if when[r[0]] else None, r[3]) for r in rows])
    return fts


@pytest.fixture
def talk(fts_conn):
    """ada's 800 memories: Ann and Bob talking, each turn led by its speaker's name, a few words each
    (each word in a few percent of them, each name in half), so equal scores are common; a rare
    name (Zed) in 3 of them; some undated."""
    rng = random.Random(11)
    rows, when = [], {}
    for i in range(800):
        speaker = ("Ann", "Bob")[i % 2]
        words = " ".join(rng.choice(RARE) for _ in range(rng.randint(1, 4)))
        extra = " with Zed" if i in (5, 300, 611) else ""
        rows.append((f"m{i:03d}", "ada", "episodic", f"{speaker}: {words}{extra}"))
        when[f"m{i:03d}"] = None if i % 37 == 0 else T0 + timedelta(minutes=rng.randint(0, 300))
    return fts_conn, _fill(fts_conn, rows, when)


def test_a_small_users_named_question_is_searched_leg_by_leg(talk):
    conn, fts = talk
    assert fts.search_named(conn, "Did Ann take the kayak trip?", "Did take the kayak trip?", Filters(user_id="ada"), 30) \
        is None


@pytest.mark.parametrize("query, rest", [
    ("Did Ann take the kayak trip?", "Did take the kayak trip?"),
    ("What did Bob say about cold tea in the garden?", "What did say about cold tea in the garden?"),
    ("Ann and Bob at the market", "and at the market"),
    ("Bob's violin", "violin"),
])
def test_both_legs_rank_exactly_as_each_searched_alone(talk, monkeypatch, query, rest):
    conn, _ = talk
    monkeypatch.setattr(sqlite_fulltext, "PARALLEL_MIN_DOCS", 100)  # ada now counts as large
    large = SQLiteFullText()
    filters = Filters(user_id="ada")
    for k in (5, 30):
        both = large.search_named(conn, query, rest, filters, k)
        assert both is not None
        assert both == (large.search(conn, query, filters, k), large.search(conn, rest, filters, k))
        assert both[0] and len(both[0]) == len(both[1]) <= k


def test_a_name_that_selects_rows_of_its_own_is_searched_leg_by_leg(talk, monkeypatch):
    conn, _ = talk
    monkeypatch.setattr(sqlite_fulltext, "PARALLEL_MIN_DOCS", 100)
    large = SQLiteFullText()
    filters = Filters(user_id="ada")
    assert large.search_named(conn, "Did Zed take the kayak trip?", "Did take the kayak trip?", filters, 30) is None
    window = Filters(user_id="ada", start=T0, end=T0 + timedelta(hours=2))
    assert large.search_named(conn, "Did Ann take the kayak trip?", "Did take the kayak trip?", window, 30) is None


def test_a_tied_group_running_past_the_rows_read_is_settled_as_search_settles_it(fts_conn, monkeypatch):
    """8,000 memories, 320 of them "the kayak" by one or the other: the group tied at the cut is
    longer than the rows the shared query reads, so the name-free leg is ranked whole, in tie order."""
    rows, when = [], {}
    for i in range(8000):
        speaker = ("Ann", "Bob")[i % 2]
        text = f"{speaker}: the kayak" if i % 25 == 0 else f"{speaker}: {WORDS[1 + i % 19]} {WORDS[1 + i // 19 % 19]}"
        rows.append((f"m{i:04d}", "ada", "episodic", text))
        when[f"m{i:04d}"] = T0 + timedelta(minutes=(i * 7919) % 8000)
    _fill(fts_conn, rows, when)
    monkeypatch.setattr(sqlite_fulltext, "PARALLEL_MIN_DOCS", 1000)
    large = SQLiteFullText()
    filters = Filters(user_id="ada")
    ranked_whole: list[str] = []
    plain = large._ranked
    monkeypatch.setattr(large, "_ranked", lambda conn, match, *a: ranked_whole.append(match) or plain(conn, match, *a))
    both = large.search_named(fts_conn, "Did Ann kayak?", "Did kayak?", filters, 30)
    assert both is not None and ranked_whole  # the cut was open: the name-free leg ranked whole
    assert both == (large.search(fts_conn, "Did Ann kayak?", filters, 30), large.search(fts_conn, "Did kayak?", filters, 30))
    assert [score for _, score in both[1]] == [both[1][0][1]] * 30  # all tied, ordered by time as `search` orders them


def test_the_searcher_runs_one_full_text_query_for_a_named_question_and_ranks_as_leg_by_leg(tmp_path, monkeypatch, embedder):
    from mirix_py.engine import Mirix
    from mirix_py.records import EpisodicMemory
    from mirix_py.tools.ops import InsertOp

    rng = random.Random(7)
    with Mirix(tmp_path / "data", embedder=embedder) as mx:
        mx.store.apply([InsertOp(memory=EpisodicMemory(
            user_id="ada", actor=("Jon", "Gina")[i % 2], occurred_at=T0 + timedelta(minutes=i),
            summary=" ".join(rng.choice(RARE) for _ in range(rng.randint(2, 5))))) for i in range(300)],
            user_id="ada", actor="seed")
        question = "Did Jon take the kayak trip to the lake?"
        monkeypatch.setattr(sqlite_fulltext, "PARALLEL_MIN_DOCS", 100)
        mx.store.fulltext = large = SQLiteFullText()
        searched: list[str] = []
        plain = large.search
        monkeypatch.setattr(large, "search", lambda conn, q, *a: searched.append(q) or plain(conn, q, *a))
        shared = large.search_named
        monkeypatch.setattr(large, "search_named", lambda *a: None)
        leg_by_leg = [h.memory.id for h in mx.search(question, user_id="ada", limit=10)]
        assert len(leg_by_leg) == 10 and sorted(searched) == sorted([question, "Did take the kayak trip to the lake?"])
        searched.clear()
        monkeypatch.setattr(large, "search_named", shared)
        assert [h.memory.id for h in mx.search(question, user_id="ada", limit=10)] == leg_by_leg
        assert searched == []  # both legs from `search_named`'s one query
