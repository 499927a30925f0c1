"""Dates in words and relative time phrases resolved against the time a message was said."""

from __future__ import annotations

from datetime import date, datetime, timezone

import pytest

from mirix_py.text.dates import annotate, day_words, resolve, when_words
from mirix_py.records import EpisodicMemory

SAID = datetime(2023, 5, 8, 13, 56, tzinfo=timezone.utc)  # a Monday


def test_dates_in_words():
    assert day_words(date(2023, 5, 7)) == "7 May 2023"
    assert when_words(SAID) == "8 May 2023, 13:56"


@pytest.mark.parametrize("phrase, label", [
    ("yesterday", "7 May 2023"),
    ("last night", "7 May 2023"),
    ("the day before yesterday", "6 May 2023"),
    ("today", "8 May 2023"),
    ("tomorrow", "9 May 2023"),
    ("3 days ago", "5 May 2023"),
    ("two days ago", "6 May 2023"),
    ("last Friday", "5 May 2023"),
    ("last Monday", "1 May 2023"),      # said on a Monday: the one a week before
    ("next Monday", "15 May 2023"),
    ("this Friday", "12 May 2023"),
    ("last month", "April 2023"),
    ("next month", "June 2023"),
    ("two months ago", "March 2023"),
    ("last year", "2022"),
    ("a year ago", "2022"),
    ("5 years ago", "2018"),
    ("next year", "2024"),
    ("last summer", "summer 2022"),
    ("this summer", "summer 2023"),
    ("next winter", "winter 2023"),
])
def test_each_phrase_names_its_period(phrase, label):
    (found,) = resolve(f"I did it {phrase}, honestly.", SAID)
    assert found.phrase.lower() == phrase.lower() and found.label == label


@pytest.mark.parametrize("phrase, label", [
    ("last Fri", "5 May 2023"),
    ("Last Tues", "2 May 2023"),
    ("next Thurs", "11 May 2023"),
    ("this past Sat", "6 May 2023"),
])
def test_a_weekday_cut_short_names_its_day(phrase, label):
    (found,) = resolve(f"We met {phrase}. It was fun.", SAID)
    assert found.phrase == phrase and found.label == label


def test_a_lowercase_cut_weekday_is_a_word_not_a_day():
    assert resolve("when we last sat down, and this sun is too hot", SAID) == []


def test_periods_span_their_days():
    (month,) = resolve("last month", SAID)
    assert (month.first, month.last) == (date(2023, 4, 1), date(2023, 4, 30))
    (winter,) = resolve("last winter", SAID)
    assert (winter.first, winter.last, winter.label) == (date(2022, 12, 1), date(2023, 2, 28), "winter 2022")
    (summer,) = resolve("last summer", datetime(2023, 7, 10))  # in the middle of this summer: the one before
    assert summer.label == "summer 2022"


def test_annotate_follows_each_phrase_with_its_period():
    text = "Caroline: I went to a support group yesterday and I'm moving next month."
    assert annotate(text, SAID) == ("Caroline: I went to a support group yesterday (7 May 2023) and I'm moving "
                                    "next month (June 2023).")


def test_annotate_is_idempotent_and_leaves_plain_text_alone():
    once = annotate("Yesterday was great.", SAID)
    assert once == "Yesterday (7 May 2023) was great."
    assert annotate(once, SAID) == once
    assert annotate("We met on 8 May 2023 at the park.", SAID) == "We met on 8 May 2023 at the park."
    assert annotate("yesterday", None) == "yesterday"


def test_weeks_and_vague_phrases_are_not_resolved():
    """'last week' is as precise as the answer once the text carries its date; 'a few' names no number."""
    assert resolve("last week, last weekend, a few years ago, recently", SAID) == []


def test_words_inside_other_words_are_not_phrases():
    assert resolve("the todays list and yesterdays news", SAID) == []


def test_an_episode_shows_its_date_in_words_and_resolves_what_it_says():
    episode = EpisodicMemory(user_id="u", actor="Caroline", occurred_at=SAID,
                             summary="I went to a LGBTQ support group yesterday.")
    assert episode.search_text() == "[8 May 2023, 13:56] Caroline: I went to a LGBTQ support group yesterday (7 May 2023)."
    assert episode.embedding_text() == "Caroline: I went to a LGBTQ support group yesterday."  # the vector is unchanged
    assert EpisodicMemory(user_id="u", summary="hi").search_text() == "[undated] user: hi"


def test_dates_in_words_read_back():
    from datetime import time

    from mirix_py.text.dates import parse_words, when_words

    assert parse_words(when_words(datetime(2023, 5, 7, 13, 56))) == (date(2023, 5, 7), time(13, 56))
    assert parse_words("7 May 2023") == (date(2023, 5, 7), None)
    assert parse_words("7 Sept 2023") == (date(2023, 9, 7), None)
    for text in ("the day before", "31 April 2023", "7 Ma 2023", "2023-05-07", "7 May 2023, 25:00"):
        assert parse_words(text) is None, text


def _utc(year: int, month: int = 1, day: int = 1, hour: int = 0) -> datetime:
    return datetime(year, month, day, hour, tzinfo=timezone.utc)


@pytest.mark.parametrize("text, said_at", [
    ("We moved to the valley 10 years ago.", _utc(5, 6)),
    ("The storm came the day before yesterday.", _utc(1)),
    ("The harvest failed last winter.", _utc(2, 2)),
    ("We will travel next winter.", _utc(9998, 12, 31, 12)),
    ("The party is the day after tomorrow.", _utc(9999, 12, 31, 23)),
])
def test_a_phrase_whose_period_falls_off_the_calendar_is_left_as_said(text, said_at):
    assert annotate(text, said_at) == text
    assert resolve(text, said_at) == []


def test_a_phrase_whose_period_is_on_the_calendar_is_resolved_beside_one_that_is_not():
    said_at = _utc(9998, 12, 31, 12)
    assert annotate("I retire next year, and travel next winter.", said_at) == \
        "I retire next year (9999), and travel next winter."


def test_years_before_1000_are_written_with_four_digits_and_read_back():
    from mirix_py.text.dates import parse_words

    said_at = _utc(2, 2, 1)
    assert when_words(said_at) == "1 February 0002, 00:00"
    assert annotate("The harvest failed 3 months ago, as it did last year, yesterday too.", said_at) == (
        "The harvest failed 3 months ago (November 0001), as it did last year (0001), yesterday (31 January 0002) "
        "too.")
    assert parse_words(when_words(said_at)) == (date(2, 2, 1), said_at.time())
    assert day_words(date(2023, 5, 7)) == "7 May 2023"  # four digits already: as before
