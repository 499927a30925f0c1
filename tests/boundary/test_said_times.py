"""What `add` is handed, as the boundary reads it: times in UTC (no arithmetic on a zone's wall clock),
and the offset each was given in kept for the text of what was said."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from mirix_py.boundary.inputs import normalize_add, parse_said, parse_when
from mirix_py.errors import InvalidInput

BERLIN = ZoneInfo("Europe/Berlin")
# 02:15 twice in Berlin on 25 October 2026: fold=1 is the second, in CET (+01:00), at 01:15 UTC
SECOND_0215 = datetime.fromtimestamp(datetime(2026, 10, 25, 1, 15, tzinfo=timezone.utc).timestamp(), BERLIN)


def test_a_time_is_returned_in_utc():
    assert SECOND_0215.fold == 1
    when = parse_when(SECOND_0215)
    assert when == datetime(2026, 10, 25, 1, 15, tzinfo=timezone.utc) and when.tzinfo is timezone.utc
    assert parse_when("2026-01-01T23:30:00-08:00") == datetime(2026, 1, 2, 7, 30, tzinfo=timezone.utc)
    with pytest.raises(InvalidInput, match="no time zone"):
        parse_when("2026-01-01T23:30:00")


def test_a_said_time_keeps_the_offset_it_was_given_in_on_a_fixed_clock():
    said = parse_said(SECOND_0215)
    assert said == datetime(2026, 10, 25, 1, 15, tzinfo=timezone.utc)
    assert said.utcoffset() == timedelta(hours=1) and not isinstance(said.tzinfo, ZoneInfo)
    assert said + timedelta(microseconds=1) == datetime(2026, 10, 25, 1, 15, 0, 1, tzinfo=timezone.utc)  # exact
    assert parse_said("2026-01-01T10:00:00Z").utcoffset() == timedelta(0)
    with pytest.raises(InvalidInput, match="farther from UTC than any zone"):
        parse_said("2026-01-01T10:00:00+20:00")


def test_the_input_and_each_message_carry_the_offset_their_time_was_given_in():
    record = normalize_add("I watered the orchid.", user_id="u", occurred_at=SECOND_0215, source_id=None,
                           kind="text", max_chars=1000)
    assert record.occurred_at == datetime(2026, 10, 25, 1, 15, tzinfo=timezone.utc)
    assert record.occurred_at.utcoffset() == timedelta(0)
    assert record.messages[0].said_offset_minutes == 60
    listed = normalize_add([{"content": "first"}, {"content": "second", "occurred_at": "2026-01-01T23:30:00-08:00"},
                            {"content": "third", "occurred_at": "2026-01-02T07:31:00Z"}],
                           user_id="u", occurred_at="2026-01-01T23:00:00+05:30", source_id=None, kind="text",
                           max_chars=1000)
    assert [m.said_offset_minutes for m in listed.messages] == [330, -480, None]
    assert listed.messages[1].occurred_at == datetime(2026, 1, 2, 7, 30, tzinfo=timezone.utc)
    in_utc = normalize_add("hello", user_id="u", occurred_at="2026-01-01T10:00:00+00:00", source_id=None,
                           kind="text", max_chars=1000)
    assert in_utc.messages[0].said_offset_minutes is None  # read in MIRIX_TIMEZONE, else UTC, when processed
