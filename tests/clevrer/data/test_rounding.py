"""Whole-array rounding gives exactly Python's per-value `round(v, d) + 0.0`."""

import math

import numpy as np
import pytest

from tvr.clevrer.data.rounding import rounded, rounded_array


def _python(values: np.ndarray, decimals: int) -> list[float]:
    return [round(float(v), decimals) + 0.0 for v in values.reshape(-1)]


def _same(got: list[float], want: list[float]) -> bool:
    return all(
        (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
        for a, b in zip(got, want, strict=True)
    )


@pytest.mark.parametrize("decimals", [3, 6])
def test_matches_python_round_where_numpy_round_does_not(decimals):
    rng = np.random.default_rng(0)
    scale = 10.0**decimals
    halves = (np.arange(-3000, 3000) + 0.5) / scale  # binary neighbours of decimal halves
    values = np.concatenate([
        rng.normal(0.0, 3.0, 20_000),
        rng.uniform(-2e-6, 2e-6, 2_000),  # tiny values, negative ones round to -0.0
        halves,
        np.nextafter(halves, np.inf),
        np.nextafter(halves, -np.inf),
        [0.0, -0.0, 2.0**52 + 0.5, 2.0**53, -1e300, np.inf, -np.inf, np.nan],
    ])  # fmt: skip
    want = _python(values, decimals)
    got = rounded_array(values, decimals).reshape(-1).tolist()
    assert _same(got, want)
    # the plain numpy rounding differs on some of these values: the check above can fail
    plain = (np.round(values, decimals) + 0.0).tolist()
    assert not _same(plain, want)


def test_keeps_the_shape_and_gives_plain_floats():
    a = np.array([[[1.23456789, -0.0000004], [2.5e-7, 3.0]]])
    out = rounded(a, 6)
    assert out == [[[1.234568, 0.0], [0.0, 3.0]]]
    assert all(type(v) is float for v in out[0][0])
    assert math.copysign(1, out[0][0][1]) == 1.0  # no -0.0
    assert rounded((0.1234, 5.0), 3) == [0.123, 5.0]
