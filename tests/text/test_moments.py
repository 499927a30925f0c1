"""A question asking for one moment, read from its form, and the sentences of a turn it shares words with."""

from __future__ import annotations

import pytest

from mirix_py.text.moments import asked_stems, asks_one_moment, sentences_asked


@pytest.mark.parametrize("question", [
    "When did Nate win his third tourney?", "when is the dentist appointment", "How long has Tim been learning piano?",
    "What date was the concert?", "What time did the meeting start?", "Which city did John visit first?",
    '"When" did it happen?',
])
def test_questions_asking_for_one_moment(question):
    assert asks_one_moment(question)


@pytest.mark.parametrize("question", [
    "What did Nate win?", "Whenever I travel, what do I pack?", "Where was the concert?", "How many dogs has Ann?",
    "What did Jon say about the date he had?", "Did Ann like the firsthand account?",
])
def test_questions_asking_for_something_else(question):
    assert not asks_one_moment(question)


def test_asked_stems_are_the_content_words_suffix_stripped():
    assert asked_stems("When did Nate win his third tourneys?") == {"nate", "win", "third", "tourney"}
    assert asked_stems("When was it?") == frozenset()


def test_a_turn_keeps_the_sentences_sharing_a_word_and_its_caption_in_order():
    said = ("Long time no see! Been super busy lately. I just won another regional tournament last week! "
            "It was so cool. [shares a photo: a trophy on a desk]")
    asked = asked_stems("When did Nate win his third tournament?")
    assert sentences_asked(said, asked) == ("I just won another regional tournament last week! "
                                            "[shares a photo: a trophy on a desk]")


def test_a_caption_alone_does_not_count_as_sharing_and_a_turn_without_a_shared_word_stays_whole():
    said = "I got an endorsement with a popular beverage company! [shares a photo: a player next to a soda]"
    assert sentences_asked(said, asked_stems("When did John share his news?")) == said  # "shares" is the caption's
    assert sentences_asked("Great bookshelf! I read a lot.", asked_stems("When did it rain?")) == "Great bookshelf! I read a lot."


def test_one_sentence_or_nothing_asked_leaves_a_turn_as_it_is():
    assert sentences_asked("I won the tournament last week and it was great.", asked_stems("When did I win?")) \
        == "I won the tournament last week and it was great."
    assert sentences_asked("Hi there. I won it.", frozenset()) == "Hi there. I won it."
