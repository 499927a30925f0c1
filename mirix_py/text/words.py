"""Small text helpers shared by search and the offline rules."""

from __future__ import annotations

import re

STOPWORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't doing
    don't down during each few for from further had hadn't has hasn't have haven't having he he'd
    he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into
    is isn't it it's its itself let's me more most mustn't my myself no nor not of off on once only
    or other ought our ours ourselves out over own same shan't she she'd she'll she's should
    shouldn't so some such than that that's the their theirs them themselves then there there's
    these they they'd they'll they're they've this those through to too under until up very was
    wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while
    who who's whom why why's with won't would wouldn't you you'd you'll you're you've your yours
    yourself yourselves s t d ll m re ve just also really yeah oh hey hi hello thanks thank ok okay
    did does do""".split()
)


TOKEN = re.compile(r"[^\W_]+", re.UNICODE)


def query_terms(query: str, limit: int = 32) -> list[str]:
    """Content words of a query, lowercased, deduplicated, in order."""
    seen: dict[str, None] = {}
    for tok in TOKEN.findall(query.lower()):
        if len(tok) > 1 and tok not in STOPWORDS and tok not in seen:
            seen[tok] = None
    terms = list(seen)
    if not terms:  # a query made only of stopwords still searches for them
        terms = list(dict.fromkeys(t for t in TOKEN.findall(query.lower()) if len(t) > 1))
    return terms[:limit]


def content_words(text: str) -> list[str]:
    """The words of `text` a query can match, as said (`query_terms` drops stopwords and single letters)."""
    return [w for w in TOKEN.findall(text) if len(w) > 1 and w.lower() not in STOPWORDS]


def word_count(text: str) -> int:
    return len(text.split())


def is_sentence_start(text: str, pos: int, end_punct: str = ".!?") -> bool:
    """True when `pos` begins a sentence: text start, after a newline, after end punctuation (but
    not after an initial like "J. K."), or after an opening quote/bracket. Looks back only over
    the whitespace before `pos`, so scanning every token stays linear."""
    i = pos
    while i > 0 and text[i - 1] in " \t":
        i -= 1
    if i == 0 or text[i - 1] in "\n\r":
        return True
    c = text[i - 1]
    if c in end_punct:
        initial = i >= 2 and text[i - 2].isupper() and (i < 3 or not text[i - 3].isalnum())
        return not initial and i < pos  # "e.g.Bob" is not a sentence break; ". Bob" is
    if c in "\"“(" and (i == 1 or text[i - 2].isspace()):
        return True
    return False


def human_bytes(n: float) -> str:
    """A byte count for people: "632 B", "112.5 KB", "3.1 MB"."""
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"
