"""History keeps an update's earlier long texts as line patches against the text that replaced them.

A window's resource is updated each time the screen shows it changed, and most of its lines stay
the same; so did a long document or a core block edited a line at a time. Storing the whole
earlier text in every update event kept the same lines over and over. An update event now keeps,
for each long string field, the lines it shares with the next state as [start, end) line ranges
of that state and only the lines that differ as text. The next state is what `history()` already
reconstructs (the following event's `before`, or the row as it is now), so it is read from the
newest event back. Events without patches (older rows, inserts, deletes, short fields) read as
they are. Pure functions.
"""

from __future__ import annotations

import json
from difflib import SequenceMatcher
from typing import Any, Mapping

PATCH_KEY = "$patch"
MIN_PATCH_CHARS = 200  # shorter texts are kept whole


def line_patch(base: str, target: str) -> list[list[int] | str]:
    """How to build `target` from `base`: [start, end) ranges of base's lines, and literal text."""
    old, new = base.splitlines(keepends=True), target.splitlines(keepends=True)
    patch: list[list[int] | str] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if tag == "equal":
            patch.append([i1, i2])
        elif j2 > j1:
            patch.append("".join(new[j1:j2]))
    return patch


def apply_line_patch(base: str, patch: list[list[int] | str]) -> str:
    """The text `line_patch(base, target)` was made from."""
    lines = base.splitlines(keepends=True)
    out: list[str] = []
    for part in patch:
        if isinstance(part, str):
            out.append(part)
        else:
            start, end = part
            if not 0 <= start <= end <= len(lines):
                raise ValueError(f"line range {start}:{end} outside a text of {len(lines)} lines")
            out.extend(lines[start:end])
    return "".join(out)


def diff_state(before: Mapping[str, Any], after: Mapping[str, Any]) -> dict[str, Any]:
    """`before` with its long string fields replaced by patches against the same fields of `after`,
    where a patch is less than half the size of the text it stands for."""
    out = dict(before)
    patches: dict[str, list] = {}
    for key, value in before.items():
        other = after.get(key)
        if not isinstance(value, str) or len(value) < MIN_PATCH_CHARS or not isinstance(other, str):
            continue
        patch = line_patch(other, value)
        if len(json.dumps(patch, ensure_ascii=False)) * 2 < len(value):
            patches[key] = patch
            del out[key]
    if patches:
        out[PATCH_KEY] = patches
    return out


def undiff_state(stored: Mapping[str, Any], after: Mapping[str, Any] | None) -> dict[str, Any]:
    """The full `before` state from what `diff_state` stored and the state that followed it."""
    out = dict(stored)
    patches = out.pop(PATCH_KEY, None)
    if not patches:
        return out
    if after is None:
        raise ValueError("a patched history state has no following state to be read against")
    for key, patch in patches.items():
        base = after.get(key)
        if not isinstance(base, str):
            raise ValueError(f"a patched history field {key!r} has no text in the following state")
        out[key] = apply_line_patch(base, patch)
    return out
