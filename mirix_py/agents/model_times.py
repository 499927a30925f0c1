"""Times a model writes into a tool call or a topic reply, read the way a person would mean them.

Callers of the SDK must pass aware times (`boundary.inputs.parse_when`): a program can. A model
asked for "an ISO 8601 date" writes "2026-01-01", "2026-01-01T18:00" or the words the memories show
("1 January 2026"); refusing those threw away the whole reply of a weak model. Here a day alone
covers that whole day, a year or a month alone ("2026", "2026-01") the whole year or month, and a
time without a zone is read in the user's zone.
"""

from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, tzinfo

from dateutil import parser as date_parser

from mirix_py.boundary.inputs import parse_when
from mirix_py.errors import InvalidInput
from mirix_py.text.dates import parse_words

_DAY_ONLY = re.compile(r"\s*\d{4}-\d{2}-\d{2}\s*")
_YEAR_OR_MONTH = re.compile(r"\s*(\d{4})(?:-(\d{2}))?\s*")


def model_when(value: object, what: str, zone: tzinfo, *, end: bool = False) -> datetime | None:
    """`value` as an aware datetime: None for nothing; a day alone ("2026-01-01", "1 January 2026") is
    its start in `zone`, or with `end` the start of the next day (ranges end exclusive, and "up to 1
    January" includes that day); a year or a month alone likewise ("2026": from 1 January 2026, or
    with `end` up to 1 January 2027); a date-time without a zone is read in `zone`. InvalidInput when
    it reads as no time at all."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, datetime) or not isinstance(value, str):
        return parse_when(value, what)  # type: ignore[arg-type]
    first = _period_edge(value, what, end=end)
    if first is not None:
        return parse_when(datetime.combine(first, time(0), zone), what)
    day, clock = _bound_day_and_clock(value, what)
    try:
        if clock is None:
            moment = datetime.combine(day + timedelta(days=1) if end else day, time(0), zone)
        elif clock.tzinfo is None:
            moment = datetime.combine(day, clock, zone)
        else:
            moment = datetime.combine(day, clock)
    except OverflowError as exc:  # the day after 31 December 9999
        raise InvalidInput(f"{what}: {value!r} is at the end of the calendar") from exc
    return parse_when(moment, what)


def _period_edge(value: str, what: str, *, end: bool) -> date | None:
    """The first day of the year or month `value` names alone ("2026", "2026-05"), or with `end` the
    first day after it; None when `value` is no year or month alone. A year read as its first midnight
    made a search "up to 2026" end before 2026 began."""
    matched = _YEAR_OR_MONTH.fullmatch(value)
    if matched is None:
        return None
    year, month = int(matched.group(1)), matched.group(2)
    try:
        first = date(year, int(month or 1), 1)
        if not end:
            return first
        return date(year + 1, 1, 1) if month is None else date(year + first.month // 12, first.month % 12 + 1, 1)
    except ValueError as exc:  # month 13, year 0, or the year after 9999
        raise InvalidInput(f"{what}: {value!r} is not a day of the calendar") from exc


def _bound_day_and_clock(value: str, what: str) -> tuple[date, time | None]:
    """The day a search bound `value` names and its time of day (None for a day alone, zone kept when
    given); a memory's own moment is read apart (`tools._said_day_and_clock`)."""
    in_words = parse_words(value)
    if in_words is not None:
        return in_words
    try:
        parsed = date_parser.isoparse(value.strip())
    except (ValueError, OverflowError) as exc:
        raise InvalidInput(f"{what}: {value!r} is not a date or an ISO 8601 date-time") from exc
    if _DAY_ONLY.fullmatch(value):
        return parsed.date(), None
    return parsed.date(), parsed.timetz()


__all__ = ["model_when"]
