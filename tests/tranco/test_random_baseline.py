"""The random baseline: its predictions, its exact expectation (against enumeration and closed
forms) and a small Monte Carlo of the baseline itself."""

import math
from itertools import permutations

import numpy as np
import pytest

from tvr.tranco.data.formats import ReferenceSample
from tvr.tranco.eval.baselines import (
    chi_square,
    chi_square_survival,
    expected_random,
    random_predictions,
    simulate_random,
    z_scores,
)
from tvr.tranco.eval.metrics import CONVENTIONS, METRICS, score_sample
from tvr.tranco.paper import TABLE2, random_row

TEST_COUNTS = TABLE2["test"][2]


@pytest.mark.parametrize("convention", list(CONVENTIONS))
@pytest.mark.parametrize("steps", [range(2, 5), range(1, 4)])
def test_the_expectation_equals_the_average_over_every_possible_prediction(convention, steps):
    # 6 candidates, lengths 1..3, n uniform on `steps`: every ordered draw enumerated
    counts, c = {1: 2, 2: 3, 3: 1}, 6
    exact = expected_random(counts, c, convention, min_steps=steps[0], max_steps=steps[-1])
    total = sum(counts.values())
    mean, cov = np.zeros(len(METRICS)), np.zeros((len(METRICS), len(METRICS)))
    for k, count in counts.items():
        rows = []
        for n in steps:
            draws = list(permutations(range(c), n))
            rows += [(1 / len(steps) / len(draws),
                      list(score_sample(range(k), d).values(convention).values()))
                     for d in draws]  # fmt: skip
        w = np.array([p for p, _ in rows])
        v = np.array([x for _, x in rows])
        m = w @ v
        mean += count * m
        cov += count * ((v - m).T * w) @ (v - m)
    mean /= total
    cov /= total**2
    assert [exact.mean[m] for m in METRICS] == pytest.approx(mean.tolist(), abs=1e-12)
    assert exact.covariance == pytest.approx(cov, abs=1e-12)


def test_closed_forms_on_table_2s_test_set():
    n_test = sum(TEST_COUNTS.values())
    mean_k = sum(k * c for k, c in TEST_COUNTS.items()) / n_test  # 4918 / 1430
    # E[|T∩T^|] = n k / C, so E[hits/n] = E[k]/C and E[hits/k] = E[n]/C = 4.5/C
    for c in (100, 4918):
        eq2 = expected_random(TEST_COUNTS, c, "eq2").mean
        prose = expected_random(TEST_COUNTS, c, "prose").mean
        assert eq2["R"] == pytest.approx(mean_k / c) == prose["P"]
        assert eq2["P"] == pytest.approx(4.5 / c) == prose["R"]
    # SD and NSD do not depend on the candidates: mean over n = 2..7 of |n - k|
    sd = sum(c * sum(abs(n - k) for n in range(2, 8)) / 6 for k, c in TEST_COUNTS.items())
    nsd = sum(c * sum(abs(n - k) for n in range(2, 8)) / 6 / k for k, c in TEST_COUNTS.items())
    e = expected_random(TEST_COUNTS, 100, "eq2").mean
    assert e["SD"] == pytest.approx(sd / n_test) and e["NSD"] == pytest.approx(nsd / n_test)
    # EMR: n = k (1/6), the right k clips (1 / C(C,k)) in the right order (1/k!)
    emr = sum(c / 6 / math.comb(100, k) / math.factorial(k) for k, c in TEST_COUNTS.items())
    assert e["EMR"] == pytest.approx(emr / n_test)


@pytest.mark.parametrize("convention", list(CONVENTIONS))
def test_a_small_monte_carlo_of_the_baseline_agrees_with_the_expectation(convention):
    counts, c, runs = {2: 30, 3: 20, 5: 10}, 20, 300
    exact = expected_random(counts, c, convention)
    sim = simulate_random(counts, c, runs, seed=3).summary(convention)
    for m in METRICS:
        # the mean of 300 runs lies within 4.5 of its standard errors (fails ~1 in 10^5)
        assert abs(sim.mean[m] - exact.mean[m]) <= 4.5 * exact.sd[m] / math.sqrt(runs) + 1e-12
        if exact.sd[m] > 1e-3:  # the spread of one run: within 25% for 300 runs
            assert sim.sd[m] == pytest.approx(exact.sd[m], rel=0.25)


def test_table_6s_random_row_follows_eq2_and_single_clip_ktd_one():
    table = random_row().values("tiny")
    eq2 = expected_random(TEST_COUNTS, 100, "eq2")
    prose = expected_random(TEST_COUNTS, 100, "prose")
    assert chi_square(table, eq2, ("R", "P"), 1e-4)[2] > 0.1
    assert chi_square(table, prose, ("R", "P"), 1e-4)[2] < 1e-10
    assert abs(z_scores(table, eq2, 1e-4)["KTD"]) < 1  # KTD = 1 for a single shared clip
    assert z_scores(table, prose, 1e-4)["KTD"] > 10  # KTD = 0 for it
    for setting, c in (("tiny", 100), ("full", 4918)):
        z = z_scores(random_row().values(setting), expected_random(TEST_COUNTS, c, "eq2"), 1e-4)
        assert all(abs(v) < 2 for v in z.values() if v is not None)


def test_chi_square_survival_at_known_quantiles():
    assert chi_square_survival(3.841459, 1) == pytest.approx(0.05, abs=1e-6)
    assert chi_square_survival(5.991465, 2) == pytest.approx(0.05, abs=1e-6)
    assert chi_square_survival(7.814728, 3) == pytest.approx(0.05, abs=1e-6)
    assert chi_square_survival(13.276704, 4) == pytest.approx(0.01, abs=1e-6)
    assert chi_square_survival(0.0, 3) == 1.0


def _samples():
    return [
        ReferenceSample("s1", ("a", "b"), ("a", "b", "c", "d", "e", "f", "g", "h")),
        ReferenceSample("s2", ("c", "d", "e"), ("c", "d", "e", "x", "y", "z", "w", "v")),
    ]


def test_random_predictions_are_seeded_distinct_candidates_of_two_to_seven_steps():
    samples = _samples()
    setting, first = random_predictions(samples, seed=5)
    assert setting == "tiny"
    assert random_predictions(samples, seed=5)[1] == first
    assert random_predictions(samples, seed=6)[1] != first
    lengths = set()
    for seed in range(40):
        for (sample_id, clips), sample in zip(random_predictions(samples, seed)[1], samples,
                                              strict=True):  # fmt: skip
            assert sample_id == sample.id
            assert len(set(clips)) == len(clips) and set(clips) <= set(sample.candidates)
            lengths.add(len(clips))
    assert lengths == set(range(2, 8))
    setting, full = random_predictions(samples, seed=5, setting="full")
    pool = {"a", "b", "c", "d", "e", "f", "g", "h", "x", "y", "z", "w", "v"}
    assert setting == "full" and all(set(clips) <= pool for _, clips in full)
    _, short = random_predictions(samples, seed=1, min_steps=1, max_steps=1)
    assert [len(c) for _, c in short] == [1, 1]
