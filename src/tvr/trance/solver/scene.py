"""A parsed scene: what a perception module reports of one image.

Positions are on the ground plane in grid units, in the frame of the camera that took the image:
the frame turned so that this camera stands where the centre camera stands (+x side). For the
centre camera it is the world frame. `to_world` turns a position back for a supposed view; the
solver tries every view and keeps the most consistent parse (View setting).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from tvr.trance.world import vocab
from tvr.trance.world.camera import CAMERA_BASE

#: azimuth (radians) of each camera's base position about the scene's z axis; C is 0
VIEW_ANGLE: dict[str, float] = {
    v: math.atan2(CAMERA_BASE[v][1], CAMERA_BASE[v][0]) for v in vocab.VIEWS
}


def from_world(x: float, y: float, view: str) -> tuple[float, float]:
    """A world position (grid units) in the frame of camera `view`."""
    a = -VIEW_ANGLE[view]
    c, s = math.cos(a), math.sin(a)
    return (c * x - s * y, s * x + c * y)


def to_world(x: float, y: float, view: str) -> tuple[float, float]:
    """A position in the frame of camera `view`, back in the world frame (grid units)."""
    a = VIEW_ANGLE[view]
    c, s = math.cos(a), math.sin(a)
    return (c * x - s * y, s * x + c * y)


@dataclass(frozen=True)
class ParsedObject:
    """One object seen in an image.

    shape, size, color, material: names from `tvr.trance.world.vocab`; position: (x, y) grid
    units in the image's camera frame; confidence: the parser's belief in this object's
    attributes (0..1); index: the object's true index, known only to the oracle perception
    (used by `--matching gt`, never by the rule matching); pixel: the centre in a 320x240 image
    when an image parser found it (the solver then places it for each camera it supposes, and
    `position` is its place for the centre camera); probabilities: each attribute's distribution
    over its values (vocab order);
    score: the detector's belief that the object is there."""

    shape: str
    size: str
    color: str
    material: str
    position: tuple[float, float]
    confidence: float = 1.0
    index: int | None = None
    pixel: tuple[float, float] | None = None
    probabilities: dict[str, tuple[float, ...]] | None = None
    score: float = 1.0

    def categories(self) -> tuple[int, int, int, int]:
        """(size, color, material, shape) indices: the simulator's state columns 2..5."""
        return (
            vocab.SIZES.index(self.size),
            vocab.COLORS.index(self.color),
            vocab.MATERIALS.index(self.material),
            vocab.SHAPES.index(self.shape),
        )


@dataclass(frozen=True)
class ParsedScene:
    """The objects seen in one image (only the visible area shows), and which camera took it as
    far as the caller knows (`view`: the image's name; the solver infers the frame itself)."""

    objects: tuple[ParsedObject, ...]
    view: str = "C"
    confidence: float = 1.0
    notes: dict = field(default_factory=dict)


@dataclass(frozen=True)
class WorldObject:
    """A parsed object put on the world grid for one supposed view."""

    grid: tuple[int, int]  # rounded world position
    world: tuple[float, float]  # the position before rounding (grid units)
    residual: float  # distance from the unrounded position to the grid point
    cats: tuple[int, int, int, int]  # size, color, material, shape
    confidence: float
    index: int | None
    logp: tuple[np.ndarray, ...] | None = None  # log-probabilities of size, color, material, shape
    score: float = 1.0  # the detector's belief that the object is there


def on_grid(scene: ParsedScene, view: str) -> list[WorldObject]:
    """The parsed objects in the world frame of a supposed view, rounded to grid points."""
    out = []
    for o in scene.objects:
        if o.pixel is not None:
            from tvr.trance.perception.geometry import centre_height, pixel_to_grid

            h = centre_height(o.size, o.shape)
            wx, wy = pixel_to_grid(o.pixel[0], o.pixel[1], h, CAMERA_BASE[view])
        else:
            wx, wy = to_world(o.position[0], o.position[1], view)
        gx, gy = round(wx), round(wy)
        out.append(
            WorldObject(
                (int(gx), int(gy)),
                (float(wx), float(wy)),
                float(math.hypot(wx - gx, wy - gy)),
                o.categories(),
                o.confidence,
                o.index,
                _log_probabilities(o),
                o.score,
            )
        )
    return out


def _log_probabilities(o: ParsedObject) -> tuple[np.ndarray, ...] | None:
    if o.probabilities is None:
        return None
    names = ("size", "color", "material", "shape")
    return tuple(np.log(np.clip(np.asarray(o.probabilities[n], dtype=np.float64), 1e-9, 1.0))
                 for n in names)  # fmt: skip
