"""What the dynamics predictor is given about a video: its objects and their observed motion.

An `Observation` holds, for frames 0..T-1 of the shown video, each object's centre in pixels of
the 480x320 frame and whether it is in view; it comes from tracking (`observation_from_tracks`,
NS-DR's perception) or from ground truth (`observation_from_facts`, the ablation with perfect
perception). The model works in unit coordinates, the frame mapped to [-1, 1] on both axes
(`to_unit`, `to_pixels`), as the paper normalises its inputs to [-1, 1].
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tvr.clevrer.programs.facts import ObjectProps, SceneFacts
from tvr.clevrer.vocab import FRAME_HEIGHT, FRAME_WIDTH, MATERIALS, SHAPES, SHOWN_FRAMES

#: pixels per unit on each axis (x, y): the frame spans [-1, 1]
HALF_SIZE = np.array([FRAME_WIDTH / 2, FRAME_HEIGHT / 2])
#: the per-object attribute features: shape and material one-hot (colour does not move anything)
ATTRIBUTE_DIM = len(SHAPES) + len(MATERIALS)


def to_unit(xy: np.ndarray) -> np.ndarray:
    """Pixels (..., 2) -> unit coordinates."""
    return np.asarray(xy, dtype=np.float64) / HALF_SIZE - 1.0


def to_pixels(unit: np.ndarray) -> np.ndarray:
    """Unit coordinates (..., 2) -> pixels."""
    return (np.asarray(unit, dtype=np.float64) + 1.0) * HALF_SIZE


def inside_frame(unit: np.ndarray) -> np.ndarray:
    """Whether unit positions (..., 2) are inside the frame."""
    return np.all((unit >= -1.0) & (unit < 1.0), axis=-1)


def attribute_features(objects: tuple[ObjectProps, ...]) -> np.ndarray:
    """(N, ATTRIBUTE_DIM) shape and material one-hot of each object."""
    out = np.zeros((len(objects), ATTRIBUTE_DIM), dtype=np.float32)
    for i, o in enumerate(objects):
        out[i, SHAPES.index(o.shape)] = 1.0
        out[i, len(SHAPES) + MATERIALS.index(o.material)] = 1.0
    return out


@dataclass(frozen=True)
class Observation:
    """Objects and their observed motion over frames 0..T-1.

    Args:
        objects: attributes per object id.
        xy: (T, N, 2) centres, pixels (anything where not visible).
        visible: (T, N) in view.
    """

    objects: tuple[ObjectProps, ...]
    xy: np.ndarray
    visible: np.ndarray

    @property
    def n_frames(self) -> int:
        return int(self.visible.shape[0])


def observation_from_facts(facts: SceneFacts, n_frames: int = SHOWN_FRAMES) -> Observation:
    """The first `n_frames` frames of a factual run's motion (ground-truth perception)."""
    motion = facts.factual.motion
    if motion is None:
        raise ValueError("the factual run has no motion")
    xy = np.nan_to_num(np.asarray(motion.xy[:n_frames], dtype=np.float64))
    return Observation(facts.objects, xy, np.asarray(motion.visible[:n_frames], dtype=bool))


def observation_from_tracks(tracks: Any) -> Observation:
    """An observation from `tvr.clevrer.models.perception.tracking.Tracks` (frames placed by their
    index; frames without proposals are not visible)."""
    frames = np.asarray(tracks.frame_indices, dtype=int)
    n = len(tracks.objects)
    t = int(frames.max()) + 1 if len(frames) else 0
    xy = np.zeros((t, n, 2))
    visible = np.zeros((t, n), dtype=bool)
    xy[frames] = np.nan_to_num(np.asarray(tracks.xy, dtype=np.float64))
    visible[frames] = np.asarray(tracks.visible, dtype=bool)
    return Observation(tuple(tracks.objects), xy, visible)
