"""`compare_paired_scores`: the paired sign-flip test and the bootstrap interval of a mean
difference, against cases computed by hand and by brute force."""

from itertools import product

import numpy as np
import pytest

from tvr.core.stats import EXACT_FLIPS, compare_paired_scores


def _pair(a, b):
    keys = [f"k{i:02d}" for i in range(len(a))]
    return dict(zip(keys, map(float, a), strict=True)), dict(zip(keys, map(float, b), strict=True))


def test_tiny_case_enumerated_by_hand():
    # d = a - b = [4, 1, -1]: the 8 sign patterns give |sum| 6, 4, 4, 2 (and their mirrors);
    # the observed |sum| is 4, so 6 of 8 patterns are as extreme: p = 0.75
    a, b = _pair([5, 2, 0], [1, 1, 1])
    c = compare_paired_scores(a, b)
    assert (c.n, c.mean_a, c.mean_b) == (3, pytest.approx(7 / 3), pytest.approx(1.0))
    assert c.difference == pytest.approx(4 / 3)
    assert c.p_value == pytest.approx(0.75) and c.exact
    # d = [4, 1, 1]: only the all-plus and all-minus patterns reach |sum| 6: p = 2/8
    assert compare_paired_scores(*_pair([5, 2, 2], [1, 1, 1])).p_value == pytest.approx(0.25)
    # items with d = 0 change nothing, however many there are: still exact
    zeros = compare_paired_scores(*_pair([5, 2, 0] + [3] * 30, [1, 1, 1] + [3] * 30))
    assert zeros.p_value == pytest.approx(0.75) and zeros.exact and zeros.n == 33


def test_bootstrap_interval_by_hand():
    # d = [0, 1]: a resample's mean is 0, 1/2 or 1 with probabilities 1/4, 1/2, 1/4, so the
    # 2.5% and 97.5% quantiles of 10000 resamples are 0 and 1
    c = compare_paired_scores(*_pair([0, 1], [0, 0]))
    assert c.interval == (0.0, 1.0)
    assert c.difference == 0.5 and c.p_value == pytest.approx(1.0)  # +-1 either way: |1| >= 1


def test_identical_inputs_differ_by_nothing():
    a, _ = _pair(np.linspace(0, 3, 40), [0] * 40)
    c = compare_paired_scores(a, dict(a))
    assert (c.difference, c.interval, c.p_value) == (0.0, (0.0, 0.0), 1.0)


def test_a_clear_shift_gives_a_small_p_and_the_sign_of_a_minus_b():
    rng = np.random.default_rng(3)
    base = rng.normal(50, 10, 60)
    a, b = _pair(base + 2 + rng.normal(0, 1, 60), base)
    c = compare_paired_scores(a, b, resamples=2000)
    assert not c.exact and c.p_value == pytest.approx(1 / 2001)  # no random pattern as extreme
    assert 1.5 < c.interval[0] < c.difference < c.interval[1] < 2.5
    swapped = compare_paired_scores(b, a, resamples=2000)
    assert swapped.difference == pytest.approx(-c.difference)
    assert (swapped.mean_a, swapped.mean_b) == (c.mean_b, c.mean_a)
    assert swapped.interval == pytest.approx((-c.interval[1], -c.interval[0]))
    assert swapped.p_value == c.p_value


def test_random_patterns_agree_with_enumeration_and_are_seeded():
    d = np.random.default_rng(0).normal(0.6, 1, EXACT_FLIPS + 1)
    signs = np.array(list(product((-1, 1), repeat=len(d))))
    exact = float((np.abs(signs @ d) >= abs(d.sum()) - 1e-9).mean())  # brute force, 2^17
    a, b = _pair(d, [0] * len(d))
    c = compare_paired_scores(a, b, resamples=20000)
    assert not c.exact and exact == pytest.approx(0.1578, abs=1e-4)
    assert c.p_value == pytest.approx(exact, abs=0.01)
    assert compare_paired_scores(a, b, resamples=20000) == c  # seeded
    other = compare_paired_scores(a, b, resamples=20000, seed=1)
    assert other.p_value != c.p_value and other.interval != c.interval


@pytest.mark.parametrize(
    ("a", "b", "words"),
    [
        ({"x": 1.0, "y": 2.0}, {"x": 1.0, "z": 2.0}, "'y' is in one only"),
        ({}, {}, "no samples"),
        ({"x": float("nan")}, {"x": 1.0}, "first evaluation's score of 'x'"),
        ({"x": 1.0}, {"x": float("inf")}, "second evaluation's score of 'x'"),
    ],
)
def test_bad_inputs(a, b, words):
    with pytest.raises(ValueError, match=words):
        compare_paired_scores(a, b)
