"""Keyword topics and relative time ranges for offline chat.

Without an LLM, the "topic" of a message is its content words (names kept as written), which is
what the search index needs to find related memories. Time phrases ("yesterday", "in May 2023")
are turned into concrete ranges so episodic search can filter by date.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, timezone

from mirix_py.agents.offline.rules import lexicon
from mirix_py.text.words import is_sentence_start

__all__ = ["STOPWORDS", "extract_keywords", "parse_time_range"]

# Function words plus the fillers of casual chat ("hey", "wow", "awesome"), which are never topics.
STOPWORDS = lexicon.words("stopwords")

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*(?:['’][A-Za-z]+)*(?:-[A-Za-z0-9]+)*")
_END_PUNCT = ".!?:;"


def _is_sentence_start(text: str, pos: int) -> bool:
    return is_sentence_start(text, pos, _END_PUNCT)


def _normalise(token: str) -> str:
    token = token.replace("’", "'")
    if token.lower().endswith("'s"):
        token = token[:-2]
    return token


def _vocative(text: str, start: int, tok: str) -> bool:
    """"Maria, what's the deal?": a sentence-initial word set off by a comma is a name being
    addressed (the stopword list already removes "Yes," "Honestly," and friends)."""
    after = text[start + len(tok):start + len(tok) + 1]
    return after == "," and not tok.endswith(("ly", "ing", "ed"))


def extract_keywords(text: str, max_keywords: int = 8) -> list[str]:
    """Return up to `max_keywords` content words of `text`, in order of first occurrence.

    Names (capitalised mid-sentence, or all-caps acronyms) keep their case; other words are
    lowercased. A capitalised word at the start of a sentence is lowercased unless the text also
    uses it capitalised elsewhere, since sentence case says nothing about names.
    """
    if not text or max_keywords <= 0:
        return []
    tokens = [(m.start(), _normalise(m.group())) for m in _TOKEN.finditer(text)]
    mid_caps = {
        tok
        for start, tok in tokens
        if tok[:1].isupper() and not _is_sentence_start(text, start)
    }
    keywords: list[str] = []
    seen: set[str] = set()
    for start, tok in tokens:
        lower = tok.lower()
        if lower in STOPWORDS or len(tok) < 3 and not (tok.isupper() and len(tok) >= 2):
            continue
        if lower.isdigit():
            continue
        if tok.isupper() and len(tok) >= 2 and tok != "I":
            word = tok  # acronym such as LGBTQ
        elif tok[:1].isupper() and (tok in mid_caps or _vocative(text, start, tok)):
            word = tok
        else:
            word = lower
        key = word.lower()
        if key in seen:
            continue
        seen.add(key)
        keywords.append(word)
        if len(keywords) >= max_keywords:
            break
    return keywords


# ---------------------------------------------------------------- time ranges

_MONTHS = {
    name: i
    for i, names in enumerate(
        [
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ],
        start=1,
    )
    for name in names
}
_MONTH = r"(?P<month>january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"

_ISO = re.compile(rf"(?<!\d){_YEAR}-(?P<mon>[01]\d)-(?P<dd>[0-3]\d)(?!\d)")
_DAY_MONTH_YEAR = re.compile(rf"(?i)\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b")
_MONTH_DAY_YEAR = re.compile(rf"(?i)\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b")
_MONTH_YEAR = re.compile(rf"(?i)\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b")
_IN_MONTH = re.compile(rf"(?i)\b(?P<prep>in|during|last|this)\s+{_MONTH}(?![\w])(?!\s*,?\s*(?:of\s+)?\d)")
_IN_YEAR = re.compile(rf"(?i)\b(?:in|during|of)\s+{_YEAR}\b")
_YESTERDAY = re.compile(r"(?i)\byesterday\b")
_TODAY = re.compile(r"(?i)\b(?:today|tonight|this\s+morning|this\s+afternoon|this\s+evening)\b")
_DAYS_AGO = re.compile(r"(?i)\b(?P<n>\d{1,3}|a|one|two|three|four|five|six|seven|a\s+couple\s+of|a\s+few)\s+days?\s+ago\b")
_RELATIVE = re.compile(r"(?i)\b(?P<which>last|this|past)\s+(?P<unit>week|month|year)\b")

_NUMBER_WORDS = {"a": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "a couple of": 2, "a few": 3}


def _day_range(day: date, tz) -> tuple[datetime, datetime]:
    start = datetime.combine(day, time(0), tzinfo=tz)
    return start, datetime.combine(day + timedelta(days=1), time(0), tzinfo=tz)


def _month_range(year: int, month: int, tz) -> tuple[datetime, datetime]:
    start = datetime(year, month, 1, tzinfo=tz)
    end = datetime(year + (month == 12), month % 12 + 1, 1, tzinfo=tz)
    return start, end


def _year_range(year: int, tz) -> tuple[datetime, datetime]:
    return datetime(year, 1, 1, tzinfo=tz), datetime(year + 1, 1, 1, tzinfo=tz)


def _safe_day(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def parse_time_range(text: str, now: datetime) -> tuple[datetime, datetime] | None:
    """Return the [start, end) range named by the first time phrase in `text`, or None.

    Ranges are whole calendar units in `now`'s timezone (a naive `now` is taken as UTC): "last
    week" is the previous Monday-to-Monday week, "last month" the previous calendar month, while
    "the past week" is the rolling 7 days up to today. When phrases overlap ("on 8 May 2023"
    contains "May 2023"), the earliest-starting, then longest, wins.
    """
    if not text:
        return None
    tz = now.tzinfo or timezone.utc
    if now.tzinfo is None:
        now = now.replace(tzinfo=tz)
    today = now.date()
    candidates: list[tuple[int, int, tuple[datetime, datetime]]] = []

    def add(m: re.Match[str], rng: tuple[datetime, datetime] | None) -> None:
        if rng is not None:
            candidates.append((m.start(), -(m.end() - m.start()), rng))

    for m in _ISO.finditer(text):
        day = _safe_day(int(m.group("year")), int(m.group("mon")), int(m.group("dd")))
        add(m, _day_range(day, tz) if day else None)
    for pattern in (_DAY_MONTH_YEAR, _MONTH_DAY_YEAR):
        for m in pattern.finditer(text):
            day = _safe_day(int(m.group("year")), _MONTHS[m.group("month").lower()], int(m.group("day")))
            add(m, _day_range(day, tz) if day else None)
    for m in _MONTH_YEAR.finditer(text):
        add(m, _month_range(int(m.group("year")), _MONTHS[m.group("month").lower()], tz))
    for m in _IN_MONTH.finditer(text):
        month_word = m.group("month")
        if month_word.lower() == "may" and not month_word[0].isupper():
            continue  # "in may" is almost always the modal verb
        month = _MONTHS[month_word.lower()]
        # The most recent such month that has started ("in May" said in March means last May),
        # except "this May", which is the current year's.
        if m.group("prep").lower() == "this" or month <= today.month:
            year = today.year
        else:
            year = today.year - 1
        add(m, _month_range(year, month, tz))
    for m in _IN_YEAR.finditer(text):
        add(m, _year_range(int(m.group("year")), tz))
    for m in _YESTERDAY.finditer(text):
        add(m, _day_range(today - timedelta(days=1), tz))
    for m in _TODAY.finditer(text):
        add(m, _day_range(today, tz))
    for m in _DAYS_AGO.finditer(text):
        raw = " ".join(m.group("n").lower().split())
        n = int(raw) if raw.isdigit() else _NUMBER_WORDS[raw]
        add(m, _day_range(today - timedelta(days=n), tz))
    for m in _RELATIVE.finditer(text):
        which, unit = m.group("which").lower(), m.group("unit").lower()
        offset = 0 if which == "this" else -1
        if which == "past":
            # "the past week" is rolling: the last 7 (30, 365) days up to and including today.
            days = {"week": 7, "month": 30, "year": 365}[unit]
            rng = (
                datetime.combine(today - timedelta(days=days), time(0), tzinfo=tz),
                datetime.combine(today + timedelta(days=1), time(0), tzinfo=tz),
            )
        elif unit == "week":
            monday = today - timedelta(days=today.weekday()) + timedelta(weeks=offset)
            rng = (
                datetime.combine(monday, time(0), tzinfo=tz),
                datetime.combine(monday + timedelta(weeks=1), time(0), tzinfo=tz),
            )
        elif unit == "month":
            year, month = today.year, today.month + offset
            if month == 0:
                year, month = year - 1, 12
            rng = _month_range(year, month, tz)
        else:
            rng = _year_range(today.year + offset, tz)
        add(m, rng)

    if not candidates:
        return None
    candidates.sort(key=lambda c: (c[0], c[1]))
    return candidates[0][2]
