"""Times a model writes: a day alone covers the day, a time without a zone is the user's."""

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from mirix_py.agents.chat import parse_topics
from mirix_py.agents.model_times import model_when
from mirix_py.errors import InvalidInput

LA = ZoneInfo("America/Los_Angeles")


def test_a_day_alone_is_its_start_or_with_end_the_start_of_the_next_day_in_the_users_zone():
    assert model_when("2026-01-01", "start", LA) == datetime(2026, 1, 1, 8, tzinfo=timezone.utc)
    assert model_when("2026-01-01", "end", LA, end=True) == datetime(2026, 1, 2, 8, tzinfo=timezone.utc)
    assert model_when("1 January 2026", "start", LA) == datetime(2026, 1, 1, 8, tzinfo=timezone.utc)


@pytest.mark.parametrize(("value", "start", "end"), [
    ("2026", datetime(2026, 1, 1, tzinfo=LA), datetime(2027, 1, 1, tzinfo=LA)),
    ("2026-05", datetime(2026, 5, 1, tzinfo=LA), datetime(2026, 6, 1, tzinfo=LA)),
    ("2026-12", datetime(2026, 12, 1, tzinfo=LA), datetime(2027, 1, 1, tzinfo=LA)),
])
def test_a_year_or_a_month_alone_covers_that_whole_year_or_month(value, start, end):
    """A search "up to 2026" ended at 1 January 2026, before anything of 2026: a year alone was read as
    its first midnight, from either end."""
    assert model_when(value, "start", LA) == start
    assert model_when(value, "end", LA, end=True) == end


def test_a_topic_reply_naming_a_year_searches_that_year():
    now = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)
    topics = parse_topics('{"topics": ["lasagna"], "start": "2025", "end": "2025"}', "What did I cook in 2025?", now)
    assert (topics.start, topics.end) == (datetime(2025, 1, 1, tzinfo=timezone.utc), datetime(2026, 1, 1, tzinfo=timezone.utc))


def test_a_time_without_a_zone_is_read_in_the_users_zone_and_one_with_a_zone_as_given():
    assert model_when("2026-01-01T18:00", "start", LA) == datetime(2026, 1, 2, 2, tzinfo=timezone.utc)
    assert model_when("1 January 2026, 18:00", "start", LA) == datetime(2026, 1, 2, 2, tzinfo=timezone.utc)
    assert model_when("2026-01-01T18:00+01:00", "start", LA) == datetime(2026, 1, 1, 17, tzinfo=timezone.utc)
    assert model_when("2026-01-01T18:00Z", "start", LA, end=True) == datetime(2026, 1, 1, 18, tzinfo=timezone.utc)


@pytest.mark.parametrize("value", ["last week", "2026-13-01", "soon-ish", "9999-12-31", "9999", "2026-13", "0000",
                                   "1700000000"])
def test_what_reads_as_no_time_is_refused_and_nothing_is_the_absence_of_a_bound(value):
    with pytest.raises(InvalidInput):
        model_when(value, "end", timezone.utc, end=True)
    assert model_when(None, "start", LA) is None and model_when("  ", "start", LA) is None


def test_a_topic_reply_with_a_day_alone_keeps_its_topics_and_its_range():
    """A weak model's "start": "2026-01-01" threw the whole reply away: the topics became the
    question's keywords."""
    now = datetime(2026, 3, 1, 12, tzinfo=LA)
    topics = parse_topics('{"topics": ["lasagna", "Maya"], "start": "2026-01-01", "end": "2026-01-01"}',
                          "What did Maya cook on 1 January 2026?", now)
    assert topics.keywords == ["lasagna", "Maya"]
    assert (topics.start, topics.end - topics.start) == (datetime(2026, 1, 1, tzinfo=LA), timedelta(days=1))


def test_a_topic_reply_whose_time_reads_as_none_keeps_its_topics_without_a_range():
    now = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)
    topics = parse_topics('{"topics": ["lasagna"], "start": "around new year", "end": null}', "When lasagna?", now)
    assert topics.keywords == ["lasagna"] and topics.start is None and topics.end is None
