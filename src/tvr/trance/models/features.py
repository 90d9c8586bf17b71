"""Model inputs derived from the symbolic state: the 10x19 object vectors of the TranceNet models.

Layout of the 19 numbers per object (attributes sorted by name, as the 33 values are):
color one-hot (8), material one-hot (3), position (2: x and y mapped from [-40, 40] to [0, 1]),
shape one-hot (3), size one-hot (3).
"""

from __future__ import annotations

import numpy as np

from tvr.trance.world import vocab
from tvr.trance.world.simulator import COL_COLOR, COL_MATERIAL, COL_SHAPE, COL_SIZE, COL_X, COL_Y

OBJECT_VECTOR_DIM = 19
SLICES = {
    "color": slice(0, 8),
    "material": slice(8, 11),
    "position": slice(11, 13),
    "shape": slice(13, 16),
    "size": slice(16, 19),
}


def object_vectors(states: np.ndarray) -> np.ndarray:
    """(..., 10, 19) float32 object vectors of states of shape (..., 10, 6)."""
    states = np.asarray(states)
    out = np.zeros((*states.shape[:-1], OBJECT_VECTOR_DIM), dtype=np.float32)
    span = float(vocab.GRID_MAX - vocab.GRID_MIN)
    for col, name in (
        (COL_COLOR, "color"),
        (COL_MATERIAL, "material"),
        (COL_SHAPE, "shape"),
        (COL_SIZE, "size"),
    ):
        idx = states[..., col].astype(np.int64) + SLICES[name].start
        np.put_along_axis(out, idx[..., None], 1.0, axis=-1)
    out[..., 11] = (states[..., COL_X] - vocab.GRID_MIN) / span
    out[..., 12] = (states[..., COL_Y] - vocab.GRID_MIN) / span
    return out
