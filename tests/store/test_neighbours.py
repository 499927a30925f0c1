"""Search with `context`: the turns said just before and after the top matches, from the same input."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from mirix_py.errors import InvalidInput
from mirix_py.store.neighbours import neighbours

T0 = datetime(2023, 8, 14, 14, 24, tzinfo=timezone.utc)
PARTY = [
    ("Caroline", "How was your daughter's birthday party? Who played at the concert?"),
    ("Melanie", "It was Matt Patterson, he is so talented! His voice and songs were amazing."),
    ("Caroline", "Wow, that sounds like an unforgettable evening."),
]
LATER = [("Melanie", "I started a new pottery class on Tuesday evenings.")]


def add(mx, turns, start):
    messages = [{"role": "user", "name": who, "content": text, "occurred_at": start + timedelta(seconds=i)}
                for i, (who, text) in enumerate(turns)]
    result = mx.add(messages, user_id="mel", occurred_at=start)
    assert result.status.value == "processed"


@pytest.fixture
def party(mx_sqlite):
    add(mx_sqlite, PARTY, T0)
    add(mx_sqlite, LATER, T0 + timedelta(days=3))
    return mx_sqlite


def episode_saying(mx, words):
    return next(m for m in mx.list(user_id="mel", memory_types=["episodic"]) if words in m.search_text())


def test_the_answer_next_to_the_matching_question_comes_as_context(party):
    hits = party.search("concert at the birthday party", user_id="mel", limit=1, method="bm25", context=1)
    match = hits[0]
    assert "Who played at the concert" in match.text and match.context_for is None
    context = hits[1:]
    assert [h.context_for for h in context] == [match.memory.id]
    assert "Matt Patterson" in context[0].text and context[0].score == match.score


def test_neighbours_stay_inside_one_input(party):
    last_of_party = episode_saying(party, "unforgettable evening")
    pottery = episode_saying(party, "pottery class")
    assert [n.summary for n in neighbours(party.store, last_of_party)] == [PARTY[1][1]]
    assert neighbours(party.store, pottery) == []  # alone in its input; the party is earlier but not its own


def test_a_match_given_as_context_is_not_repeated_and_limit_counts_matches(party):
    hits = party.search("Matt Patterson concert party daughter", user_id="mel", limit=3, method="bm25", context=3)
    ids = [h.memory.id for h in hits]
    assert len(ids) == len(set(ids))
    assert sum(1 for h in hits if h.context_for is None) <= 3
    plain = party.search("Matt Patterson concert party daughter", user_id="mel", limit=3, method="bm25")
    assert all(h.context_for is None for h in plain)


def test_context_must_not_be_negative(party):
    with pytest.raises(InvalidInput, match="context"):
        party.search("party", user_id="mel", context=-1)


def test_a_search_bounded_in_time_shows_no_turn_from_outside_its_window(party):
    question_said = T0  # the question is said at T0, the answer one second later
    hits = party.search("concert at the birthday party", user_id="mel", limit=1, method="bm25", context=1,
                        end=question_said + timedelta(seconds=1))
    assert "Who played at the concert" in hits[0].text
    assert [h for h in hits if h.context_for is not None] == []  # the answer lies past `end`
    later = party.search("concert at the birthday party", user_id="mel", limit=1, method="bm25", context=1,
                         start=question_said)
    assert any("Matt Patterson" in h.text for h in later if h.context_for is not None)
