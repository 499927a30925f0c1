"""Times as people read them: stored in UTC, shown in the user's zone with the zone named.

Records keep every time in UTC (`records._require_aware`), so a memory's text is the same before
and after it is stored. What the CLI and the offline chat show is converted here to the display
zone: `MIRIX_TIMEZONE` (an IANA name such as "America/Los_Angeles") or, unset, the machine's.

What a memory's own text states ("[1 January 2026, 23:30] ... yesterday (31 December 2025)") is on
the speaker's clock instead, kept with it as a UTC offset (`records.SaidOffset`): the offset its time
was given with, else `MIRIX_TIMEZONE`'s (`said_offset`); never the machine's, so the same input makes
the same text wherever the engine runs.
"""

from __future__ import annotations

import os
import re
from datetime import datetime, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from mirix_py.errors import InvalidInput
from mirix_py.records import utc_offset_minutes

__all__ = ["display_zone", "local_when", "machine_zone", "said_offset", "shown_text", "user_zone", "zone_name"]


def display_zone(name: str | None = None) -> tzinfo:
    """The zone called `name`, or the machine's own zone (`machine_zone`) when `name` is empty."""
    if not name:
        return machine_zone()
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise InvalidInput(f"unknown time zone {name!r}: use an IANA name such as 'Europe/Lisbon'") from exc


def machine_zone() -> tzinfo:
    """This machine's zone with its rules ($TZ, else /etc/localtime), so that a summer time shown or
    typed in winter gets summer's offset (the offset of now did not); its offset now when neither
    names a zone zoneinfo knows (a POSIX rule in $TZ, a system without zone files)."""
    try:
        if "TZ" in os.environ:
            return ZoneInfo(os.environ["TZ"].removeprefix(":") or "UTC")  # an empty TZ is UTC to the C library
        return _localtime_zone("/etc/localtime")
    except (OSError, ValueError, ZoneInfoNotFoundError):
        return datetime.now().astimezone().tzinfo or timezone.utc


def _localtime_zone(path: str) -> tzinfo:
    """The zone of a localtime file: by its IANA name when it links into a zoneinfo folder, else as read."""
    _, linked, key = os.path.realpath(path).partition("/zoneinfo/")
    if linked:
        try:
            return ZoneInfo(key)
        except (ValueError, ZoneInfoNotFoundError):
            pass
    with open(path, "rb") as fh:
        return ZoneInfo.from_file(fh)


def user_zone(name: str | None) -> tzinfo | None:
    """The zone `name` (`MIRIX_TIMEZONE`) names, None when it is unset: unlike `display_zone`, never the
    machine's, so what is stored and what a question's "yesterday" means do not depend on the host."""
    return display_zone(name) if name else None


def said_offset(given: int | None, moment: datetime, zone: tzinfo | None) -> int | None:
    """The UTC offset (minutes east) something said at `moment` was said at: `given` (the offset its time
    was given in, `Message.said_offset_minutes`), else `zone`'s at that moment, else None (UTC)."""
    if given is not None or zone is None:
        return given
    return utc_offset_minutes(moment.astimezone(zone))


def zone_name(zone: tzinfo) -> str:
    """The zone as a person would name it: its IANA key when it has one, else its abbreviation."""
    key = getattr(zone, "key", None)
    return key or (datetime.now(zone).tzname() or "UTC")


def local_when(moment: datetime | None, zone: tzinfo) -> str:
    """"2024-05-12 20:00 PDT": the moment in `zone`, its abbreviation named."""
    if moment is None:
        return ""
    local = moment.astimezone(zone)
    return f"{local:%Y-%m-%d %H:%M} {local.tzname() or zone_name(zone)}"


_LEADING_TIME = re.compile(r"^\[[^\]\n]{4,40}\]")


def shown_text(text: str, moment: datetime | None, zone: tzinfo) -> str:
    """A memory's text with the time it opens with ("[13 May 2024, 03:00] ...", stored in UTC)
    shown in `zone` instead ("[2024-05-12 20:00 PDT] ..."); other texts as they are."""
    if moment is None or not _LEADING_TIME.match(text) or not re.search(r"\d{1,2}:\d{2}", text[:42]):
        return text
    return _LEADING_TIME.sub(lambda _: f"[{local_when(moment, zone)}]", text, count=1)
