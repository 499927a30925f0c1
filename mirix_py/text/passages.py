"""Query-focused passages: what of a long memory goes into a prompt.

A screen's text or a pasted document can run to hundreds of words, most of them beside the point of
the question; put whole into a context of a few hundred words, one such memory crowds out the rest
(a question that needs two windows then finds only one). `focus` keeps a long memory's first line
(its time, who and what) and the lines that share the most words with the query, each with its
neighbours while they fit, in their order, with "…" where lines were left out. Short memories are
returned unchanged. Words are counted as a reader's budget counts them (`words.word_count`: a Chinese
letter or a Thai cluster is a word), and a long line of a script written without spaces is cut where
its sentences end (。, a Thai space), else every half budget. Pure functions; the record itself is never cut.
"""

from __future__ import annotations

import re
from typing import Callable

from mirix_py.text.words import (BUDGET_LETTERS, MARKS, UNSPACED_LETTERS, first_words, query_terms, text_terms,
                                 word_chunks, word_count)

__all__ = ["FOCUS_WORDS", "SENTENCE_BREAK", "focus", "is_caption", "query_stems", "sentences_kept", "stem",
           "text_stems"]

FOCUS_WORDS = 120  # a long memory's share of a prompt: about a sixth of a 750-word context
SENTENCE_BREAK = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(\[])")  # where one sentence ends and the next starts
GAP = "…"
_SENTENCES_AND_BREAKS = re.compile(f"({SENTENCE_BREAK.pattern})")  # `split` keeps the breaks
# where a sentence of a script written without spaces ends: after 。！？ (Chinese, Japanese), ។ ៕ (Khmer)
# or ။ (Burmese) and the closing quotes after them, and at a space between two Thai, Lao, Khmer or
# Burmese letters, where these scripts end a sentence or a phrase
_UNSPACED_END = re.compile(r"([。｡！？។៕။]+[」』”’）)]*)\s*")  # `split` keeps the end marks
_UNSPACED_SPACE = re.compile(f"(?<=[{UNSPACED_LETTERS}{MARKS}])\\s+(?=[{UNSPACED_LETTERS}])")


def is_caption(sentence: str) -> bool:
    """A bracketed caption of what was shown ("[shares a photo: …]"), not something said."""
    return sentence.lstrip().startswith("[")


def sentences_kept(said: str, keep: Callable[[list[str]], list[int]]) -> str:
    """`said` as the sentences whose indices `keep` picks from its sentences, in their order, each with
    the break that stood before it; unchanged when `keep` picks none or all of them."""
    pieces = _SENTENCES_AND_BREAKS.split(said.strip())  # sentence, break, sentence, ...
    sentences, breaks = pieces[::2], ["", *pieces[1::2]]
    kept = keep(sentences)
    if len(kept) in (0, len(sentences)):
        return said
    return "".join((breaks[i] if n else "") + sentences[i] for n, i in enumerate(kept))


def stem(token: str) -> str:
    """A light suffix strip (no NLTK in the engine): "launches" and "launched" meet "launch"."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(token) > len(suffix) + 3 and token.endswith(suffix):
            return token[: -len(suffix)]
    return token


def query_stems(query: str) -> frozenset[str]:
    """The query's content words as full-text search takes them (`query_terms`), suffix-stripped."""
    return frozenset(stem(t) for t in query_terms(query))


def text_stems(text: str) -> frozenset[str]:
    """Every word of `text`, lower-cased, in the form `query_terms` gives (`text_terms`: phở as pho,
    harakat off, a Chinese or Thai run as its letters or clusters and their pairs, as the index holds
    it) and suffix-stripped: what a line shares with `query_stems`."""
    return frozenset(stem(t) for t in text_terms(text))


def _unspaced_units(sentence: str, size: int) -> list[str]:
    """`sentence` (holding a script written without spaces) cut where such a script ends a sentence
    (`_UNSPACED_END`, `_UNSPACED_SPACE`); a part still longer than `size` words in parts of `size`."""
    parts = _UNSPACED_END.split(sentence)  # text, end marks, text, …
    ended = [text + end for text, end in zip(parts[::2], [*parts[1::2], ""])]
    pieces = [p for e in ended for p in _UNSPACED_SPACE.split(e) if p.strip()]
    return [unit for p in pieces for unit in ([p] if word_count(p) <= size else word_chunks(p, size))]


def _units(text: str, max_words: int) -> list[str]:
    """Lines; a line longer than half the budget is split into sentences so one can be kept alone (a
    line of Chinese, Japanese or Thai also at 。 or a space, and, still too long, every half budget)."""
    out: list[str] = []
    for line in text.split("\n"):
        if word_count(line) > max_words // 2:
            sentences = [s for s in SENTENCE_BREAK.split(line) if s.strip()]
            if BUDGET_LETTERS.search(line):
                sentences = [u for s in sentences for u in _unspaced_units(s, max(max_words // 2, 1))]
            out.extend(sentences)
        else:
            out.append(line)
    return out


def focus(text: str, query: str, max_words: int = FOCUS_WORDS) -> str:
    """`text` cut to about `max_words` words around what `query` asks (see the module docstring)."""
    if max_words <= 0 or word_count(text) <= max_words:
        return text
    terms = query_stems(query)
    units = _units(text, max_words)
    head, rest = units[0], units[1:]
    budget = max_words - word_count(head)
    if budget <= 0 or not rest:
        return first_words(text, max_words) + " " + GAP
    sizes = [word_count(u) for u in rest]
    scores = [len(terms & text_stems(u)) for u in rest]
    keep: set[int] = set()
    used = 0

    def take(i: int) -> bool:
        nonlocal used
        if i in keep or not 0 <= i < len(rest) or not rest[i].strip():
            return False
        if used + sizes[i] > budget:
            return False
        keep.add(i)
        used += sizes[i]
        return True

    ranked = sorted((i for i, s in enumerate(scores) if s > 0), key=lambda i: (-scores[i], i))
    for i in ranked:  # the best-matching lines first
        take(i)
    for i in sorted(keep):  # then the line after and before each, while they fit
        take(i + 1)
        take(i - 1)
    for i in range(len(rest)):  # room left: the opening lines
        if used >= budget:
            break
        take(i)
    out = [head]
    last = -1
    for i in sorted(keep):
        if i != last + 1:
            out.append(GAP)
        out.append(rest[i])
        last = i
    if last != len(rest) - 1:
        out.append(GAP)
    return "\n".join(out)
