import pytest

from mirix_py.text.by_day import DayGroup, by_day, day_lines, split_clock, split_day, stated_once

RANKED = [
    "[8 May 2023, 13:56] Ada: I went to the support group yesterday (7 May 2023)",
    "[20 May 2023, 09:05] Bo: the race was fun",
    "Ada: lives in Berlin (said 2 May 2024)",
    "[8 May 2023, 14:02] Bo: how was it?",
    "[core:human] Ada: likes hiking",
]


def test_a_text_opening_with_its_day_and_clock_is_split_there():
    assert split_day(RANKED[0]) == ("8 May 2023", "[13:56] Ada: I went to the support group yesterday (7 May 2023)")
    assert split_day(RANKED[2]) == (None, RANKED[2])
    # only the stamp `when_words` writes: an ISO stamp or a day without a clock is left as it is
    assert split_day("[2023-05-08 13:56] Ada: hi") == (None, "[2023-05-08 13:56] Ada: hi")
    assert split_day("[8 May 2023] Ada: hi") == (None, "[8 May 2023] Ada: hi")
    assert split_day("Ada said [8 May 2023, 13:56] Bo: hi")[0] is None  # not at the start


def test_undated_first_then_days_in_the_order_of_their_best_ranked_memory():
    assert by_day(RANKED) == [DayGroup(None, (2, 4)), DayGroup("8 May 2023", (0, 3)), DayGroup("20 May 2023", (1,))]
    assert by_day([]) == []


def test_each_day_is_stated_once_under_its_heading():
    lines = day_lines(RANKED, [f"- [m{i}] " for i in range(len(RANKED))])
    assert lines == [
        "- [m2] Ada: lives in Berlin (said 2 May 2024)",
        "- [m4] [core:human] Ada: likes hiking",
        "8 May 2023, 13:56:",
        "- [m0] Ada: I went to the support group yesterday (7 May 2023)",
        "- [m3] [14:02] Bo: how was it?",
        "20 May 2023, 09:05:",
        "- [m1] Bo: the race was fun",
    ]
    assert sum("8 May 2023" in line for line in lines) == 1


def test_a_memory_said_at_the_headings_minute_shows_no_clock_of_its_own():
    sitting = ["[8 May 2023, 13:56] Ada: hi", "[8 May 2023, 13:56] Bo: hello", "[8 May 2023, 14:02] Ada: bye",
               "[8 May 2023, 13:56] Bo: how are you?"]
    assert day_lines(sitting) == ["8 May 2023, 13:56:", "Ada: hi", "Bo: hello", "[14:02] Ada: bye", "Bo: how are you?"]
    assert split_clock("[13:56] Ada: hi") == ("13:56", "Ada: hi") and split_clock("Ada: hi") == (None, "Ada: hi")


def test_the_words_counted_in_rank_order_are_the_words_a_reader_is_shown():
    sitting = RANKED + ["[8 May 2023, 13:56] Bo: great", "[20 May 2023, 09:05] Ada: congrats"]
    once = stated_once(sitting)
    assert once[0] == "8 May 2023, 13:56: Ada: I went to the support group yesterday (7 May 2023)"
    assert once[3] == "[14:02] Bo: how was it?" and once[5:] == ["Bo: great", "Ada: congrats"]
    for n in range(len(sitting) + 1):  # any prefix, as a budget cuts it
        assert sum(len(t.split()) for t in once[:n]) == len(" ".join(day_lines(sitting[:n])).split())
    # the day's words saved on every later memory of that day, and the clock on those of its minute
    assert sum(len(t.split()) for t in once) == sum(len(t.split()) for t in sitting) - 3 * 3 - 2


def test_one_prefix_per_text_is_required():
    with pytest.raises(ValueError, match="one prefix per text"):
        day_lines(RANKED, ["- "])


def test_memories_of_a_day_before_the_year_1000_are_grouped_under_it():
    from datetime import datetime, timezone

    from mirix_py.text.dates import when_words

    said_at = f"[{when_words(datetime(2, 1, 1, tzinfo=timezone.utc))}]"
    texts = [f"{said_at} user: The storm came.", f"{said_at} user: The harvest failed."]
    assert day_lines(texts) == ["1 January 0002, 00:00:", "user: The storm came.", "user: The harvest failed."]
