"""`parse_when`, the SDK's and MCP's reader of a time (search start/end, an add's occurred_at): a year or a
month alone is refused as naming no day, with the format wanted; it was told it lacked a time zone."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from mirix_py.boundary.inputs import parse_when
from mirix_py.engine import Mirix
from mirix_py.errors import InvalidInput


@pytest.mark.parametrize("value", ["2024", "2024-05", " 2024 "])
def test_a_year_or_a_month_alone_names_no_day(value):
    with pytest.raises(InvalidInput) as refused:
        parse_when(value, "start")
    said = str(refused.value)
    assert said.startswith(f"start: {value!r} names no day")
    assert "an ISO 8601 date-time with a zone, e.g. 2024-05-01T14:30:00+00:00" in said
    assert "time zone;" not in said  # not sent off adding a zone to a year


@pytest.mark.parametrize(("value", "says"), [
    ("2024-05-01T14:30", "start has no time zone"),  # a day and a time: only the zone is missing
    ("2024-05-01", "start has no time zone"),
    ("20240501x", "is not an ISO 8601 date-time"),
])
def test_other_refusals_keep_their_reasons(value, says):
    with pytest.raises(InvalidInput, match=says):
        parse_when(value, "start")


def test_a_day_with_a_zone_is_read():
    assert parse_when("2024-05-01T14:30:00+02:00") == datetime(2024, 5, 1, 12, 30, tzinfo=timezone.utc)


def test_an_sdk_search_from_a_year_says_it_names_no_day(tmp_path):
    with Mirix(tmp_path / "data", embedder=None) as mx:
        with pytest.raises(InvalidInput, match=r"start: '2024' names no day.*2024-05-01T14:30:00\+00:00"):
            mx.search("climbing", user_id="ada", start="2024")  # type: ignore[arg-type]  # a caller's string
