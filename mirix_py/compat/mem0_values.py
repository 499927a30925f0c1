"""mem0's `metadata` as JSON: what the SDK and the REST routes take, and how small it must be.

The metadata is kept as JSON (in each input's caller id, `compat.mem0`) and read back as it was
given, so a value JSON cannot hold is refused, naming its key path, before anything is written:
serialising with `default=str` kept a set as "{'a', 'b'}", bytes as "b'...'", a Decimal or UUID
as text and any other object as its repr (which may hold what the object keeps private), and NaN
or Infinity, which JSON has not, were taken by the SDK and read back over REST as null. A
`datetime` or `date` is taken as its ISO 8601 text, as mem0's default store (Qdrant, through
pydantic) keeps one. The REST routes take the same values: their bodies reach this check too.
"""

from __future__ import annotations

import json
import math
from datetime import date
from typing import Any

from mirix_py.errors import InvalidInput
from mirix_py.text.storable import first_problem

JSON_VALUES = "str, int, float, bool, None, a list, or a dict with str keys"
# the fewest characters a string can shrink to when the vault takes its secrets out: "[vault:<id>]"
SHORTEST_PLACEHOLDER = len("[vault:x]")


def _path(where: str) -> str:
    """A key path as an error names it: the start of one a long key would make long."""
    return where if len(where) <= 80 else where[:80] + "…"


def plain_metadata(metadata: Any) -> dict[str, Any]:
    """mem0's `metadata` as JSON values, each date or date-time as its ISO 8601 text. Anything else
    (a set, a tuple, bytes, a Decimal, any object, NaN or Infinity, a key that is not a string, a
    value nested deeper than `storable.MAX_NESTING`) raises InvalidInput naming its key path."""
    if not isinstance(metadata, dict):
        raise InvalidInput(f"metadata must be a dict, not {type(metadata).__name__}")
    if found := first_problem(metadata, "metadata"):  # before walking it: nested too deep, control characters
        raise InvalidInput(found)
    value: dict[str, Any] = _plain(metadata, "metadata")
    return value


def _plain(value: Any, where: str) -> Any:
    if value is None or isinstance(value, (str, int)):  # bool is an int
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidInput(f"{_path(where)} is {value}: JSON has no NaN or Infinity")
        return value
    if isinstance(value, date):  # a datetime is a date
        return value.isoformat()
    if isinstance(value, list):
        return [_plain(v, f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise InvalidInput(f"{_path(where)} has a key of type {type(key).__name__}, not str "
                                   "(JSON keys are strings)")
            out[key] = _plain(item, f"{where}.{key}")
        return out
    raise InvalidInput(f"{_path(where)} is of type {type(value).__name__}, not a JSON value ({JSON_VALUES})")


def least_json_chars(value: Any) -> int:
    """The fewest characters `value` (JSON values, as `plain_metadata` leaves them) can take as
    compact JSON once the vault has taken secrets out of its strings and keys: a string keeps at
    least `SHORTEST_PLACEHOLDER` characters of its own. Cheap: it decides nothing about secrets."""
    if isinstance(value, str):
        return 2 + min(len(value), SHORTEST_PLACEHOLDER)
    if isinstance(value, dict):
        return 2 + max(len(value) - 1, 0) + sum(least_json_chars(k) + 1 + least_json_chars(v)
                                                for k, v in value.items())
    if isinstance(value, list):
        return 2 + max(len(value) - 1, 0) + sum(least_json_chars(v) for v in value)
    return len(json.dumps(value))


__all__ = ["JSON_VALUES", "least_json_chars", "plain_metadata"]
