"""The paper's random baseline: its predictions, and its expected metrics (exact, and by simulation).

Section 8: "the total number of steps n is randomly selected from 2 to 7. Next, n non-repeating
atomic transformations are sequentially and randomly sampled from the candidate set." So n is
uniform on 2..7 and the prediction is n distinct candidates in a uniformly random order.

Expected values. A sample with k reference clips, all among C candidates, shares
X ~ Hypergeometric(C, k, n) clips with the prediction, and the shared clips come in a uniformly
random order. Given (n, k, X = x) every metric is known or has known moments:
- R and P are x/n and x/k (which is which depends on the convention), SD = |n - k|, NSD = SD / k;
- KTD is 1 for x = 0, the single-clip convention's value for x = 1, and for x >= 2 the
  discordant pairs D of a uniformly random permutation of x items over x(x-1)/2, with
  E[D] = x(x-1)/4 and Var[D] = x(x-1)(2x+5)/72 (so E[KTD | x] = 1/2);
- EMR is 1 with probability 1/k! when x = n = k (the right clips, in a random order).
So the mean of each metric, and the covariance of one run's means over a test set whose lengths
are fixed (Table 2's 432, 425, 279, 154, 87, 53 test videos of k = 2..7), are exact sums
(`expected_random`). `simulate_random` runs the baseline itself through `tvr.tranco.eval.metrics`
many times over such a test set, as an independent check of both.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

import numpy as np

from tvr.tranco.data.formats import ReferenceSample, candidate_pools
from tvr.tranco.eval.metrics import (
    CONVENTIONS,
    KTD_SINGLE,
    METRICS,
    Convention,
    convention_named,
    score_sample,
)

T = TypeVar("T")

#: the paper's range of the predicted number of steps
MIN_STEPS, MAX_STEPS = 2, 7


def random_prediction(
    pool: Sequence[T], rng: random.Random, min_steps: int = MIN_STEPS, max_steps: int = MAX_STEPS
) -> list[T]:
    """n uniform on min_steps..max_steps (at most the pool's size), then n distinct clips of the
    pool in a uniformly random order."""
    n = rng.randint(min_steps, max_steps)
    return rng.sample(pool, min(n, len(pool)))


def random_predictions(
    samples: Sequence[ReferenceSample],
    seed: int = 0,
    setting: str = "auto",
    min_steps: int = MIN_STEPS,
    max_steps: int = MAX_STEPS,
) -> tuple[str, list[tuple[str, list[str]]]]:
    """The setting used ("tiny" or "full") and (sample id, predicted clips) for every sample."""
    if not 1 <= min_steps <= max_steps:
        raise ValueError(f"need 1 <= min_steps <= max_steps, got {min_steps}, {max_steps}")
    setting, pools = candidate_pools(samples, setting)
    rng = random.Random(seed)
    return setting, [
        (s.id, random_prediction(pool, rng, min_steps, max_steps))
        for s, pool in zip(samples, pools, strict=True)
    ]


@dataclass(frozen=True)
class Expectation:
    """A metric's mean over a test set and its spread: the exact expectation (or a simulation's
    mean) and the standard deviation of one run's mean (the sampling error of a single run)."""

    mean: dict[str, float]
    sd: dict[str, float]
    covariance: np.ndarray  # of one run's means, rows and columns in METRICS order


def expected_random(
    length_counts: Mapping[int, int],
    n_candidates: int,
    convention: Convention | str,
    min_steps: int = MIN_STEPS,
    max_steps: int = MAX_STEPS,
) -> Expectation:
    """The exact expectation of the random baseline's metrics over a test set with
    `length_counts[k]` samples of k reference clips, each among `n_candidates` candidates."""
    conv = convention_named(convention)
    total = sum(length_counts.values())
    if total <= 0 or any(c < 0 for c in length_counts.values()):
        raise ValueError("length_counts needs positive counts")
    if min(length_counts) < 1 or max(length_counts) > n_candidates:
        raise ValueError("every length must be between 1 and the number of candidates")
    dim = len(METRICS)
    mean = np.zeros(dim)
    cov = np.zeros((dim, dim))
    for k, count in length_counts.items():
        if count == 0:
            continue
        m_k, second_k = _moments_given_length(k, n_candidates, conv, min_steps, max_steps)
        mean += count * m_k
        cov += count * (second_k - np.outer(m_k, m_k))
    mean /= total
    cov /= total**2
    sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    return Expectation(
        mean=dict(zip(METRICS, mean.tolist(), strict=True)),
        sd=dict(zip(METRICS, sd.tolist(), strict=True)),
        covariance=cov,
    )


