"""What the executor reads about one video: objects, events and motion, factual and counterfactual.

The contract between the world (ground truth from the simulator and annotations) or a model
(predicted dynamics) and the executor. Object ids are those of the video (0..N-1); a
counterfactual run keeps the original ids (the removed object simply never appears).
Frames count from 0 at 25 fps; frames >= `n_shown_frames` are the unseen future.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np


@dataclass(frozen=True)
class ObjectProps:
    """The static attributes of one object."""

    color: str
    material: str
    shape: str


@dataclass(frozen=True)
class Event:
    """One event: `kind` "in" or "out" (of the camera view; one object) or "collision" (two)."""

    kind: str
    frame: int
    objects: tuple[int, ...]


@dataclass(frozen=True)
class Motion:
    """Per-frame motion of every object in image coordinates of the 480x320 frame.

    Args:
        xy: (T, N, 2) object centre, pixels (x right, y down).
        velocity: (T, N, 2) pixels per frame, same axes.
        visible: (T, N) whether the object is inside the camera view (and present) at that frame.
        floor: (T, N, 2) the centre on the floor in scene units, where the world is known (a
            simulated video); None for predicted dynamics. The executor never reads it; the
            question generator weighs predictive distractors with it.
    """

    xy: np.ndarray
    velocity: np.ndarray
    visible: np.ndarray
    floor: np.ndarray | None = None


@dataclass(frozen=True)
class Run:
    """One simulation of the video (factual, or with one object removed): its events and motion."""

    events: tuple[Event, ...]
    motion: Motion | None = None


@dataclass(frozen=True)
class SceneFacts:
    """Everything the executor needs about one video."""

    objects: tuple[ObjectProps, ...]
    factual: Run
    counterfactual: Mapping[int, Run] = field(default_factory=dict)
    n_shown_frames: int = 128
