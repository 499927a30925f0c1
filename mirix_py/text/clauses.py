"""A question that joins two questions ("Who owns Falcon, and when is my 1:1 with them?") asks for two
things that rarely sit in one memory; searched whole, the words of one half can fill a reader's budget
before anything about the other half ranks. `question_parts` finds such a question by its form alone:
"and" followed by a question word (after a preposition at most), each side holding content words of its
own. Pure function."""

from __future__ import annotations

import re

from mirix_py.text.words import content_words

# "and" (after a comma, a semicolon or nothing) opening a question: "and what …", "and at what time …"
_JOINT = re.compile(
    r"(?:[,;]\s*|\s+)and\s+(?=(?:(?:at|in|on|for|from|with|to|by|since|until)\s+)?"
    r"(?:what|which|who|whom|whose|when|where|why|how)\b)",
    re.IGNORECASE)
MIN_PART_TERMS = 2  # a side with fewer content words ("… and why?") asks nothing a search can find


def question_parts(query: str) -> list[str]:
    """The questions `query` joins, in order, when it joins two or more that each hold at least
    MIN_PART_TERMS content words; otherwise [] (searched whole)."""
    parts = [p.strip(" ,;?") for p in _JOINT.split(query)]
    if len(parts) < 2 or any(len({w.lower() for w in content_words(p)}) < MIN_PART_TERMS for p in parts):
        return []
    return parts