def _moments_given_length(
    k: int, c: int, conv: Convention, min_steps: int, max_steps: int
) -> tuple[np.ndarray, np.ndarray]:
    """E[v] and E[v v^T] of a sample's metric vector v (METRICS order) given k reference clips."""
    idx = {name: i for i, name in enumerate(METRICS)}
    dim = len(METRICS)
    first, second = np.zeros(dim), np.zeros((dim, dim))
    steps = range(min_steps, max_steps + 1)
    single = KTD_SINGLE[conv.ktd_single]
    for n_drawn in steps:
        n = min(n_drawn, c)
        for x in range(max(0, n + k - c), min(n, k) + 1):
            p = math.comb(k, x) * math.comb(c - k, n - x) / math.comb(c, n) / len(steps)
            r_prose, p_prose = x / k, (x / n if n else 0.0)
            recall, precision = (r_prose, p_prose) if conv.rp == "prose" else (p_prose, r_prose)
            sd = abs(n - k)
            if x == 0:
                ktd, ktd2 = 1.0, 1.0
            elif x == 1:
                ktd, ktd2 = single, single * single
            else:
                pairs = x * (x - 1) / 2
                var_d = x * (x - 1) * (2 * x + 5) / 72
                ktd, ktd2 = 0.5, (var_d + (pairs / 2) ** 2) / pairs**2
            emr = 1 / math.factorial(k) if x == n == k else 0.0
            v = np.array([recall, precision, ktd, sd, sd / k, emr])
            outer = np.outer(v, v)
            kt, em = idx["KTD"], idx["EMR"]
            outer[kt, kt] = ktd2
            outer[em, em] = emr  # EMR is 0 or 1
            # when EMR is 1 the order is right: KTD is 0, or the single-clip value if x == 1
            outer[kt, em] = outer[em, kt] = emr * (single if x == 1 else 0.0)
            first += p * v
            second += p * outer
    return first, second


@dataclass(frozen=True)
class Simulation:
    """Means of many simulated runs of the baseline over one test set, per convention."""

    runs: int
    run_means: dict[str, np.ndarray]  # convention name -> (runs, len(METRICS)) array

    def summary(self, convention: str) -> Expectation:
        """The mean over runs and the standard deviation of one run's mean."""
        values = self.run_means[convention]
        cov = np.cov(values, rowvar=False) if self.runs > 1 else np.zeros((len(METRICS),) * 2)
        return Expectation(
            mean=dict(zip(METRICS, values.mean(axis=0).tolist(), strict=True)),
            sd=dict(zip(METRICS, np.sqrt(np.diag(cov)).tolist(), strict=True)),
            covariance=cov,
        )


def simulate_random(
    length_counts: Mapping[int, int],
    n_candidates: int,
    runs: int,
    seed: int = 0,
    min_steps: int = MIN_STEPS,
    max_steps: int = MAX_STEPS,
) -> Simulation:
    """Run the baseline (`random_prediction`) `runs` times over a test set with
    `length_counts[k]` samples of k clips among `n_candidates` candidates, scoring each with
    `tvr.tranco.eval.metrics`; the run means under every convention."""
    rng = random.Random(seed)
    pool = range(n_candidates)  # candidate ids; the reference of a k-clip sample is 0..k-1
    references = {k: list(range(k)) for k in length_counts}
    order = [k for k, count in sorted(length_counts.items()) for _ in range(count)]
    out = {name: np.zeros((runs, len(METRICS))) for name in CONVENTIONS}
    for run in range(runs):
        scores = [
            score_sample(references[k], random_prediction(pool, rng, min_steps, max_steps))
            for k in order
        ]
        for name, conv in CONVENTIONS.items():
            sums = np.zeros(len(METRICS))
            for s in scores:
                sums += list(s.values(conv).values())
            out[name][run] = sums / len(scores)
    return Simulation(runs=runs, run_means=out)


def z_scores(
    published: Mapping[str, float], expected: Expectation, rounding: float = 0.0
) -> dict[str, float | None]:
    """(published - expected) / sd per metric, the sd widened by the published rounding
    (a uniform error of +-rounding/2); None where the spread is 0."""
    out: dict[str, float | None] = {}
    for name, value in published.items():
        spread = math.sqrt(expected.sd[name] ** 2 + rounding**2 / 12)
        out[name] = (value - expected.mean[name]) / spread if spread > 0 else None
    return out


def chi_square(
    published: Mapping[str, float],
    expected: Expectation,
    metrics: Sequence[str] = ("R", "P", "KTD"),
    rounding: float = 0.0,
) -> tuple[float, int, float]:
    """Joint test of several metrics: the Mahalanobis distance of the published values from the
    expectation under its covariance (normal approximation), its degrees of freedom and the
    p-value of a chi-square with those degrees."""
    idx = [METRICS.index(m) for m in metrics]
    cov = expected.covariance[np.ix_(idx, idx)] + np.eye(len(idx)) * rounding**2 / 12
    diff = np.array([published[m] - expected.mean[m] for m in metrics])
    stat = float(diff @ np.linalg.solve(cov, diff))
    return stat, len(idx), chi_square_survival(stat, len(idx))


def chi_square_survival(x: float, df: int) -> float:
    """P(chi-square with df degrees > x), exact for integer df (the incomplete-gamma series)."""
    if df < 1:
        raise ValueError("df must be at least 1")
    if x <= 0:
        return 1.0
    half = x / 2
    if df % 2:
        total, start = math.erfc(math.sqrt(half)), 1
    else:
        total, start = math.exp(-half), 2
    for d in range(start, df, 2):  # Q(x; d + 2) = Q(x; d) + (x/2)^(d/2) e^(-x/2) / Gamma(d/2 + 1)
        total += math.exp(d / 2 * math.log(half) - half - math.lgamma(d / 2 + 1))
    return min(1.0, total)
