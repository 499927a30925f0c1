"""Validation of what callers hand to `add`: one place that turns loose input into an InputRecord
or raises InvalidInput before anything is written."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any, Sequence

from dateutil import parser as date_parser
from pydantic import ValidationError

from mirix_py.errors import InvalidInput
from mirix_py.records import (
    INPUT_PREFIX, InputKind, InputRecord, MemoryType, Message, at_offset, is_input_id, offset_problem, utc_offset_minutes,
    utcnow,
)
from mirix_py.text.storable import CONTROL, first_problem, id_problem, problem


# A time an input is stored under lies a year inside the calendar: the update flows reckon weeks and
# days around it ("yesterday", the repeat window), which must not run off either end.
STORED_YEARS = (2, 9998)


# ISO 8601 reads a year or a month alone ("2024", "2024-05") as its first midnight: no time a caller meant
YEAR_OR_MONTH = re.compile(r"\d{4}(?:-\d{2})?")
WANTED_TIME = "an ISO 8601 date-time with a zone, e.g. 2024-05-01T14:30:00+00:00"


def _aware(value: datetime | str, what: str) -> datetime:
    """`value` as an aware datetime, as it was given; InvalidInput for a naive or unparseable one, or
    for a year or a month alone (told it names no day: "no time zone" sent a caller adding a zone to "2024")."""
    if isinstance(value, str):
        if YEAR_OR_MONTH.fullmatch(value.strip()):
            raise InvalidInput(f"{what}: {value!r} names no day, only a year or a month; pass {WANTED_TIME}")
        try:
            value = date_parser.isoparse(value.strip())
        except (ValueError, OverflowError) as exc:
            raise InvalidInput(f"{what}: {value!r} is not an ISO 8601 date-time") from exc
    if not isinstance(value, datetime):
        raise InvalidInput(f"{what} must be a datetime or an ISO 8601 string, not {type(value).__name__}")
    if value.tzinfo is None or value.utcoffset() is None:
        raise InvalidInput(f"{what} has no time zone; pass an aware datetime (e.g. ...+00:00)")
    return value


def parse_when(value: datetime | str | None, what: str = "occurred_at", *, stored: bool = False) -> datetime | None:
    """Accept an aware datetime or an ISO string with a zone, and return it in UTC; reject naive and
    unparseable dates. In UTC, since arithmetic on a zone's wall clock ("+ 1 µs" on 02:15 in the hour
    Berlin repeats in October) forgets which of the two 02:15s it was. `stored`: the time an input or a
    frame happened at, inside `STORED_YEARS`."""
    if value is None:
        return None
    given = _aware(value, what)
    try:  # a time at the calendar's edge may not convert (year 1 east of UTC, 9999 west)
        in_utc = given.astimezone(timezone.utc)
    except OverflowError as exc:
        raise InvalidInput(f"{what} {given.isoformat()} is out of range once converted to UTC") from exc
    if stored and not STORED_YEARS[0] <= in_utc.year <= STORED_YEARS[1]:
        raise InvalidInput(f"{what} {given.isoformat()} is outside the years {STORED_YEARS[0]} to {STORED_YEARS[1]}")
    return in_utc


def parse_said(value: datetime | str | None, what: str = "occurred_at") -> datetime | None:
    """When something was said, as `parse_when(stored=True)` reads it, on the fixed UTC offset it was
    given in (`records.at_offset`): the speaker's clock is kept for the text of what they said
    (`Message.said_offset_minutes`), and arithmetic on it is exact, as on UTC (no zone's wall clock)."""
    if value is None:
        return None
    given = _aware(value, what)
    in_utc = parse_when(given, what, stored=True)
    assert in_utc is not None
    offset = utc_offset_minutes(given)
    if problem := offset_problem(offset):
        raise InvalidInput(f"{what} {given.isoformat()}: {problem}")
    return at_offset(in_utc, offset)


def parse_range(start: datetime | str | None, end: datetime | str | None) -> tuple[datetime | None, datetime | None]:
    """A time range [start, end) as `parse_when` reads each end; InvalidInput when it runs backwards."""
    since, until = parse_when(start, "start"), parse_when(end, "end")
    if since is not None and until is not None and since > until:
        raise InvalidInput(f"start {since.isoformat()} is after end {until.isoformat()}")
    return since, until


def check_whole(value: Any, what: str) -> int:
    """`value` as a count: an int (a bool, a float or a numeric string is refused, not rounded)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(f"{what} must be a whole number, not {type(value).__name__} {value!r}")
    if not -2**63 <= value < 2**63:  # what a database integer holds
        raise InvalidInput(f"{what} {value} is larger than any count")
    return value


PATH_STEPS = (".", "..")


def check_user(user_id: str) -> None:
    """InvalidInput unless `user_id` is a non-blank line of at most 256 characters (the REST server's
    rule: an id with a NUL would be refused by PostgreSQL and taken by SQLite)."""
    if not isinstance(user_id, str) or not user_id.strip():
        raise InvalidInput("user_id is required")
    if len(user_id) > 256:
        raise InvalidInput("user_id is longer than 256 characters")
    if found := id_problem(user_id):
        raise InvalidInput(f"user_id {found}")
    if user_id in PATH_STEPS:
        raise InvalidInput(f"user_id {user_id!r} is a path step, not an id (a URL cannot name it)")


def check_storable(value: Any, where: str) -> None:
    """InvalidInput when a string in `value` holds what a backend cannot store (`text.storable`)."""
    found = first_problem(value, where)
    if found:
        raise InvalidInput(found)


def check_source_id(source_id: Any, what: str = "source_id") -> None:
    """InvalidInput unless `source_id` is None or an id an input can be logged with: a non-blank string
    a backend can store that is no input id (`no_input_id`)."""
    if source_id is None:
        return
    if not isinstance(source_id, str) or not source_id.strip():
        raise InvalidInput(f"{what} must be a non-empty string")
    check_storable(source_id, what)
    no_input_id(source_id, what)


def no_input_id(caller_id: str | None, what: str) -> None:
    """InvalidInput for a caller's id (an input's `source_id`, a message's `id`) of the engine's input
    ids' form (`records.is_input_id`: "in_" and 32 hex digits): memories cite it beside their input's
    own id, where it would be read as an input id, another user's even."""
    if caller_id is not None and is_input_id(caller_id):
        raise InvalidInput(f"{what} {caller_id[:80]!r} has the form of the engine's input ids ({INPUT_PREFIX!r} and 32 "
                           "hex digits; memories cite it beside them): choose an id that does not")


def parse_memory_types(values: Sequence[MemoryType | str] | None) -> list[MemoryType] | None:
    """The memory types named, or InvalidInput naming one that is not."""
    try:
        return [MemoryType(t) for t in values] if values else None
    except ValueError as exc:
        raise InvalidInput(f"unknown memory type: {exc}") from exc


def _check_text(text: Any, where: str) -> str:
    if isinstance(text, (bytes, bytearray, memoryview)):
        raise InvalidInput(f"{where} is bytes; pass text (images go to add_screenshot)")
    if not isinstance(text, str):
        raise InvalidInput(f"{where} must be a string, not {type(text).__name__}")
    if not text.strip():
        raise InvalidInput(f"{where} is empty")
    bad = sum(1 for ch in text if ch in CONTROL)
    if bad:
        raise InvalidInput(f"{where} holds {bad} control character(s) (binary data?); pass plain text")
    if found := problem(text):
        raise InvalidInput(f"{where} {found}")
    return text


def parse_expiry(value: datetime | str | None, now: datetime | None = None) -> datetime | None:
    """An expiry as `parse_when` reads it, which must lie in the future (an input or memory that would
    expire at once is a mistake, not a request)."""
    when = parse_when(value, "expires_at")
    if when is not None and when <= (now or utcnow()):
        raise InvalidInput(f"expires_at {when.isoformat()} is not in the future")
    return when


def normalize_add(content: Any, *, user_id: str, occurred_at: datetime | str | None, source_id: str | None,
                  kind: str, max_chars: int, metadata: dict[str, str] | None = None,
                  expires_at: datetime | str | None = None) -> InputRecord:
    check_user(user_id)
    expiry = parse_expiry(expires_at)
    try:
        input_kind = InputKind(kind)
    except ValueError as exc:
        raise InvalidInput(f"unknown input kind {kind!r}") from exc
    when = parse_said(occurred_at) or utcnow()
    offset = utc_offset_minutes(when)  # the input's own clock, for its messages that give no time
    check_source_id(source_id)

    if isinstance(content, (str, bytes, bytearray, memoryview)):
        messages = [Message(role="user", content=_check_text(content, "content"), said_offset_minutes=offset)]
    elif isinstance(content, Sequence) and not isinstance(content, (str, bytes)):
        if not content:
            raise InvalidInput("content is an empty list of messages")
        messages = []
        for i, raw in enumerate(content):
            if isinstance(raw, Message):
                raw = raw.model_dump()
            if not isinstance(raw, dict):
                raise InvalidInput(f"message {i} must be a dict with 'role' and 'content'")
            raw = dict(raw)
            _check_text(raw.get("content"), f"message {i} content")
            if raw.get("occurred_at") is not None:
                raw["occurred_at"] = parse_said(raw["occurred_at"], f"message {i} occurred_at")
            elif offset is not None:
                raw["said_offset_minutes"] = offset
            check_storable(raw, f"message {i}")
            try:
                messages.append(Message.model_validate(raw))
            except ValidationError as exc:
                raise InvalidInput(f"message {i} is invalid: {exc.errors()[0]['msg']} at {exc.errors()[0]['loc']}") from exc
            no_input_id(messages[-1].id, f"message {i} id")
        input_kind = InputKind.messages if input_kind is InputKind.text else input_kind
    elif content is None:
        raise InvalidInput("content is required")
    else:
        raise InvalidInput(f"content must be a string or a list of messages, not {type(content).__name__}")

    total = sum(len(m.content) for m in messages)
    if total > max_chars:
        raise InvalidInput(f"input is {total} characters, over the limit of {max_chars} (settings.max_input_chars)")
    metadata = dict(metadata or {})
    if not all(isinstance(k, str) and isinstance(v, str) for k, v in metadata.items()):
        raise InvalidInput("metadata must map strings to strings")
    check_storable(metadata, "metadata")
    return InputRecord(user_id=user_id, kind=input_kind, messages=messages, source_id=source_id, occurred_at=when,
                       metadata=metadata, expires_at=expiry)
