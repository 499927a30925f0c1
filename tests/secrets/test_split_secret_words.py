"""A secret OCR read as two words of one line (`split_secret_words`): found when joined, prose left alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from mirix_py.eval.secret_eval import parse_corpus
from mirix_py.secrets.masking import split_secret_words

CORPUS_PATH = Path(__file__).resolve().parents[1] / "fixtures" / "secrets_corpus.jsonl"
NEAR_MISSES = [e.text for e in parse_corpus(CORPUS_PATH.read_text(encoding="utf-8").splitlines()) if not e.secrets]


def test_a_key_read_as_two_words_is_one_run():
    assert split_secret_words(["Live", "key", "sk-live-7Hq2", "Xe4Rt6Yu8Wz3Pa5Sd7", "rotated"]) == [(2, 4)]


def test_a_key_cut_after_its_cue_is_one_run():
    """The cue took "sk-proj-4fGhJk7" as the value, and the rest of the key stayed in the memory's text."""
    words = ["export", "OPENAI_API_KEY=sk-proj-4fGhJk7", "mMNpQr2sTuVwXy9ZAbCdEf"]
    assert split_secret_words(words) == [(1, 3)]
    assert split_secret_words(["password:", "Hunter2x", "ID:", "X7Kq9"]) == []  # no provider's shape made
    assert split_secret_words(["KEY=sk-proj-4fGhJk7", "and", "more"]) == []  # prose is never glued


def test_an_address_read_as_two_words_is_one_run():
    assert split_secret_words(["Mail", "ada.lovelace@", "example.com"]) == [(1, 3)]


@pytest.mark.parametrize("line", [
    "My password is fine, thanks for checking",  # "fine,thanks" would pass for a password
    "I changed my password to something stronger",
    "Season pass: $299 for the whole year",
    "He got a boarding pass: seat 12A",
    "wifi password: Correct Horse!42",  # a plain word is never a key's fragment
    "The quarterly review moved to Friday morning",
])
def test_prose_after_a_cue_is_not_glued_into_a_secret(line):
    assert split_secret_words(line.split()) == []


def test_a_word_that_already_is_a_secret_keeps_its_neighbour():
    # the key alone is found, so "Xy12" after it is not taken into it, nor are the card's groups joined
    assert split_secret_words(["sk-live-7Hq2Xe4Rt6Yu8Wz3Pa5Sd7", "Xy12"]) == []
    assert split_secret_words("card 4111 1111 1111 1111".split()) == []


def test_no_near_miss_of_the_secret_corpus_is_glued_into_a_secret():
    glued = {line: split_secret_words(line.split()) for text in NEAR_MISSES for line in text.splitlines()}
    assert len(glued) >= 60 and {line: runs for line, runs in glued.items() if runs} == {}
