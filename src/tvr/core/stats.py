"""Paired statistics: two systems scored on the same items (McNemar, sign-flip test, bootstrap).

Right/wrong per item (`compare_paired`): the two accuracies, the discordant items, a seeded
bootstrap interval of the difference and the exact McNemar p-value. A continuous score per item
(`compare_paired_scores`): the two means, the mean of the differences a - b, a seeded percentile
bootstrap interval of it (items resampled with replacement) and the two-sided p-value of the
paired sign-flip randomisation test (under "no difference" each item's a - b is as likely to
have either sign): exact over every sign pattern when at most `EXACT_FLIPS` items differ,
otherwise `resamples` seeded random patterns, p = (1 + #{|mean| >= observed}) / (1 + resamples).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from math import comb

import numpy as np


@dataclass(frozen=True)
class PairedComparison:
    """A against B on the same samples (see the module docstring)."""

    samples: int
    acc_a: float
    acc_b: float
    only_a: int
    only_b: int
    interval: tuple[float, float]
    p_value: float

    @property
    def difference(self) -> float:
        return self.acc_a - self.acc_b


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: P(a split at least this uneven | an even split)."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(comb(n, k) for k in range(min(only_a, only_b) + 1)) / 2**n
    return min(1.0, 2 * tail)


def compare_paired(
    a: dict[str, bool], b: dict[str, bool], resamples: int = 2000, seed: int = 0
) -> PairedComparison:
    """A against B; both must score the same samples (ValueError naming the first difference)."""
    keys = _paired_keys(a, b)
    x = np.array([a[k] for k in keys], dtype=bool)
    y = np.array([b[k] for k in keys], dtype=bool)
    n = len(keys)
    only_a, only_b = int((x & ~y).sum()), int((y & ~x).sum())
    # resampling n samples with replacement draws the three kinds (A only, B only, same) by a
    # multinomial; the difference of a resample is (A only - B only) / n
    rng = np.random.default_rng(seed)
    probs = [only_a / n, only_b / n, 1 - (only_a + only_b) / n]
    draws = rng.multinomial(n, probs, size=resamples)
    diffs = (draws[:, 0] - draws[:, 1]) / n
    low, high = np.quantile(diffs, [0.025, 0.975])
    return PairedComparison(
        samples=n,
        acc_a=float(x.mean()),
        acc_b=float(y.mean()),
        only_a=only_a,
        only_b=only_b,
        interval=(float(low), float(high)),
        p_value=mcnemar_exact(only_a, only_b),
    )


def _paired_keys(a: Mapping[str, object], b: Mapping[str, object]) -> list[str]:
    """The items both score, sorted; ValueError if they score different items or none."""
    if a.keys() != b.keys():
        only = sorted(a.keys() - b.keys()) or sorted(b.keys() - a.keys())
        raise ValueError(
            f"the two evaluations score different samples ({len(a)} and {len(b)}; "
            f"{only[0]!r} is in one only)"
        )
    if not a:
        raise ValueError("the evaluations score no samples")
    return sorted(a)


#: the sign-flip test enumerates every sign pattern up to this many non-zero differences
EXACT_FLIPS = 16

#: random draws held in memory at once (rows x items) by the resampling loops
_CHUNK_CELLS = 2_000_000


@dataclass(frozen=True)
class PairedScores:
    """A against B on the same items, a continuous score each (see the module docstring)."""

    n: int
    mean_a: float
    mean_b: float
    difference: float  # the mean of a - b over the items
    interval: tuple[float, float]  # 95% percentile bootstrap interval of `difference`
    p_value: float  # two-sided paired sign-flip randomisation test
    exact: bool  # True: every sign pattern enumerated; False: `resamples` random patterns


def compare_paired_scores(
    a: dict[str, float], b: dict[str, float], resamples: int = 10000, seed: int = 0
) -> PairedScores:
    """A against B; both must score the same items (ValueError naming the first difference),
    each with a finite number."""
    keys = _paired_keys(a, b)
    x = np.array([a[k] for k in keys], dtype=float)
    y = np.array([b[k] for k in keys], dtype=float)
    for values, name in ((x, "first"), (y, "second")):
        if not np.isfinite(values).all():
            bad = keys[int(np.flatnonzero(~np.isfinite(values))[0])]
            raise ValueError(f"the {name} evaluation's score of {bad!r} is not a finite number")
    if resamples < 1:
        raise ValueError(f"resamples must be at least 1, got {resamples}")
    d = x - y
    rng = np.random.default_rng(seed)
    low, high = np.quantile(_bootstrap_means(d, resamples, rng), [0.025, 0.975])
    p_value, exact = _sign_flip_p(d, resamples, rng)
    return PairedScores(
        n=len(keys),
        mean_a=float(x.mean()),
        mean_b=float(y.mean()),
        difference=float(d.mean()),
        interval=(float(low), float(high)),
        p_value=p_value,
        exact=exact,
    )


def _bootstrap_means(d: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """The mean of `d` over `resamples` resamples of its items with replacement."""
    n = len(d)
    rows = max(1, _CHUNK_CELLS // n)
    means = []
    for start in range(0, resamples, rows):
        picks = rng.integers(0, n, size=(min(rows, resamples - start), n))
        means.append(d[picks].mean(axis=1))
    return np.concatenate(means)


def _sign_flip_p(d: np.ndarray, resamples: int, rng: np.random.Generator) -> tuple[float, bool]:
    """Two-sided p of the paired sign-flip test of mean(d) = 0, and whether it is exact.

    Items with d = 0 look the same under either sign, so the exact test enumerates the signs of
    the non-zero differences only (the same distribution, far fewer patterns)."""
    nonzero = d[d != 0]
    observed = abs(nonzero.sum())
    # sums in another order may differ in the last bits: a pattern as extreme counts as such
    tolerance = 1e-9 * np.abs(nonzero).sum()
    m = len(nonzero)
    if m <= EXACT_FLIPS:
        patterns = np.arange(2**m)[:, None] >> np.arange(m) & 1
        sums = np.abs(((2 * patterns - 1) * nonzero).sum(axis=1))
        return float((sums >= observed - tolerance).mean()), True
    rows = max(1, _CHUNK_CELLS // m)
    extreme = 0
    for start in range(0, resamples, rows):
        signs = rng.integers(0, 2, size=(min(rows, resamples - start), m)) * 2 - 1
        extreme += int((np.abs((signs * nonzero).sum(axis=1)) >= observed - tolerance).sum())
    return (1 + extreme) / (1 + resamples), False
