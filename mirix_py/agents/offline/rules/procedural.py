"""Procedure detection for procedural memory in offline mode.

A message becomes a procedure only when it is visibly structured as one: a list of at least two
numbered, bulleted or "$ " shell-prompt lines, or an imperative "first ..., then ..., finally ..." sentence. Narrated
sequences ("first I went to the store, then I ...") are stories, not how-tos, and are left to
episodic memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

EntryType = Literal["workflow", "guide", "script"]

__all__ = ["ProcedureDraft", "extract_procedure"]


@dataclass(frozen=True)
class ProcedureDraft:
    """A workflow, guide or script with ordered steps, ready for procedural memory."""

    summary: str
    steps: list[str] = field(default_factory=list)
    entry_type: EntryType = "workflow"


_NUMBERED = re.compile(r"^\s*(?:(?i:step)\s*)?(?P<n>\d{1,2})\s*(?:[.):]|\s-)\s+(?P<body>\S.*)$")
_BULLETED = re.compile(r"^\s*[-*•‣◦]\s+(?P<body>\S.*)$")
_PROMPTED = re.compile(r"^\s*\$\s+(?P<body>\S.*)$")  # shell session lines: "$ git pull"

_SHELL_COMMANDS = frozenset(
    """
    git pip pip3 npm npx yarn pnpm docker docker-compose podman cd ls cat cp mv rm mkdir rmdir
    touch chmod chown python python3 node make cmake curl wget kubectl helm terraform ssh scp
    sudo apt apt-get brew yum dnf echo export source uv poetry conda cargo rustc go java mvn
    gradle systemctl service tar unzip grep sed awk find psql mysql sqlite3 pytest ruby gem bundle
    rails dotnet az aws gcloud heroku ln ps kill vim nano code
    """.split()
)

_GUIDE_WORDS = re.compile(r"(?i)\b(?:guide|guidelines|tips?|advice|best practices|do's and don'ts)\b")

# Inline sequences: split on ordering markers after an initial "first".
_INLINE_START = re.compile(r"(?i)(?<![\w'])first(?:ly)?\b,?\s+")
_INLINE_MARK = re.compile(
    r"(?i)\s*[,;]?\s*(?:\.\s+)?(?:and\s+)?\b(?P<mark>then|next|after\s+that|afterwards|finally|lastly)\b,?\s+"
)
_NARRATIVE_START = re.compile(
    r"(?i)^(?:i|i'm|i've|i'd|we|we've|we're|he|she|they|it|it's|my|our|his|her|their|this|that|"
    r"there|the\s+\w+\s+(?:was|were))\b"
)
# "the first time", "at first", "my first job": "first" as an ordinal, not a sequence marker.
_ORDINAL_USE = re.compile(r"(?i)\b(?:the|a|my|your|our|his|her|their|its|at|very|for\s+the)\s*$")
_HEADING_CUE = re.compile(r"(?i)(?::\s*$|^(?:to|how\s+to|here'?s\s+how|in\s+order\s+to)\b)")
_PAST_TENSE_VERB = re.compile(r"(?i)^(?:went|did|got|had|was|were|made|took|saw|came|\w+ed)\b")


def _clean(step: str) -> str:
    return step.strip().rstrip(";").strip()


def _is_command(step: str) -> bool:
    s = step.strip().strip("`").strip()
    if s.startswith("$ ") or s.startswith("> "):
        return True
    first = s.split(maxsplit=1)[0] if s else ""
    return first in _SHELL_COMMANDS or first.startswith("./")


def _entry_type(summary: str, steps: list[str]) -> EntryType:
    commands = sum(_is_command(s) for s in steps)
    if commands * 2 > len(steps):
        return "script"
    if _GUIDE_WORDS.search(summary):
        return "guide"
    return "workflow"


def _summary_from_heading(heading: str | None, steps: list[str]) -> str:
    if heading:
        heading = heading.strip().lstrip("#").strip().rstrip(":").strip().strip("*_").strip()
        if heading and len(heading) <= 160:
            return heading
    first = steps[0]
    if len(first) > 100:
        first = first[:99].rstrip() + "…"
    return f"Steps: {first}"


def _list_block(lines: list[str]) -> tuple[str | None, list[str]] | None:
    """The first run of >= 2 consecutive list items (blank lines allowed), with its heading."""
    index = 0
    while index < len(lines):
        kind, body, number = _classify(lines[index])
        if kind is None:
            index += 1
            continue
        steps = [body]
        last_number = number
        j = index + 1
        while j < len(lines):
            if not lines[j].strip():
                j += 1
                continue
            k, b, n = _classify(lines[j])
            if k != kind:
                break
            if kind == "numbered" and n != last_number + 1:
                break
            steps.append(b)
            last_number = n
            j += 1
        numbered_ok = kind != "numbered" or _starts_at_one(number)
        if len(steps) >= 2 and numbered_ok:
            heading = next((ln for ln in reversed(lines[:index]) if ln.strip()), None)
            return heading, [_clean(s) for s in steps]
        index = j if j > index else index + 1
    return None


def _starts_at_one(first_number: int) -> bool:
    # A numbered list must start at 0 or 1; "5) ..." on its own is a reply fragment, not steps.
    return first_number in (0, 1)


def _classify(line: str) -> tuple[str | None, str, int]:
    m = _NUMBERED.match(line)
    if m:
        return "numbered", m.group("body"), int(m.group("n"))
    m = _BULLETED.match(line)
    if m:
        return "bulleted", m.group("body"), 0
    m = _PROMPTED.match(line)
    if m:
        return "prompted", "$ " + m.group("body"), 0
    return None, "", 0


def _inline_steps(text: str) -> tuple[str | None, list[str]] | None:
    start = next(
        (m for m in _INLINE_START.finditer(text) if not _ORDINAL_USE.search(text[: m.start()])), None
    )
    if not start:
        return None
    prefix = text[: start.start()].strip()
    rest = text[start.end():]
    parts: list[str] = []
    marks: list[str] = []
    cursor = 0
    for m in _INLINE_MARK.finditer(rest):
        parts.append(rest[cursor:m.start()])
        marks.append(m.group("mark").lower())
        cursor = m.end()
    # The last part ends at the end of its sentence.
    tail = re.split(r"(?<=[.!?])\s", rest[cursor:], maxsplit=1)[0]
    parts.append(tail)
    parts = [_clean(p).rstrip(".!").strip() for p in parts]
    if len(parts) < 3 or any(not p for p in parts):
        return None
    if "then" not in marks and "next" not in marks:
        return None
    # Imperative how-tos only: narrated events start with a subject or a past-tense verb.
    if any(_NARRATIVE_START.match(p) or _PAST_TENSE_VERB.match(p) for p in parts):
        return None
    if any(len(p.split()) > 25 for p in parts):
        return None
    heading = None
    if prefix:
        last_sentence = re.split(r"(?<=[.!?])\s+", prefix)[-1].strip().rstrip(",").strip()
        if last_sentence and len(last_sentence.split()) <= 15 and _HEADING_CUE.search(last_sentence):
            heading = last_sentence
    return heading, parts


def extract_procedure(text: str) -> ProcedureDraft | None:
    """Return a procedure draft when `text` lays out steps, else None."""
    if not text or not text.strip():
        return None
    lines = text.splitlines()
    found = _list_block(lines) if len(lines) >= 2 else None
    if found is None:
        found = _inline_steps(text)
    if found is None:
        return None
    heading, steps = found
    summary = _summary_from_heading(heading, steps)
    return ProcedureDraft(summary=summary, steps=steps, entry_type=_entry_type(summary, steps))
