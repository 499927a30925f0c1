"""Dates in words, and relative time phrases of a statement resolved against the time it was said.

Memories are read by people and models who answer "When did ...?" with dates in words ("7 May
2023"), and a message that says "yesterday" names a day only its date can tell. So an episode's
text shows its date in words and every relative phrase it holds followed by the day, month or year
it names: "I went to a support group yesterday (7 May 2023)". Pure functions: the same text and
time always give the same result.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

__all__ = ["Resolved", "annotate", "day_words", "resolve", "when_words", "year_words"]

MONTHS = [calendar.month_name[i] for i in range(1, 13)]
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
SEASONS = {"spring": (3, 5), "summer": (6, 8), "autumn": (9, 11), "fall": (9, 11), "winter": (12, 2)}
NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
           "eight": 8, "nine": 9, "ten": 10, "couple of": 2, "a couple of": 2}


def year_words(year: int) -> str:
    """"2023"; "0002" for the year 2, so a year reads as one (not as a count) and `parse_words` and
    `by_day` take every date in words alike."""
    return f"{year:04d}"


def day_words(day: date) -> str:
    """"7 May 2023"."""
    return f"{day.day} {MONTHS[day.month - 1]} {year_words(day.year)}"


def when_words(moment: datetime) -> str:
    """"7 May 2023, 13:56": the day in words, the time of day as a 24-hour clock."""
    return f"{day_words(moment.date())}, {moment:%H:%M}"


_IN_WORDS = re.compile(r"\s*(\d{1,2}) ([A-Za-z]+),? (\d{4})(?:,? (\d{1,2}):(\d{2}))?\s*")


def parse_words(text: str) -> tuple[date, time | None] | None:
    """The inverse of `day_words` and `when_words` ("7 May 2023", "7 May 2023, 13:56"): models copy
    the dates the messages show in words into time fields. None when `text` is not one of them."""
    m = _IN_WORDS.fullmatch(text)
    month = m and next((i + 1 for i, name in enumerate(MONTHS) if name.lower().startswith(m.group(2).lower())
                        and len(m.group(2)) >= 3), None)
    if not m or not month:
        return None
    try:
        day = date(int(m.group(3)), month, int(m.group(1)))
        clock = time(int(m.group(4)), int(m.group(5))) if m.group(4) else None
    except ValueError:  # 31 April, 25:00
        return None
    return day, clock


@dataclass(frozen=True)
class Resolved:
    """A relative phrase at text[start:end] and the period it names, first to last day inclusive."""

    start: int
    end: int
    phrase: str
    first: date
    last: date
    label: str  # how the period is written: "7 May 2023", "April 2023", "2022", "summer 2022"


_NUM = r"(?P<n>\d{1,2}|a|an|one|two|three|four|five|six|seven|eight|nine|ten|(?:a )?couple of)"
_DAY = r"(?P<wd>monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
# A weekday cut short ("last Fri", "next Tues."), capitalised as a name is: "when we last sat down"
# names no Saturday. Case-sensitive, unlike the patterns below.
_SHORT_DAY = re.compile(r"\b(?P<rel>(?i:last|this past|this|next)) (?P<wd>Mon|Tues?|Wed|Thu(?:rs?)?|Fri|Sat|Sun)\b")
_PATTERNS: list[tuple[str, re.Pattern[str]]] = [(kind, re.compile(rx, re.IGNORECASE)) for kind, rx in [
    ("yesterday", r"\b(?:the day before yesterday|yesterday|last night)\b"),
    ("today", r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b"),
    ("tomorrow", r"\b(?:the day after tomorrow|tomorrow)\b"),
    ("days_ago", rf"\b{_NUM} days? ago\b"),
    ("weekday", rf"\b(?P<rel>last|this past|this|next) {_DAY}\b"),
    ("month", r"\b(?P<rel>last|this|next|this past) month\b"),
    ("months_ago", rf"\b{_NUM} months? ago\b"),
    ("year", r"\b(?P<rel>last|this|next|this past) year\b"),
    ("years_ago", rf"\b{_NUM} years? ago\b"),
    ("season", r"\b(?P<rel>last|this|next|this past) (?P<season>spring|summer|autumn|fall|winter)\b"),
]] + [("short_weekday", _SHORT_DAY)]


# Words a phrase of each kind must contain: a cheap `in` test skips the patterns a text cannot match
# (every episode's text is rendered on each search hit, so this runs on the search path).
_NEEDS = {"yesterday": ("yesterday", "last night"), "today": ("today", "tonight", "this "),
          "tomorrow": ("tomorrow",), "days_ago": ("ago",), "weekday": ("day",),
          "short_weekday": ("mon", "tue", "wed", "thu", "fri", "sat", "sun"), "month": ("month",),
          "months_ago": ("ago",), "year": ("year",), "years_ago": ("ago",),
          "season": ("spring", "summer", "autumn", "fall", "winter")}


def _unit_shift(m: re.Match[str], *, named: bool) -> int | None:
    """How many months or years away: -1, 0 or +1 for "last / this / next <unit>", -n for "<n> <units>
    ago"; None for "0 <units> ago"."""
    if named:
        return {"last": -1, "this past": -1, "this": 0, "next": 1}[m.group("rel").lower()]
    n = _count(m.group("n"))
    return -n if n else None


