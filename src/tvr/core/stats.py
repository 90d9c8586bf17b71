"""Paired statistics: two classifiers scored on the same items (exact McNemar, bootstrap interval)."""

from __future__ import annotations

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
    if a.keys() != b.keys():
        only = sorted(a.keys() - b.keys()) or sorted(b.keys() - a.keys())
        raise ValueError(
            f"the two evaluations score different samples ({len(a)} and {len(b)}; "
            f"{only[0]!r} is in one only)"
        )
    if not a:
        raise ValueError("the evaluations score no samples")
    keys = sorted(a)
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
