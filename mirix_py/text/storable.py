"""Strings every backend can store alike, and a terminal can print. PostgreSQL refuses NUL in text
and UTF-8 (the drivers, the tokenizer, the embedder) refuses a lone surrogate, while SQLite takes both;
a control character is stored by all, but a terminal runs it (an ESC sequence clears the screen or
retitles the window) when the CLI prints the memory. A string refused here is refused before anything
is written, by the SDK's calls and REST's alike."""

from __future__ import annotations

import re
from typing import Any, Iterator

# Unicode's control characters (category Cc): C0, DEL and C1.
_CC = [*range(32), *range(0x7F, 0xA0)]
# What text may not hold: the controls but the line breaks and tabs plain text is made of.
CONTROL = frozenset(chr(c) for c in _CC) - {"\n", "\r", "\t"}
_CONTROL_CHAR = re.compile("[" + "".join(map(re.escape, sorted(CONTROL))) + "]")
# C0, DEL and C1 controls, and the line and paragraph separators: an id is one line in logs,
# listings and the viewer, and none of these can be seen there.
ID_CONTROL = frozenset(chr(c) for c in _CC) | {"\u2028", "\u2029"}


def problem(text: str, *, controls: bool = True) -> str | None:
    """Why a caller may not send `text` (a NUL, a control character but a line break or tab, a lone
    surrogate), or None. `controls=False`: only what a backend cannot hold alike (a NUL, a lone
    surrogate), as the store checks every write: a row written before controls were refused is
    rewritten whole by a later change (a core block by each append) and must still be writable."""
    if "\x00" in text:
        return f"holds a NUL character (\\x00) at position {text.index(chr(0))}"
    if controls and (found := _CONTROL_CHAR.search(text)):
        return f"holds a control character (\\x{ord(found.group()):02x}) at position {found.start()}"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return f"is not valid Unicode (a lone surrogate at position {exc.start})"
    return None


# What a model (or a framework's text) may hold that a caller may not send: `CONTROL`, made plain text.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
# a terminal's escape sequences (ECMA-48: CSI "ESC [ … final", C1 CSI, OSC "ESC ] … BEL / ST", ESC + intermediates + final):
# their letters are formatting ("[31m" would read as words), so they go whole
_ESCAPE_SEQUENCE = re.compile(r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
                              r"|\x1b[ -/]*[0-~]")
# controls that separate text (vertical tab, form feed, file / group / record / unit separators, NEL):
# a line break, so the words on either side stay apart; the other controls are dropped
_SEPARATORS = "\x0b\x0c\x1c\x1d\x1e\x1f\x85"
_MODEL_CONTROL: dict[int, str | None] = {ord(c): ("\n" if c in _SEPARATORS else None) for c in CONTROL}


def printable(text: str) -> str:
    """Text a caller did not write (a model's reply, a message an agent framework hands over) as plain
    text every backend stores: escape sequences go whole, separating controls become line breaks, the
    other control characters (a NUL included) are dropped and a lone surrogate becomes U+FFFD."""
    return _LONE_SURROGATE.sub("\ufffd", _ESCAPE_SEQUENCE.sub("", text).translate(_MODEL_CONTROL))


def strings(value: Any) -> Iterator[str]:
    """Every string in a JSON-like value (dicts, lists), a mapping's keys too (a core block's
    `said` is keyed by its lines, a LangGraph item's keys are the app's)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from strings(v)


MAX_NESTING = 64  # dicts and lists inside one another a caller's value may hold (JSON's own parsers stop near here)


def first_problem(value: Any, where: str, *, controls: bool = True, depth: int = 0) -> str | None:
    """`<where> <problem>` for the first string in `value` (walking dicts, lists and tuples) that
    cannot be stored, or a value nested deeper than MAX_NESTING (walking it raised RecursionError),
    or None."""
    if isinstance(value, str):
        found = problem(value, controls=controls)
        return f"{where} {found}" if found else None
    if depth > MAX_NESTING and isinstance(value, (dict, list, tuple, set, frozenset)):
        return f"{where[:60]}{'…' if len(where) > 60 else ''} is nested more than {MAX_NESTING} levels deep"
    if isinstance(value, dict):
        for key, item in value.items():
            found = (first_problem(key, f"{where} key", controls=controls) if isinstance(key, str) else None) \
                or first_problem(item, f"{where}.{key}", controls=controls, depth=depth + 1)
            if found:
                return found
    elif isinstance(value, (list, tuple, set, frozenset)):
        for i, item in enumerate(value):
            found = first_problem(item, f"{where}[{i}]", controls=controls, depth=depth + 1)
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


# A control character as a terminal is handed it: `\xNN`, seen and not run. A newline and a tab
# stay; a carriage return is shown too (it would let a line overwrite what was printed before it).
_SHOWN_CONTROL = {c: f"\\x{c:02x}" for c in _CC if chr(c) not in "\n\t"}


def terminal_safe(text: str) -> str:
    """`text` with each control character but a newline and a tab written out as `\\xNN`: what a
    store written before `problem` refused them still holds must not run in the reader's terminal."""
    return text.translate(_SHOWN_CONTROL)


__all__ = ["CONTROL", "ID_CONTROL", "first_problem", "id_problem", "printable", "problem", "terminal_safe"]
