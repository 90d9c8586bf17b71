"""`balanced_choice` (Algorithm 1 on plain floats) draws what the array formula draws."""

from __future__ import annotations

import numpy as np

from tvr.trance.sampling.balance import balanced_choice


def test_balanced_choice_draws_as_the_array_formula():
    """`balanced_choice` (plain floats) picks what Algorithm 1's array formula picks."""
    rng = np.random.default_rng(2)
    for _ in range(2000):
        n = int(rng.integers(1, 30))
        counts = rng.integers(0, 50, n)
        allowed = rng.random(n) < 0.7
        tolerance = float(rng.choice([0.1, 0.5, 2.0]))
        seed = int(rng.integers(0, 2**32))
        got = balanced_choice(np.random.default_rng(seed), counts, tolerance, allowed)
        if not allowed.any():
            assert got is None
            continue
        c = counts.astype(np.float64)
        weights = np.clip(np.where(allowed, c[allowed].max() - c + tolerance, 0.0), 0.0, None)
        cum = np.cumsum(weights)
        want = int(np.searchsorted(cum, np.random.default_rng(seed).random() * cum[-1], "right"))
        assert got == want and allowed[got]
