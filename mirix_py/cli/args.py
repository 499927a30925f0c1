"""What the `mirix` command makes of its arguments: memory type names, dates typed without a zone,
JSON messages on stdin, field assignments, and history events as what changed. Pure functions;
each bad value is an InvalidInput whose message says what would have been accepted."""

from __future__ import annotations

import json
from datetime import timedelta, timezone, tzinfo
from typing import Any, Sequence

from dateutil import parser as date_parser

from mirix_py.boundary.timezones import display_zone, machine_zone
from mirix_py.errors import InvalidInput
from mirix_py.records import HistoryEvent, MemoryType

TYPE_ALIASES = {"vault": MemoryType.knowledge_vault.value, "kv": MemoryType.knowledge_vault.value,
                "secret": MemoryType.knowledge_vault.value, "episode": MemoryType.episodic.value,
                "fact": MemoryType.semantic.value, "procedure": MemoryType.procedural.value,
                "document": MemoryType.resource.value}
_HIDDEN = frozenset({"id", "user_id", "memory_type", "created_at", "updated_at"})


def memory_types(names: Sequence[str] | None) -> list[str] | None:
    """Type names as given to `-t` (a common alias such as `vault` too), or a message listing the valid ones."""
    if not names:
        return None
    valid = [t.value for t in MemoryType]
    out = []
    for name in names:
        key = name.strip().lower().replace("-", "_")
        key = TYPE_ALIASES.get(key, key)
        if key not in valid:
            raise InvalidInput(f"unknown memory type {name!r}: use one of {', '.join(valid)}")
        out.append(key)
    return out


def typed_zone(name: str | None) -> tzinfo:
    """The zone a time typed without one is read in: the zone `name` (MIRIX_TIMEZONE, the one tables
    show times in), else this machine's (`machine_zone`)."""
    return display_zone(name) if name else machine_zone()


def local_when(value: str | None, what: str, zone: tzinfo | None = None) -> str | None:
    """An ISO 8601 date-time; one without a zone is read in `zone` (default: this machine's) as zoneinfo
    reads a wall time: one the clocks skip takes the offset before the change (02:30 on the night
    they spring forward is 03:30 summer time), one they repeat is its first occurrence. A time with
    no UTC equivalent (0001-01-01T00:00 east of UTC) is refused here, as a bad value, not later; one
    whose offset has seconds (a local mean time, before a zone kept standard time) is given in UTC."""
    if value is None:
        return None
    try:
        parsed = date_parser.isoparse(value.strip())
    except (ValueError, OverflowError) as exc:
        raise InvalidInput(f"{what}: {value!r} is not an ISO 8601 date or date-time") from exc
    if parsed.tzinfo is None or parsed.utcoffset() is None:
        parsed = parsed.replace(tzinfo=zone or machine_zone())
    try:
        in_utc = parsed.astimezone(timezone.utc)
    except (ValueError, OverflowError) as exc:
        raise InvalidInput(f"{what}: {parsed.isoformat()} is off the calendar in UTC (years 1 to 9999)") from exc
    if (parsed.utcoffset() or timedelta()) % timedelta(minutes=1):  # a local mean time's (-07:52:58)
        return in_utc.isoformat()  # ISO 8601 readers take offsets in whole minutes
    return parsed.isoformat()


def messages_or_text(raw: str, *, messages: bool) -> str | list[dict[str, Any]]:
    """A JSON list of chat messages (objects with `content`) as messages, anything else as text.
    With `messages`, text that is not such a list is an error rather than stored as it stands."""
    stripped = raw.strip()
    if stripped.startswith("["):
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as exc:
            if messages:
                raise InvalidInput(f"--messages: stdin is not JSON ({exc})") from exc
            return raw
        if isinstance(data, list) and data and all(isinstance(m, dict) and "content" in m for m in data):
            return data
    if messages:
        raise InvalidInput('--messages: expected a JSON list such as [{"role": "user", "content": "..."}]')
    return raw


def field_assignments(pairs: Sequence[str], fields_json: str | None) -> dict[str, Any]:
    """`name=value` pairs (a value that reads as JSON is taken as JSON: lists, numbers) and/or a JSON object."""
    fields: dict[str, Any] = {}
    if fields_json:
        try:
            loaded = json.loads(fields_json)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"--fields-json is not JSON: {exc}") from exc
        if not isinstance(loaded, dict):
            raise InvalidInput("--fields-json must be a JSON object of field -> value")
        fields.update(loaded)
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name.strip():
            raise InvalidInput(f"{pair!r} is not name=value (e.g. summary='Tom is a pilot')")
        try:
            parsed: Any = json.loads(value) if value[:1] in "[{\"0123456789-" or value in ("true", "false",
                                                                                          "null") else value
        except json.JSONDecodeError:
            parsed = value
        fields[name.strip()] = parsed
    if not fields:
        raise InvalidInput("nothing to update: give name=value pairs or --fields-json")
    return fields


def _short(value: Any, width: int = 80) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = text.replace("\n", " ⏎ ")
    return text if len(text) <= width else text[: width - 1] + "…"


def event_changes(event: HistoryEvent) -> list[str]:
    """One history event as lines a person reads: the fields it set, changed or cleared."""
    before, after = event.before or {}, event.after or {}
    if event.erased and event.before is None and event.after is None:
        return ["(erased)"]
    if event.before is None and event.after is not None:
        return [f"+ {k}: {_short(v)}" for k, v in after.items() if k not in _HIDDEN and v not in ("", [], None)]
    if event.after is None:
        return ["(deleted)"]
    lines = []
    for key in [k for k in {**before, **after} if k not in _HIDDEN]:
        old, new = before.get(key), after.get(key)
        if old == new:
            continue
        if isinstance(old, list) and isinstance(new, list):
            added = [x for x in new if x not in old]
            removed = [x for x in old if x not in new]
            parts = ([f"+{_short(x, 40)}" for x in added] + [f"-{_short(x, 40)}" for x in removed])
            lines.append(f"~ {key}: {' '.join(parts)}")
        else:
            lines.append(f"~ {key}: {_short(old, 60)} → {_short(new, 60)}")
    return lines or ["(no field changed)"]

