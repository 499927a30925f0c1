"""Screen text for the offline managers: what is new on a window, and a window's text so far.

Consecutive screenshots of one window repeat most of their text. The managers keep, per window
(app + window title), the set of lines already seen (in this batch, and in the window's resource
memory from earlier batches), and memorise only the new lines of each frame: an episode says
what appeared on screen and when, and the window's resource accumulates its distinct lines.

Lines are compared after light normalisation: case and spacing, and a clock showing the frame's
own time of day ("09:41" on a frame captured at 09:41) is masked, so the menu-bar clock ticking
does not make every frame "new". Other times (a meeting at 15:00) are kept as they are.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

__all__ = [
    "is_clock_line", "line_key", "new_lines", "new_with_context", "same_lines", "screen_lines", "seen_keys",
    "shell_prompts",
]

_CLOCK = re.compile(r"(?<![\d:])([01]?\d|2[0-3])[:.]([0-5]\d)(?:[:.][0-5]\d)?(?:\s?[AaPp][Mm])?(?![\d:])")
_SPACE = re.compile(r"\s+")
MAX_LINE_CHARS = 500


def _minutes_near(when: datetime | None) -> set[int]:
    if when is None:
        return set()
    return {(when + timedelta(minutes=d)).minute for d in (-1, 0, 1)}


def line_key(line: str, when: datetime | None = None, *, all_clocks: bool = False) -> str:
    """Comparison key of a line: casefolded, single-spaced, live clock masked.

    A time whose minutes are within one minute of the frame's capture time is taken for a clock
    (the hour is not compared: the screen may show another time zone). With `all_clocks`,
    every time is masked: for stored text, whose capture times are no longer known.
    """
    text = _SPACE.sub(" ", line).strip().casefold()
    if all_clocks:
        return _CLOCK.sub("<clock>", text)
    minutes = _minutes_near(when)
    if minutes:
        text = _CLOCK.sub(lambda m: "<clock>" if int(m.group(2)) in minutes else m.group(0), text)
    return text


def seen_keys(stored_text: str) -> set[str]:
    """Keys of text memorised earlier (a window's resource), to test new frames against."""
    keys: set[str] = set()
    for line in screen_lines(stored_text):
        keys.add(line_key(line))
        keys.add(line_key(line, all_clocks=True))
    return keys


def screen_lines(text: str) -> list[str]:
    """Non-empty lines of OCR text, whitespace-trimmed, each at most MAX_LINE_CHARS."""
    return [ln.strip()[:MAX_LINE_CHARS] for ln in text.splitlines() if ln.strip()]


_CALENDAR_WORDS = frozenset(
    "mon tue wed thu fri sat sun monday tuesday wednesday thursday friday saturday sunday jan feb mar apr may "
    "jun jul aug sep sept oct nov dec january february march april june july august september october november "
    "december today am pm <clock>".split())


def is_clock_line(key: str) -> bool:
    """A line that is only a (masked) clock with a date: the menu bar, a status bar."""
    words = key.replace(",", " ").split()
    return "<clock>" in words and all(w in _CALENDAR_WORDS or w.isdigit() for w in words)


def new_lines(text: str, seen: set[str], when: datetime | None = None) -> list[str]:
    """Lines of `text` whose keys are not in `seen`; adds every line's key to `seen`.

    A line that is only the live clock and the date never counts as new.
    """
    return new_with_context(text, seen, when, context=0)[0]


def new_with_context(text: str, seen: set[str], when: datetime | None = None, *,
                     context: int = 1) -> tuple[list[str], list[str]]:
    """(new lines, new lines with `context` neighbouring lines each side), like a diff hunk.

    The neighbours keep a changed value with its label: when a calendar entry moves, the new
    "16:30" comes with the unchanged "Dentist appointment" next to it.
    """
    lines = screen_lines(text)
    keys = [line_key(line, when) for line in lines]
    fresh = [i for i, key in enumerate(keys) if key not in seen and not is_clock_line(key)]
    seen.update(keys)
    fresh = [i for n, i in enumerate(fresh) if keys[i] not in {keys[j] for j in fresh[:n]}]
    keep = sorted({j for i in fresh for j in range(i - context, i + context + 1)
                   if 0 <= j < len(lines) and not is_clock_line(keys[j])})
    return [lines[i] for i in fresh], [lines[j] for j in keep]


def same_lines(a: str, b: str, when: datetime | None = None) -> bool:
    """Whether the screen text `b` (captured at `when`) holds the same lines as the earlier text `a`
    (order, case and spacing aside). A time that differs counts as a change unless `b`'s is a live
    clock (within a minute of `when`): a meeting moved from 15:00 to 16:30 is news, a "synced 10:45"
    ticking on is not. Without `when` every time is taken for a clock."""
    earlier: dict[str, list[str]] = {}
    for line in screen_lines(a):
        earlier.setdefault(line_key(line, all_clocks=True), []).append(line_key(line))
    later = screen_lines(b)
    if set(earlier) != {line_key(x, all_clocks=True) for x in later}:
        return False
    if when is None:
        return True
    live = _minutes_near(when)
    return all(any(_same_times(old, line_key(new), live) for old in earlier[line_key(new, all_clocks=True)])
               for new in later)


def _same_times(old: str, new: str, live: set[int]) -> bool:
    """Two keys of lines alike but for their times: every time the same, or `new`'s a live clock."""
    old_times = [m.group(0) for m in _CLOCK.finditer(old)]
    new_times = [m for m in _CLOCK.finditer(new)]
    return len(old_times) == len(new_times) and all(
        was == now.group(0) or int(now.group(2)) in live for was, now in zip(old_times, new_times))


# "ada@laptop:~/src$ ", "ada@MacBook-Pro ~ % ", "(venv) ada@host:/srv# ", "PS C:\\Users\\ada> "
_PROMPT = re.compile(r"^\s*(?:\([\w.-]+\)\s+)?(?:[\w.-]+@[\w.-]+(?::\S*?|\s+\S+)\s?[$#%]|PS [A-Za-z]:\\[^>]*>)\s+(?=\S)")


def shell_prompts(text: str) -> str:
    """A terminal's commands as "$ command" lines, the shape procedures use.

    When the text holds two or more commands after a full prompt, only those commands are kept
    (their output would break the list of steps); otherwise the text is returned unchanged.
    """
    commands = [_PROMPT.sub("$ ", line).strip() for line in text.splitlines() if _PROMPT.match(line)]
    return "\n".join(commands) if len(commands) >= 2 else text
