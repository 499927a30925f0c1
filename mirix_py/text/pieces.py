"""A long text as consecutive pieces within a limit, cut where a reader would cut it: what a memory
layer sends an engine that takes inputs of at most so many characters, so that no length is refused
and nothing said is dropped."""

from __future__ import annotations

import re

from mirix_py.text.passages import SENTENCE_BREAK

# where a piece of a long text may end, best first: after a paragraph, a line, a sentence, a word
_BREAKS = (re.compile(r"\n[^\S\n]*\n\s*"), re.compile(r"\n\s*"), SENTENCE_BREAK, re.compile(r"\s+"))


def _cut(text: str, start: int, max_chars: int) -> int:
    """Where the piece of `text` from `start` ends: the last break of the best kind that leaves it at
    least half of `max_chars` long (a paragraph's, a line's, a sentence's, a word's), else at the limit."""
    end = start + max_chars
    window = text[start:end + 1]  # one character more: a sentence break looks at the next one
    for brk in _BREAKS:
        ends = [m.end() for m in brk.finditer(window) if max_chars // 2 <= m.end() <= max_chars]
        if ends:
            return start + ends[-1]
    return end


def pieces_within(text: str, max_chars: int) -> list[str]:
    """`text` as consecutive pieces of at most `max_chars` characters that join back into it, cut at
    paragraph, then line, sentence and word breaks where there are any; pieces of whitespace alone
    (nothing said) are left out."""
    pieces, start = [], 0
    while len(text) - start > max_chars:
        end = _cut(text, start, max_chars)
        pieces.append(text[start:end])
        start = end
    pieces.append(text[start:])
    return [p for p in pieces if p.strip()]
