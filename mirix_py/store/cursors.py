"""Cursors of the store's listings: where a page ended, as opaque text a client passes back.

A listing read by offset repeats or skips rows when rows arrive or leave between pages; one read
after a position does not. `ListingPosition` is what the input log's and the memory list's positions
share: their times kept in UTC, a storable id, and the cursor's encoding (URL-safe base64 of the
position's JSON), refused as InvalidInput for any text the listing did not write.
"""

from __future__ import annotations

import base64
from datetime import datetime, timezone
from typing import ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict

from mirix_py.errors import InvalidInput
from mirix_py.text.storable import id_problem

Position = TypeVar("Position", bound="ListingPosition")


def in_utc(value: datetime | None) -> datetime | None:
    """A position's time in UTC; ValueError for one at the calendar's edge that does not convert (year 1
    east of UTC), so a crafted cursor is refused rather than failing the query."""
    try:
        return None if value is None else value.astimezone(timezone.utc)
    except OverflowError as exc:
        raise ValueError("a time is out of range once converted to UTC") from exc


def storable_id(value: str) -> str:
    """A position's id as every backend compares it (a NUL, say, PostgreSQL refuses in a comparison)."""
    if found := id_problem(value):
        raise ValueError(f"id {found}")
    return value


class ListingPosition(BaseModel):
    """A row's place in one listing's total order. Subclasses name the fields that order it and
    `LISTING`, the listing's name in the error a foreign cursor gets."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    LISTING: ClassVar[str] = "a listing"

    def cursor(self) -> str:
        """This position as the opaque text a client passes back: URL-safe base64 of its JSON, unpadded."""
        return base64.urlsafe_b64encode(self.model_dump_json().encode("utf-8")).decode("ascii").rstrip("=")

    @classmethod
    def from_cursor(cls: type[Position], cursor: str) -> Position:
        """The position `cursor()` wrote; InvalidInput for any other text, so nothing is listed from a
        position nobody gave."""
        try:
            raw = base64.b64decode(cursor + "=" * (-len(cursor) % 4), altchars=b"-_", validate=True)
            return cls.model_validate_json(raw)
        except ValueError:  # not base64 (binascii.Error), not ASCII, or not a position's JSON (ValidationError)
            raise InvalidInput(f"{cursor[:80]!r} is not a cursor of {cls.LISTING}: pass a page's "
                               "next cursor as it was given") from None
