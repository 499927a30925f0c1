"""Chat exchanges are remembered, but they restate memory: a question states nothing, and an answer
says what memory held (or that it held nothing, "I do not know"), so a memory made only of them must
not outrank the fact that answers them. Chat feeds its exchange back with message ids that say
which part is the question (QUESTION_PREFIX) and which the answer (ANSWER_PREFIX); a memory whose
every cited message is part of a chat exchange is weighed down in search (`restatements`). A
memory that also cites anything else said ranks as usual. Pure functions."""

from __future__ import annotations

import uuid
from typing import Collection, Sequence

QUESTION_PREFIX = "chat-q-"
ANSWER_PREFIX = "chat-a-"
INPUT_PREFIX = "in_"  # input ids in source_ids say where a memory came from, not what it cites
QUESTION_POOL = 10  # candidates fetched beyond `limit`, so facts below question-only memories can move up


def exchange_ids() -> tuple[str, str]:
    """(question id, answer id) for one chat exchange."""
    tag = uuid.uuid4().hex[:12]
    return QUESTION_PREFIX + tag, ANSWER_PREFIX + tag


def said_ids(source_ids: Sequence[str], tags: Collection[str] = ()) -> list[str]:
    """What a memory with these source ids cites of what was said: its ids without its inputs' ids and
    `tags`, the caller's ids of those inputs, which every memory of an input cites and which say nothing."""
    return [s for s in source_ids if not s.startswith(INPUT_PREFIX) and s not in tags]


def asks_only(source_ids: Sequence[str], tags: Collection[str] = ()) -> bool:
    """Whether a memory with these source ids cites chat exchanges (questions, answers) and nothing else
    (`tags`: the caller's ids of its inputs, as for `summaries.sums_up`)."""
    cited = said_ids(source_ids, tags)
    return bool(cited) and all(s.startswith((QUESTION_PREFIX, ANSWER_PREFIX)) for s in cited)

