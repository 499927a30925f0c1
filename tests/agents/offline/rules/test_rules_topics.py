from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from mirix_py.agents.offline.rules.topics import STOPWORDS, extract_keywords, parse_time_range

# ---------------------------------------------------------------- keywords


def test_keywords_drop_stopwords_and_chat_fillers():
    assert extract_keywords("Hey Mel! Good to see you! I'm swamped with the kids & work.") == [
        "Mel",
        "swamped",
        "kids",
        "work",
    ]


def test_keywords_keep_acronyms_and_order():
    assert extract_keywords("I went to a LGBTQ support group yesterday and it was so powerful.") == [
        "LGBTQ",
        "support",
        "group",
        "powerful",
    ]


def test_keywords_keep_names_and_dedupe_possessives():
    kws = extract_keywords("Caroline and Melanie talked about Caroline's painting class at the Art Center.")
    assert kws == ["Caroline", "Melanie", "talked", "painting", "class", "Art", "Center"]


def test_sentence_initial_capital_is_lowercased_unless_used_as_name():
    assert extract_keywords("Painting calms me. Pottery too.") == ["painting", "calms", "pottery"]
    assert extract_keywords("Paris was great. We loved Paris.")[0] == "Paris"


def test_keywords_dedupe_case_insensitively():
    assert extract_keywords("hiking Hiking HIKING trails") == ["hiking", "trails"]


def test_max_keywords():
    text = "alpha bravo charlie delta echo foxtrot golf hotel india juliet"
    assert extract_keywords(text, max_keywords=3) == ["alpha", "bravo", "charlie"]
    assert len(extract_keywords(text)) == 8
    assert extract_keywords(text, max_keywords=0) == []


def test_keywords_skip_numbers_and_short_words():
    assert extract_keywords("I ran 5 km in 30 min on a hot day") == ["ran", "min", "hot"]


def test_keywords_of_pure_chat_are_empty():
    assert extract_keywords("Thanks so much! That's awesome, I'm so glad.") == []
    assert extract_keywords("") == []


def test_stopword_list_is_lowercase():
    assert all(w == w.lower() for w in STOPWORDS)
    assert {"the", "and", "hey", "thanks"} <= STOPWORDS


# ---------------------------------------------------------------- time ranges

UTC = timezone.utc
NOW = datetime(2023, 6, 14, 15, 30, tzinfo=UTC)  # a Wednesday


def day(y, m, d, tz=UTC):
    start = datetime(y, m, d, tzinfo=tz)
    return start, start + timedelta(days=1)


@pytest.mark.parametrize(
    "text, expected",
    [
        ("What did I do yesterday?", day(2023, 6, 13)),
        ("today", day(2023, 6, 14)),
        ("anything tonight?", day(2023, 6, 14)),
        ("last week", (datetime(2023, 6, 5, tzinfo=UTC), datetime(2023, 6, 12, tzinfo=UTC))),
        ("this week", (datetime(2023, 6, 12, tzinfo=UTC), datetime(2023, 6, 19, tzinfo=UTC))),
        ("last month", (datetime(2023, 5, 1, tzinfo=UTC), datetime(2023, 6, 1, tzinfo=UTC))),
        ("this month", (datetime(2023, 6, 1, tzinfo=UTC), datetime(2023, 7, 1, tzinfo=UTC))),
        ("in May 2023", (datetime(2023, 5, 1, tzinfo=UTC), datetime(2023, 6, 1, tzinfo=UTC))),
        ("on 8 May 2023", day(2023, 5, 8)),
        ("1:56 pm on 8 May, 2023", day(2023, 5, 8)),
        ("on May 8th, 2023", day(2023, 5, 8)),
        ("2023-05-08", day(2023, 5, 8)),
        ("this year", (datetime(2023, 1, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC))),
        ("last year", (datetime(2022, 1, 1, tzinfo=UTC), datetime(2023, 1, 1, tzinfo=UTC))),
        ("in 2021", (datetime(2021, 1, 1, tzinfo=UTC), datetime(2022, 1, 1, tzinfo=UTC))),
        ("in May", (datetime(2023, 5, 1, tzinfo=UTC), datetime(2023, 6, 1, tzinfo=UTC))),
        ("last August", (datetime(2022, 8, 1, tzinfo=UTC), datetime(2022, 9, 1, tzinfo=UTC))),
        ("3 days ago", day(2023, 6, 11)),
        ("the past week", (datetime(2023, 6, 7, tzinfo=UTC), datetime(2023, 6, 15, tzinfo=UTC))),
    ],
)
def test_time_ranges(text, expected):
    assert parse_time_range(text, NOW) == expected


def test_last_month_in_january_wraps_year():
    now = datetime(2024, 1, 10, tzinfo=UTC)
    assert parse_time_range("last month", now) == (datetime(2023, 12, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC))


def test_december_range_ends_next_year():
    assert parse_time_range("in December 2022", NOW) == (
        datetime(2022, 12, 1, tzinfo=UTC),
        datetime(2023, 1, 1, tzinfo=UTC),
    )


def test_ranges_use_nows_timezone():
    tz = ZoneInfo("America/New_York")
    now = datetime(2023, 6, 14, 1, 0, tzinfo=tz)
    start, end = parse_time_range("yesterday", now)
    assert start == datetime(2023, 6, 13, tzinfo=tz)
    assert end == datetime(2023, 6, 14, tzinfo=tz)
    assert start.tzinfo is tz and end.tzinfo is tz


def test_naive_now_is_taken_as_utc():
    start, end = parse_time_range("today", datetime(2023, 6, 14, 12, 0))
    assert start == datetime(2023, 6, 14, tzinfo=UTC)
    assert start.tzinfo is not None and end.tzinfo is not None


def test_first_phrase_wins_and_specific_beats_general():
    assert parse_time_range("yesterday, not last week", NOW) == day(2023, 6, 13)
    # "8 May 2023" contains "May 2023"; the day wins.
    assert parse_time_range("it was 8 May 2023", NOW) == day(2023, 5, 8)


def test_invalid_dates_are_ignored():
    assert parse_time_range("2023-02-30", NOW) is None


@pytest.mark.parametrize(
    "text",
    [
        "Hey Mel! Good to see you!",
        "You may want to try it.",
        "I may go, may not.",
        "That was a week to remember.",
        "I ran 2023 meters",
        "",
    ],
)
def test_no_time_phrase(text):
    assert parse_time_range(text, NOW) is None


def test_addressed_name_at_sentence_start_keeps_case():
    assert extract_keywords("Maria, what's the deal with that note?") == ["Maria", "deal", "note"]
    assert extract_keywords("Honestly, painting rocks.") == ["painting", "rocks"]
