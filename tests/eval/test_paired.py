import pytest

from mirix_py.eval.paired import paired_difference


def test_the_same_scores_differ_by_nothing_with_no_interval():
    d = paired_difference([0.2, 0.5, 1.0], [0.2, 0.5, 1.0])
    assert (d.mean, d.low, d.high) == (0.0, 0.0, 0.0)
    assert (d.better, d.worse, d.same, d.questions) == (0, 0, 3, 3)


def test_a_constant_gain_is_its_own_interval():
    d = paired_difference([0.3, 0.6], [0.2, 0.5])
    assert d.mean == pytest.approx(0.1) and d.low == pytest.approx(0.1) and d.high == pytest.approx(0.1)
    assert d.better == 2


def test_a_gap_made_by_few_questions_has_an_interval_reaching_past_zero():
    a = [1.0, 0.0, 0.0] + [0.5] * 20
    b = [0.0, 0.5, 0.2] + [0.5] * 20
    d = paired_difference(a, b)
    assert d.low < 0 < d.mean < d.high
    assert (d.better, d.worse, d.same) == (1, 2, 20)


def test_a_gap_on_most_questions_has_an_interval_clear_of_zero():
    d = paired_difference([0.6] * 30 + [0.0], [0.4] * 30 + [0.1])
    assert 0 < d.low <= d.mean <= d.high


def test_the_interval_is_the_same_for_the_same_seed():
    a, b = [0.1, 0.9, 0.4, 0.0, 0.7], [0.3, 0.2, 0.4, 0.5, 0.1]
    assert paired_difference(a, b) == paired_difference(a, b)


def test_rounding_noise_counts_as_the_same_score():
    assert paired_difference([0.1 + 0.2], [0.3]).same == 1


@pytest.mark.parametrize("a, b, confidence", [([0.1], [0.1, 0.2], 0.95), ([], [], 0.95), ([0.1], [0.2], 1.5)])
def test_scores_that_cannot_be_paired_are_refused(a, b, confidence):
    with pytest.raises(ValueError):
        paired_difference(a, b, confidence=confidence)


def test_render_states_the_interval_and_the_counts():
    text = paired_difference([0.5, 0.0], [0.0, 0.0]).render()
    assert "1 better, 0 worse, 1 same; 2 questions" in text and text.startswith("+0.250 [")
