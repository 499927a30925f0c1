"""Equal BM25 scores at the cut are ordered by the memories themselves (earlier said first, then
text, then id), in the index's one query, on SQLite and on PostgreSQL: which of a tied group makes
the cut does not depend on random ids or rowid order."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from mirix_py.store.fulltext import Filters

from mirix_py.store.sqlite_fulltext import SQLiteFullText

T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)


def _seed(mx, user: str, rows: list[tuple[str, datetime | None]]) -> dict[str, str]:
    """Episodes of `user` (text, time); their ids by text, as stored."""
    from sqlalchemy import text as sql

    from mirix_py.tools.ops import InsertOp
    from mirix_py.records import EpisodicMemory

    memories = [EpisodicMemory(user_id=user, summary=text, actor="me", occurred_at=when) for text, when in rows]
    mx.store.apply([InsertOp(memory=m) for m in memories], user_id=user, actor="seed")
    with mx.store.engine.connect() as conn:
        ids = [r[0] for r in conn.execute(sql("SELECT id FROM memory WHERE user_id = :u"), {"u": user})]
    return {m.summary: m.id for m in mx.store.get_many(ids, user_id=user).values()}


def _tied_rows() -> list[tuple[str, datetime | None]]:
    # 25 dated texts of the same words and length (equal scores), said at five times in an order that
    # is neither the order of their text nor of their ids; one better match; two undated ones (no
    # date in their text: shorter, so better, and tied with each other); five worse ones
    tied = [(f"went kayaking {chr(ord('a') + (i * 7) % 25)}x", T0 + timedelta(hours=(i * 3) % 5)) for i in range(25)]
    undated: list[tuple[str, datetime | None]] = [("went kayaking zz", None), ("went kayaking yy", None)]
    best: list[tuple[str, datetime | None]] = [("kayaking kayaking", T0)]
    rest: list[tuple[str, datetime | None]] = [(f"went kayaking on a long cold grey lake today {i}", T0) for i in range(5)]
    return tied + undated + best + rest


def _expected(rows: list[tuple[str, datetime | None]], k: int) -> list[str]:
    dated = sorted((r for r in rows if r[1] is not None and len(r[0]) == 16), key=lambda r: (r[1], r[0]))
    return (["kayaking kayaking", "went kayaking yy", "went kayaking zz"] + [text for text, _ in dated])[:k]


@pytest.fixture
def sqlite_store(tmp_path):
    from mirix_py.engine import Mirix

    with Mirix(tmp_path / "data", embedder=None) as mx:
        yield mx


@pytest.fixture
def pg_store(tmp_path, pg_schema_url):
    from mirix_py.engine import Mirix

    with Mirix(tmp_path / "data", embedder=None, database_url=pg_schema_url) as mx:
        yield mx


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
@pytest.mark.parametrize("k", [1, 3, 12, 27, 40])
def test_a_tied_group_at_the_cut_is_ordered_by_time_then_text(request, backend, k):
    mx = request.getfixturevalue("sqlite_store" if backend == "sqlite" else "pg_store")
    rows = _tied_rows()
    ids = _seed(mx, "ada", rows)
    by_id = {v: t for t, v in ids.items()}
    with mx.store.engine.connect() as conn:
        hits = mx.store.fulltext.search(conn, "kayaking", Filters(user_id="ada"), k)
    texts = [by_id[i] for i, _ in hits]
    if k <= 28:
        assert texts == _expected(rows, k)
    else:  # all 28 of the best and tied, then the five longer ones
        assert texts[:28] == _expected(rows, 28) and len(texts) == 33
    assert [s for _, s in hits] == sorted((s for _, s in hits), reverse=True)


def test_the_order_does_not_depend_on_ids_or_insertion_order(tmp_path):
    """Two stores of the same rows, inserted in opposite orders (other ids, other rowids)."""
    from mirix_py.engine import Mirix

    rows = _tied_rows()
    found = []
    for name, seq in (("one", rows), ("two", list(reversed(rows)))):
        with Mirix(tmp_path / name, embedder=None) as mx:
            ids = _seed(mx, "ada", seq)
            by_id = {v: t for t, v in ids.items()}
            with mx.store.engine.connect() as conn:
                found.append([by_id[i] for i, _ in mx.store.fulltext.search(conn, "kayaking", Filters(user_id="ada"), 6)])
    assert found[0] == found[1] == _expected(rows, 6)


def test_fewer_matches_than_k_all_come_back(sqlite_store):
    ids = _seed(sqlite_store, "ada", [("kayak trip", T0), ("kayak", T0)])
    with sqlite_store.store.engine.connect() as conn:
        hits = sqlite_store.store.fulltext.search(conn, "kayak", Filters(user_id="ada"), 10)
    assert sorted(i for i, _ in hits) == sorted(ids.values())


def test_a_time_window_keeps_the_order(sqlite_store):
    rows = _tied_rows()
    ids = _seed(sqlite_store, "ada", rows)
    by_id = {v: t for t, v in ids.items()}
    window = Filters(user_id="ada", start=T0 + timedelta(hours=2), end=T0 + timedelta(hours=4))
    inside = sorted((r for r in rows if r[1] is not None and window.start <= r[1] < window.end
                     and len(r[0]) == 16), key=lambda r: (r[1], r[0]))
    with sqlite_store.store.engine.connect() as conn:
        hits = sqlite_store.store.fulltext.search(conn, "kayaking", window, 4)
    assert [by_id[i] for i, _ in hits] == [t for t, _ in inside][:4]


def test_another_user_in_the_same_rowid_range_is_never_returned(fts_conn, monkeypatch):
    """Two users whose rowid ranges coincide (forced here): each finds only their own rows."""
    import mirix_py.store.sqlite_fulltext as sqlite_fulltext

    monkeypatch.setattr(sqlite_fulltext, "user_rowid_range", lambda user_id: (1 << 32, (2 << 32) - 1))
    monkeypatch.setattr(sqlite_fulltext, "fts_rowid", lambda user_id, memory_id: (1 << 32) + int(memory_id[1:]) * 16)
    fts = SQLiteFullText()
    rows = [(f"m{i}", "bob" if i % 2 else "ada", "episodic", "kayak " * (1 + i % 3)) for i in range(12)]
    fts.upsert(fts_conn, rows)
    fts_conn.exec_driver_sql("INSERT INTO memory (id, occurred_at, text) VALUES " + ", ".join(f"('{r[0]}', NULL, '{r[3]}')" for r in rows))
    for user in ("ada", "bob"):
        hits = fts.search(fts_conn, "kayak", Filters(user_id=user), 4)
        owners = {r[0]: r[1] for r in rows}
        assert len(hits) == 4 and all(owners[i] == user for i, _ in hits)


def test_undated_memories_come_after_dated_ones_of_equal_score(fts_conn):
    fts = SQLiteFullText()
    rows = [(f"m{i}", "ada", "episodic", "went kayaking") for i in range(4)]
    fts.upsert(fts_conn, rows)
    times = ["NULL", "'2024-05-02 00:00:00.000000'", "NULL", "'2024-05-01 00:00:00.000000'"]
    texts = ["b", "a", "a", "c"]
    fts_conn.exec_driver_sql("INSERT INTO memory (id, occurred_at, text) VALUES " + ", ".join(
        f"('m{i}', {times[i]}, '{texts[i]}')" for i in range(4)))
    assert [i for i, _ in fts.search(fts_conn, "kayaking", Filters(user_id="ada"), 4)] == ["m3", "m1", "m2", "m0"]
