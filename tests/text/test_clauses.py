"""Questions that join questions, found by their form."""

from __future__ import annotations

import pytest

from mirix_py.text.clauses import question_parts


@pytest.mark.parametrize("question, parts", [
    ("Who owns Project Aurora according to its overview document, and at what time is my 1:1 with them in the "
     "calendar?", ["Who owns Project Aurora according to its overview document",
                   "at what time is my 1:1 with them in the calendar"]),
    ("Who sent the email 'Falcon kickoff notes', and in which Slack channel does the Falcon team talk?",
     ["Who sent the email 'Falcon kickoff notes'", "in which Slack channel does the Falcon team talk"]),
    ("What schools did John play basketball in and how many years was he with his team?",
     ["What schools did John play basketball in", "how many years was he with his team"]),
    ("Where did Mel camp; and when did she paint the sunset?", ["Where did Mel camp", "when did she paint the sunset"]),
])
def test_a_question_joining_questions_is_split_into_them(question, parts):
    assert question_parts(question) == parts


@pytest.mark.parametrize("question", [
    "What did Caroline and Melanie paint?",            # "and" joins names, not questions
    "What charity might John work with and why?",      # the second half asks nothing a search can find
    "Which book did she read, and what?",
    "Who is Ada, and at what time is my 1:1 with her?",  # "time" alone: one content word
    "And what did Jon say about the studio?",          # nothing before the joint
    "When did Gina open her store?",
])
def test_other_questions_are_searched_whole(question):
    assert question_parts(question) == []
