"""Small talk in a chat turn: the sentences a reader of a full context can do without.

A turn often wraps what it says in greetings, thanks and cheers ("Thanks, Maria! I went hiking with
my workmates last week. Wow!"). In a reader's context of a fixed number of words, those sentences
take the room of other memories. A sentence of fewer than two content words (`words.content_words`,
whose stopwords include "thanks", "hey" and "yeah") names no fact a question can ask for; a photo
caption ("[shares a photo: …]") is kept whatever its length. Pure functions; the record itself is
never cut.
"""

from __future__ import annotations

from mirix_py.text.passages import is_caption, sentences_kept
from mirix_py.text.words import content_words

__all__ = ["MIN_CONTENT_WORDS", "WHOLE_HITS", "is_small_talk", "without_small_talk"]

MIN_CONTENT_WORDS = 2
# A search's first hits, shown as said; the chat turns after them are shown without small talk
# (`store.search.hit_text`). Chosen by leave-one-conversation-out on LoCoMo dev at 750 words
# (benchmarks/docs/locomo_hops.md, "Small talk").
WHOLE_HITS = 4


def is_small_talk(sentence: str) -> bool:
    """"Thanks, Maria!", "Wow!", "How about you?": fewer than `MIN_CONTENT_WORDS` content words and
    not a bracketed caption."""
    return not is_caption(sentence) and len(content_words(sentence)) < MIN_CONTENT_WORDS


def without_small_talk(said: str) -> str:
    """`said` without its small-talk sentences, the others in their order; unchanged when it is one
    sentence or small talk only (what it says then is all there is)."""
    return sentences_kept(said, lambda sentences: [i for i, s in enumerate(sentences) if not is_small_talk(s)])
