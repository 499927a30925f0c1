"""A memory row keeps each long text once: fields that appear verbatim in the row's search text
are stored as (offset, length) references into it.

The search text (`MemoryRow.text`: full-text index, PostgreSQL tsvector, substring search) is
rendered from the typed fields, so an episode's summary and details, a resource's content or a
fact's details used to be stored twice in the same row. `to_refs` replaces each such string
field by a reference under the reserved key `$text` (not a valid field name, so it cannot
collide with a record's fields); `from_refs` puts the strings back. Rows written before this
layout have no `$text` key and read as they are. Pure functions; `MemoryStore.to_row` and
`to_record` are their only callers, and whatever rewrites `MemoryRow.text` must rewrite
`fields` with it (`doctor` re-renders both through `to_row`).
"""

from __future__ import annotations

from typing import Any, Mapping

REFS_KEY = "$text"
MIN_REF_CHARS = 24  # a reference costs about 20 bytes of JSON; shorter strings stay inline


def to_refs(fields: Mapping[str, Any], text: str) -> dict[str, Any]:
    """`fields` with every string of at least MIN_REF_CHARS that occurs in `text` moved out."""
    out: dict[str, Any] = {}
    refs: dict[str, list[int]] = {}
    for key, value in fields.items():
        if isinstance(value, str) and len(value) >= MIN_REF_CHARS:
            at = text.find(value)
            if at >= 0:
                refs[key] = [at, len(value)]
                continue
        out[key] = value
    if refs:
        out[REFS_KEY] = refs
    return out


def from_refs(fields: Mapping[str, Any], text: str) -> dict[str, Any]:
    """The stored `fields` with their references into `text` resolved.

    Raises ValueError when a reference points outside the text: the row was changed by
    something that rewrote `text` without `fields`, and reading it on would return wrong data.
    """
    out = dict(fields)
    refs = out.pop(REFS_KEY, None)
    if not refs:
        return out
    for key, (at, length) in refs.items():
        if at < 0 or at + length > len(text):
            raise ValueError(f"field {key!r} points outside the row's search text ({at}+{length} > {len(text)})")
        out[key] = text[at:at + length]
    return out
