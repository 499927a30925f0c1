"""A question that asks for one moment, and what of a chat turn it needs.

"When did Nate win his third tourney?", "How long has Tim been learning the piano?": the answer is the
day of the turn that tells of it, and a reader's context states every hit's day (`text.by_day`). Past a
search's first hits (`WHOLE_HITS`, as for small talk; chosen by leave-one-conversation-out on LoCoMo
dev, benchmarks/docs/locomo_hops.md, "Ninth round"), a chat turn is shown to such a question as its
sentences that share a word with it (the names it asks about aside), a caption ("[shares a photo: …]")
kept: the turn's other sentences rarely hold the moment asked for, and in a context of so many words
they take the room of turns further down that may tell of it. The form is read from the question's
first words (when, how long, what date / day / month / year / time) or "first" anywhere, not from any
data set's labels. Pure functions; the record itself is never cut.
"""

from __future__ import annotations

import re

from mirix_py.text.passages import is_caption, sentences_kept, stem
from mirix_py.text.words import content_words

__all__ = ["asked_stems", "asks_one_moment", "sentences_asked"]

_ONE_MOMENT = re.compile(r"^\W*(when\b|how long\b|what (date|day|month|year|time)\b)|\bfirst\b", re.IGNORECASE)


def asks_one_moment(question: str) -> bool:
    """Whether the question's form asks for one moment or span: it opens with "when", "how long" or
    "what date / day / month / year / time", or holds "first"."""
    return bool(_ONE_MOMENT.search(question))


def asked_stems(question: str) -> frozenset[str]:
    """The question's content words, lower-cased and suffix-stripped (`passages.stem`): what a
    sentence must share with it. Take the names it asks about out first: a sentence that only names
    the person asked about says nothing of the moment."""
    return frozenset(stem(w.lower()) for w in content_words(question))


def _shares(sentence: str, asked: frozenset[str]) -> bool:
    return not asked.isdisjoint(stem(w.lower()) for w in content_words(sentence))


def sentences_asked(said: str, asked: frozenset[str]) -> str:
    """`said` as its sentences that share a word with `asked` and its bracketed captions, in their
    order. A caption never counts as sharing (its words describe what was shown, not what was said).
    Unchanged when `said` is one sentence or none of its spoken sentences shares a word."""
    def keep(sentences: list[str]) -> list[int]:
        sharing = [not is_caption(s) and _shares(s, asked) for s in sentences]
        return [i for i, s in enumerate(sentences) if sharing[i] or is_caption(s)] if any(sharing) else []

    return sentences_kept(said, keep)
