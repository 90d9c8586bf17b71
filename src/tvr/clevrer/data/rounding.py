"""Round whole arrays to decimals exactly as Python's `round(float(v), decimals) + 0.0` does.

The released files' numbers are written rounded; rounding value by value in Python is what
dominates writing an annotation or a dynamics file. numpy's `round` multiplies by 10**decimals
and rounds to an integer, which differs from Python's correctly rounded result where the product
lands within an ulp or two of a half (about one value in 10**9). `rounded` does numpy's sum for
the whole array and redoes those few values with `round`, so the files stay byte for byte what
the per-value code writes. `+ 0.0` turns -0.0 into 0.0 (no "-0.0" in the files).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def rounded_array(values: Any, decimals: int) -> np.ndarray:
    """`values` (any shape, finite or NaN) rounded to `decimals` (>= 0) as Python's `round`."""
    a = np.asarray(values, dtype=np.float64)
    scale = 10.0**decimals
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = a * scale
        out = np.rint(scaled) / scale + 0.0
        # the product's rounding error is at most half an ulp: only values this close to a half
        # can round to another integer than the exact product would
        half_gap = np.abs(np.abs(scaled - np.trunc(scaled)) - 0.5)
        doubtful = np.flatnonzero(half_gap <= 4.0 * np.spacing(np.abs(scaled)))
    if doubtful.size:
        flat_in, flat_out = a.reshape(-1), out.reshape(-1)
        for k in doubtful.tolist():
            flat_out[k] = round(float(flat_in[k]), decimals) + 0.0
    return out


def rounded(values: Any, decimals: int) -> list[Any]:
    """`rounded_array` as (nested) lists of Python floats, ready for JSON."""
    return rounded_array(values, decimals).tolist()
