"""Chat exchanges are remembered, but they restate memory: a question states nothing, and an answer
says what memory held (or that it held nothing, "I do not know"), so a memory made only of them must
not outrank the fact that answers them. Chat feeds its exchange back with message ids that say
which part is the question (QUESTION_PREFIX) and which the answer (ANSWER_PREFIX); a memory whose
every cited message is part of a chat exchange is weighed down in search (`restatements`). A
memory that also cites anything else said ranks as usual. The framework adapters mark the exchanges
they save the same way (`turn_id`): a user's message that only asks. Pure
functions."""

from __future__ import annotations

import re
import uuid
from typing import Collection, Sequence

QUESTION_PREFIX = "chat-q-"
ANSWER_PREFIX = "chat-a-"
INPUT_PREFIX = "in_"  # input ids in source_ids say where a memory came from, not what it cites
QUESTION_POOL = 10  # candidates fetched beyond `limit`, so facts below question-only memories can move up
QUESTION_MARKS = ("?", "\uff1f", "\u061f")  # ASCII, full-width (CJK), Arabic
SENTENCE_BREAK = re.compile(r"(?<=[.!?\u3002\uff01\uff1f\u061f])\s+|\n")  # after a sentence's end mark, or a line break


def exchange_ids() -> tuple[str, str]:
    """(question id, answer id) for one chat exchange."""
    tag = uuid.uuid4().hex[:12]
    return QUESTION_PREFIX + tag, ANSWER_PREFIX + tag


def only_asks(text: str) -> bool:
    """Whether a message only asks, by its form: every sentence of it (split after . ! ? and at line
    breaks) ends with a question mark. "Where do I live?" and "I live in Paris, right?" ask; "We moved
    to Berlin. Any good cafes?" and "remind me where I live" say something, so they rank as statements.
    Where a sentence's end is in doubt (an abbreviation: "Did Dr. Lee call?") it is a statement too: a
    statement taken for a question would rank below what restates it."""
    sentences = [s.strip() for s in SENTENCE_BREAK.split(text) if s.strip()]
    return bool(sentences) and all(s.endswith(QUESTION_MARKS) for s in sentences)


def turn_id(role: str, text: str) -> str | None:
    """The id a framework adapter gives a saved turn: a question id for a user's message that
    `only_asks` (a question states nothing, and matches the next asking of it best); None for the rest.
    An agent's reply is not marked, unlike chat's own answer (which only lists memories): it may hold
    what nothing else does (a tool's result, a booking's time), and weighed down it would rank below
    the 30th memory."""
    if role == "user" and only_asks(text):
        return QUESTION_PREFIX + uuid.uuid4().hex[:12]
    return None


def said_ids(source_ids: Sequence[str], tags: Collection[str] = ()) -> list[str]:
    """What a memory with these source ids cites of what was said: its ids without its inputs' ids and
    `tags`, the caller's ids of those inputs, which every memory of an input cites and which say nothing."""
    return [s for s in source_ids if not s.startswith(INPUT_PREFIX) and s not in tags]


def asks_only(source_ids: Sequence[str], tags: Collection[str] = ()) -> bool:
    """Whether a memory with these source ids cites chat exchanges (questions, answers) and nothing else
    (`tags`: the caller's ids of its inputs, as for `summaries.sums_up`)."""
    cited = said_ids(source_ids, tags)
    return bool(cited) and all(s.startswith((QUESTION_PREFIX, ANSWER_PREFIX)) for s in cited)