def _count(word: str) -> int | None:
    word = word.lower()
    return int(word) if word.isdigit() else NUMBERS.get(word)


def _shift_month(day: date, months: int) -> tuple[int, int]:
    index = day.year * 12 + day.month - 1 + months
    return index // 12, index % 12 + 1


def _month(year: int, month: int) -> tuple[date, date, str]:
    return (date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]),
            f"{MONTHS[month - 1]} {year_words(year)}")


def _season(name: str, year: int) -> tuple[date, date, str]:
    """The season that starts in `year` (winter runs December to February)."""
    first, last = SEASONS[name]
    end_year = year + 1 if last < first else year
    return (date(year, first, 1), date(end_year, last, calendar.monthrange(end_year, last)[1]),
            f"{name} {year_words(year)}")


def _period(kind: str, m: re.Match[str], today: date) -> tuple[date, date, str] | None:
    """The period a matched phrase names, seen from `today`; None when it names none."""
    phrase = m.group(0).lower()
    if kind in ("yesterday", "today", "tomorrow"):
        offset = {"the day before yesterday": -2, "yesterday": -1, "last night": -1,
                  "tomorrow": 1, "the day after tomorrow": 2}.get(phrase, 0)
        day = today + timedelta(days=offset)
        return day, day, day_words(day)
    if kind == "days_ago":
        n = _count(m.group("n"))
        if not n:
            return None
        day = today - timedelta(days=n)
        return day, day, day_words(day)
    if kind in ("weekday", "short_weekday"):
        rel, named = m.group("rel").lower(), m.group("wd").lower()
        target = next(i for i, day in enumerate(WEEKDAYS) if day.startswith(named))
        delta = (today.weekday() - target) % 7
        if rel in ("last", "this past"):  # the latest such day before today
            day = today - timedelta(days=delta or 7)
        elif rel == "next":
            day = today + timedelta(days=(target - today.weekday()) % 7 or 7)
        else:  # "this Friday": this week's, ahead or just past
            day = today + timedelta(days=target - today.weekday())
        return day, day, day_words(day)
    if kind in ("month", "months_ago"):
        shift = _unit_shift(m, named=kind == "month")
        if shift is None:
            return None
        return _month(*_shift_month(today, shift))
    if kind in ("year", "years_ago"):
        shift = _unit_shift(m, named=kind == "year")
        if shift is None:
            return None
        year = today.year + shift
        return date(year, 1, 1), date(year, 12, 31), year_words(year)
    if kind == "season":
        rel, name = m.group("rel").lower(), m.group("season").lower()
        first_month = SEASONS[name][0]
        # the season's occurrence that started last, counting one in progress (winter from December)
        current = today.year if today.month >= first_month else today.year - 1
        if rel == "this":  # this calendar year's ("this winter" in January: the one under way)
            year = today.year - 1 if name == "winter" and today.month < first_month else today.year
        elif rel == "next":
            year = current + 1
        else:
            in_it = _season(name, current)[0] <= today <= _season(name, current)[1]
            year = current - 1 if in_it else current
        return _season(name, year)
    return None


def _on_the_calendar(kind: str, m: re.Match[str], today: date) -> tuple[date, date, str] | None:
    """`_period`, or None when the period falls off the calendar (before the year 1, after 9999:
    "10 years ago" said in the year 5): such a phrase is left as it was said."""
    try:
        return _period(kind, m, today)
    except (ValueError, OverflowError):  # date() out of its years; date ± timedelta past them
        return None


def resolve(text: str, said_at: datetime | date) -> list[Resolved]:
    """Relative time phrases in `text`, in order, each with the period it names when said at `said_at`.

    Overlapping matches keep the longest ("the day before yesterday", not "yesterday"). Weeks and
    weekends are left out: "last week" is already as precise as the answer ("the week before 9 June
    2023") once the text carries its date."""
    today = said_at.date() if isinstance(said_at, datetime) else said_at
    found: list[Resolved] = []
    low = text.lower()
    for kind, pattern in _PATTERNS:
        if not any(word in low for word in _NEEDS[kind]):
            continue
        for m in pattern.finditer(text):
            period = _on_the_calendar(kind, m, today)
            if period is not None:
                found.append(Resolved(m.start(), m.end(), m.group(0), *period))
    found.sort(key=lambda r: (r.start, -(r.end - r.start)))
    kept: list[Resolved] = []
    for r in found:
        if not kept or r.start >= kept[-1].end:
            kept.append(r)
    return kept


def annotate(text: str, said_at: datetime | date | None) -> str:
    """`text` with each relative phrase followed by the period it names: "yesterday (7 May 2023)".

    A phrase already followed by a parenthesis is left alone, so annotating twice changes nothing."""
    if said_at is None or not text:
        return text
    out: list[str] = []
    pos = 0
    for r in resolve(text, said_at):
        if text[r.end:].lstrip().startswith("("):
            continue
        out.append(text[pos:r.end])
        out.append(f" ({r.label})")
        pos = r.end
    out.append(text[pos:])
    return "".join(out)
