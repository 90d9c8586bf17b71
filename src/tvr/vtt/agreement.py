"""Spearman's rank correlation between two raters (people and an LLM judge), ties averaged.

`spearman` uses `scipy.stats.spearmanr` (rho and its two-sided p-value) when SciPy is
installed; without it, rho from tvr's own ranks (the Pearson correlation of average ranks,
what spearmanr computes) and no p-value. rho is undefined (None) for fewer than two pairs or
when one side is constant; the p-value is None where SciPy leaves it undefined (two pairs).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SCIPY = "scipy.stats.spearmanr"
OWN = "tvr.vtt.agreement (average ranks; no p-value without SciPy)"


@dataclass(frozen=True)
class Spearman:
    """rho, its p-value where known, the number of pairs, and what computed them."""

    rho: float | None
    p_value: float | None
    n: int
    method: str


def average_ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, tied values sharing the mean of their ranks: [3, 1, 3] -> [2.5, 1, 2.5]."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    ranks = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        shared = (start + end) / 2 + 1
        for k in range(start, end + 1):
            ranks[order[k]] = shared
        start = end + 1
    return ranks


def pearson(x: Sequence[float], y: Sequence[float]) -> float | None:
    """The Pearson correlation; None when either side is constant or there are < 2 values."""
    n = len(x)
    if n < 2:
        return None
    mx, my = sum(x) / n, sum(y) / n
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    if sxx == 0 or syy == 0:
        return None
    return max(-1.0, min(1.0, sxy / math.sqrt(sxx * syy)))


def spearman_rho(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rho by tvr's own ranks."""
    if len(x) != len(y):
        raise ValueError(f"{len(x)} values against {len(y)}")
    return pearson(average_ranks(x), average_ranks(y))


def spearman(x: Sequence[float], y: Sequence[float], use_scipy: bool = True) -> Spearman:
    """rho and p-value of the pairs (x[i], y[i]) (see the module's rules)."""
    rho = spearman_rho(x, y)
    if rho is None:
        return Spearman(None, None, len(x), OWN)
    if use_scipy:
        try:
            from scipy.stats import spearmanr
        except ImportError:
            pass
        else:
            result = spearmanr(x, y)
            p_value = float(result.pvalue)  # NaN for two pairs
            return Spearman(
                float(result.statistic), None if math.isnan(p_value) else p_value, len(x), SCIPY
            )
    return Spearman(rho, None, len(x), OWN)
