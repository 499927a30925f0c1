"""Strings every backend can store. PostgreSQL refuses NUL in text and UTF-8 (the drivers, the
tokenizer, the embedder) refuses a lone surrogate, while SQLite takes both: a string refused here is
refused before anything is written, so one input reads the same on SQLite and on PostgreSQL."""

from __future__ import annotations

import re
from typing import Any

# C0, DEL and C1 controls, and the line and paragraph separators: an id is one line in logs,
# listings and the viewer, and none of these can be seen there.
ID_CONTROL = frozenset(chr(c) for c in [*range(32), *range(0x7F, 0xA0)]) | {"\u2028", "\u2029"}


def problem(text: str) -> str | None:
    """Why `text` cannot be stored (a NUL, a lone surrogate), or None."""
    if "\x00" in text:
        return f"holds a NUL character (\\x00) at position {text.index(chr(0))}"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"is not valid Unicode (a lone surrogate at position {exc.start})"
    return None


# What a model may write that a caller may not send: the C0 and C1 controls but the line breaks and tabs.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
_MODEL_CONTROL = {c: None for c in [*range(32), *range(0x7F, 0xA0)] if chr(c) not in "\n\r\t"}


def printable(text: str) -> str:
    """A model's text as plain text every backend stores: control characters (a NUL included) are
    dropped and a lone surrogate becomes U+FFFD. For what a model wrote, which the caller did not."""
    return _LONE_SURROGATE.sub("\ufffd", text.translate(_MODEL_CONTROL))


def first_problem(value: Any, where: str) -> str | None:
    """`<where> <problem>` for the first string in `value` (walking dicts, lists and tuples) that
    cannot be stored, or None."""
    if isinstance(value, str):
        found = problem(value)
        return f"{where} {found}" if found else None
    if isinstance(value, dict):
        for key, item in value.items():
            found = (first_problem(key, f"{where} key") if isinstance(key, str) else None) \
                or first_problem(item, f"{where}.{key}")
            if found:
                return found
    elif isinstance(value, (list, tuple, set, frozenset)):
        for i, item in enumerate(value):
            found = first_problem(item, f"{where}[{i}]")
            if found:
                return found
    return None


def id_problem(text: str) -> str | None:
    """Why `text` cannot be an id (a user's, a key's name): a control character or a line separator,
    a lone surrogate, or U+FFFD, which a decoder puts where bytes were not UTF-8 (two different ids in
    bytes would read as one)."""
    if any(ch in ID_CONTROL or "\ud800" <= ch <= "\udfff" for ch in text):
        return "holds control characters or line separators"
    if "\ufffd" in text:
        return "holds U+FFFD, the mark of bytes that were not UTF-8"
    return None


__all__ = ["ID_CONTROL", "first_problem", "id_problem", "printable", "problem"]
