"""Hand-made states and samples for the tests."""

from __future__ import annotations

import numpy as np

from tvr.trance.data.sample import Sample, Step
from tvr.trance.world import vocab
from tvr.trance.world.simulator import (
    COL_COLOR,
    COL_MATERIAL,
    COL_SHAPE,
    COL_SIZE,
    apply_steps,
    array_to_objects,
)

SMALL, MEDIUM, LARGE = (
    vocab.SIZES.index("small"),
    vocab.SIZES.index("medium"),
    vocab.SIZES.index("large"),
)


def state(*objects: tuple[int, int, int]) -> np.ndarray:
    """A (10, 6) state: the given (x, y, size) objects first, the rest small, parked far apart
    along the invisible edge y = -40."""
    s = np.zeros((10, 6), dtype=np.int16)
    for i in range(10):
        s[i] = (-40 + 8 * i, -40, SMALL, i % 8, i % 3, i % 3)
    for i, (x, y, size) in enumerate(objects):
        s[i, 0], s[i, 1], s[i, COL_SIZE] = x, y, size
    return s


def v(name: str) -> int:
    return vocab.VALUE_INDEX[name]


def make_sample(sid: str, init: np.ndarray, steps: list[tuple[int, str]]) -> Sample:
    pairs = [(o, v(n)) for o, n in steps]
    final, _ = apply_steps(init, pairs)
    rot = [0.0] * 10
    return Sample(
        id=sid,
        objects=array_to_objects(init, rot),
        steps=[Step(o, val) for o, val in pairs],
        cameras={"L": [7.48, -6.5, 6.34], "C": [9.48, 0.0, 6.34], "R": [7.48, 6.5, 6.34]},
        lights={
            "key": [6.45, -2.91, 4.26],
            "back": [-1.17, 2.65, 5.82],
            "fill": [-4.67, -4.01, 5.01],
        },
        final=array_to_objects(final, rot),
    )


__all__ = [
    "COL_COLOR",
    "COL_MATERIAL",
    "COL_SHAPE",
    "LARGE",
    "MEDIUM",
    "SMALL",
    "make_sample",
    "state",
    "v",
]
