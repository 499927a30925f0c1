"""Answer metrics against values computed by hand (the comments show the arithmetic)."""

from __future__ import annotations

import math

import pytest

from mirix_py.eval.metrics import (
    answer_token_recall, bleu1, locomo_f1, mean, multi_answer_f1, normalize_answer, percentile, scoring_gold,
    strip_citations, token_f1,
)


def test_normalize_answer_follows_locomo():
    # commas dropped, lowercased, punctuation removed (no split: "dog's" -> "dogs"), a/an/the/and removed
    assert normalize_answer("The Cat, and a dog's bone!") == "cat dogs bone"
    assert normalize_answer("7 May, 2023") == "7 may 2023"
    assert normalize_answer("  ") == ""


def test_token_f1_hand_computed():
    # "cat sat on mat" vs "cat sat": 2 shared; P = 2/4, R = 2/2 -> F1 = 2 * .5 * 1 / 1.5
    assert token_f1("The cat sat on the mat", "a cat sat") == pytest.approx(2 / 3)
    # Porter stems: running -> run, runs -> run
    assert token_f1("running", "runs") == 1.0
    # multiset overlap: "dog dog" vs "dog": 1 shared; P = 1/2, R = 1 -> 2/3
    assert token_f1("dog dog", "dog") == pytest.approx(2 / 3)
    assert token_f1("", "dog") == 0.0
    assert token_f1("cat", "dog") == 0.0


def test_multi_hop_rule_splits_on_commas():
    # golds: swimming -> best 1, hiking -> best 1, painting -> 0: mean 2/3
    assert multi_answer_f1("hiking, swimming", "swimming, hiking, painting") == pytest.approx(2 / 3)
    assert locomo_f1("hiking, swimming", "swimming, hiking, painting", 1) == pytest.approx(2 / 3)
    # the same strings under the single-hop rule: one bag of words, commas dropped:
    # pred {hike, swim}, gold {swim, hike, paint}: 2 shared, P = 1, R = 2/3 -> 0.8
    assert locomo_f1("hiking, swimming", "swimming, hiking, painting", 4) == pytest.approx(0.8)


def test_open_domain_rule_keeps_the_first_alternative():
    assert scoring_gold("a sunrise; to fetch", 3) == "a sunrise"
    assert locomo_f1("sunrise", "a sunrise; to fetch", 3) == 1.0
    # as temporal/single-hop the whole gold counts: "sunrise to fetch" -> P = 1, R = 1/3 -> 0.5
    assert locomo_f1("sunrise", "a sunrise; to fetch", 2) == pytest.approx(0.5)


def test_adversarial_rule_checks_for_a_refusal():
    assert locomo_f1("Not mentioned in the conversation.", "Paris", 5) == 1.0
    assert locomo_f1("There is no information available about it", "Paris", 5) == 1.0
    assert locomo_f1("Paris", "Paris", 5) == 0.0


def test_unknown_category_is_an_error():
    with pytest.raises(ValueError, match="category"):
        locomo_f1("x", "x", 6)


def test_answer_token_recall():
    assert answer_token_recall("7 May 2023", "We met on 7 May 2023.") == 1.0
    # content stems of the gold: anns, potteri, class; the context has potteri -> 1/3
    assert answer_token_recall("Ann's pottery class", "pottery lessons") == pytest.approx(1 / 3)
    assert answer_token_recall("Ann's pottery class", ["nothing here", "but a class"]) == pytest.approx(1 / 3)
    assert math.isnan(answer_token_recall("the", "anything"))  # no content word: not scored


def test_bleu1():
    # unigram precision 1, brevity penalty exp(1 - 4/2)
    assert bleu1("a cat sat", "the cat sat on mat") == pytest.approx(math.exp(-1))
    assert bleu1("cat sat on mat", "the cat sat on the mat") == pytest.approx(1.0)
    assert bleu1("", "cat") == 0.0


def test_strip_citations():
    mem = "epi_" + "ab" * 16
    assert strip_citations(f"Tom is a pilot [{mem}].") == "Tom is a pilot."
    assert strip_citations(f"Geneva [{mem}, sem_{'0' * 32}] in May") == "Geneva in May"
    assert strip_citations("[not a citation] stays") == "[not a citation] stays"


def test_percentile_and_mean():
    values = [float(v) for v in range(1, 11)]
    assert percentile(values, 50) == 5.0  # nearest rank: ceil(0.5 * 10) = 5th
    assert percentile(values, 95) == 10.0  # ceil(9.5) = 10th
    assert math.isnan(percentile([], 50))
    assert mean([1.0, math.nan, 3.0]) == 2.0
    assert math.isnan(mean([math.nan]))
