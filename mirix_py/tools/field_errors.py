"""A pydantic validation error of a memory edit, as one line naming each field (for `update`
over the SDK, REST, CLI and the viewer): `summary: should be a valid string (got 5)`, not
pydantic's multi-line report with its union tags and documentation links."""

from __future__ import annotations

from typing import Any, Iterable

from pydantic import ValidationError

SHOWN = 3  # problems named in full; the rest are counted


def _got(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def describe(exc: ValidationError, *, memory_type: str, fields: Iterable[str]) -> str:
    """`invalid fields for <type> memory: <field>: <problem> (got <value>); ...`. `fields`: the
    fields a memory of this type has, listed when a name is not one of them."""
    parts: list[str] = []
    errors = exc.errors()
    for err in errors:
        loc = [str(p) for p in err.get("loc", ())]
        if loc and loc[0] == memory_type:  # the tagged union's branch, not a field
            loc = loc[1:]
        name = ".".join(loc) or "fields"
        if err.get("type") == "extra_forbidden":
            article = "an" if memory_type[:1] in "aeiou" else "a"
            part = f"{name}: not a field of {article} {memory_type} memory (its fields: {', '.join(sorted(fields))})"
        else:
            message = str(err.get("msg", "invalid")).removeprefix("Value error, ").removeprefix("Input ")
            message = message[:1].lower() + message[1:]
            part = f"{name}: {message} (got {_got(err.get('input'))})"
        if part not in parts:
            parts.append(part)
    more = f"; and {len(parts) - SHOWN} more" if len(parts) > SHOWN else ""
    return f"invalid fields for {memory_type} memory: " + "; ".join(parts[:SHOWN]) + more


__all__ = ["describe"]
