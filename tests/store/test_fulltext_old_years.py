"""A full-text search bounded in time keeps the same memories as `list` when the bounds or the
memories fall before the year 1000 (SQLite compares its stored times as text: the bound must be
written as they are, with a four-digit year)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from mirix_py.records import EpisodicMemory
from mirix_py.store.sqlite_fulltext import sqlite_time
from mirix_py.tools.ops import InsertOp

YEARS = (2, 800, 1900, 2026)


def _utc(year: int) -> datetime:
    return datetime(year, 1, 1, tzinfo=timezone.utc)


WINDOWS = {  # (start, end) -> the years a search in it keeps
    "from the first year": ((_utc(1), None), [2, 800, 1900, 2026]),
    "from 500": ((_utc(500), None), [800, 1900, 2026]),
    "before 500": ((None, _utc(500)), [2]),
    "900 to 2000": ((_utc(900), _utc(2000)), [1900]),
}


@pytest.fixture
def logbook(tmp_path, backend, user_id):
    """An engine holding one logbook entry of each of YEARS for `user_id`."""
    from mirix_py.engine import Mirix

    with Mirix(tmp_path / "data", embedder=None, database_url=backend) as mx:
        mx.store.apply([InsertOp(memory=EpisodicMemory(user_id=user_id, actor="me", occurred_at=_utc(y).replace(month=6),
                                                       summary=f"The keeper wrote in the lighthouse logbook in {y}."))
                        for y in YEARS], user_id=user_id, actor="seed")
        yield mx


def _years(memories) -> list[int]:
    return sorted(m.occurred_at.year for m in memories)


@pytest.mark.parametrize("method", ["bm25", "hybrid"])
@pytest.mark.parametrize("window", list(WINDOWS))
def test_a_window_before_the_year_1000_keeps_what_list_keeps(logbook, user_id, method, window):
    (start, end), expected = WINDOWS[window]
    hits = logbook.search("lighthouse logbook", user_id=user_id, method=method, limit=20, start=start, end=end)
    assert _years(h.memory for h in hits) == expected
    assert _years(logbook.list(user_id=user_id, start=start, end=end)) == expected


def test_a_narrow_window_of_old_years_is_searched_in_sql(logbook, user_id):
    # better matches outside the window fill all the first candidates: SQL filters the window itself
    logbook.store.apply([InsertOp(memory=EpisodicMemory(user_id=user_id, actor="me", occurred_at=_utc(2025),
                                                        summary=f"lighthouse lighthouse logbook {i}"))
                         for i in range(60)], user_id=user_id, actor="seed")
    hits = logbook.search("lighthouse logbook", user_id=user_id, method="bm25", limit=1, end=_utc(500))
    assert _years(h.memory for h in hits) == [2]


def test_a_bound_is_written_as_sqlite_stores_times():
    assert sqlite_time(datetime(2, 6, 1, 3, 4, 5, 6, tzinfo=timezone.utc)) == "0002-06-01 03:04:05.000006"
    los_angeles_winter = timezone(-timedelta(hours=8))
    assert sqlite_time(datetime(2026, 1, 1, 1, tzinfo=los_angeles_winter)) == "2026-01-01 09:00:00.000000"
