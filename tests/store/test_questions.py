"""Which saved turns are marked as restating memory, by their form (`store.questions.turn_id`)."""

from __future__ import annotations

import pytest

from mirix_py.store.questions import QUESTION_PREFIX, asks_only, only_asks, turn_id


@pytest.mark.parametrize("text", [
    "where do I live?",
    "I live in Paris, right?",
    "Where do I live? And who is my manager?",
    "who is my manager ?  ",
    "我住在哪里？",
    "Where do I live?\nWho is my boss?",
])
def test_a_message_of_questions_only_asks(text):
    assert only_asks(text)


@pytest.mark.parametrize("text", [
    "We moved to Berlin. Any good cafes nearby?",  # a statement before the question
    "Any good cafes? We just moved to Berlin.",  # and after it
    "remind me where I live",  # a request in the form of a statement
    "I moved to Berlin.",
    "Did Dr. Lee call?",  # an end in doubt: kept a statement
    "What?!",
    "",
])
def test_a_message_that_states_anything_does_not_only_ask(text):
    assert not only_asks(text)


def test_mere_questions_get_chat_ids_replies_and_statements_none():
    question = turn_id("user", "who is my manager?")
    assert question is not None and question.startswith(QUESTION_PREFIX)
    assert turn_id("user", "who is my manager?") != question  # each turn its own id
    # an agent's reply may hold what nothing else does (a tool's result): it ranks as said
    assert turn_id("assistant", "I booked Luigi's for Friday at 7 pm.") is None
    assert turn_id("user", "My new manager is Joe.") is None
    assert turn_id("system", "Be brief?") is None
    # a memory of the marked question restates memory; one of the user's statement (no id) does not
    tags = {"agent-framework:s1"}
    assert asks_only(["in_1", "agent-framework:s1", question], tags)
    assert not asks_only(["in_1", "agent-framework:s1"], tags)
