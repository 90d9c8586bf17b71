"""Image to floor and back for TRANCE's objects: where an object's centre lands in an image, and
which grid position a centre pixel means for a camera.

An object's 3-D centre stands at the height that its size and shape fix (`centre_height`: a
sphere or cylinder of footprint radius r at r, a cube at r / sqrt(2)); `tvr.trance.world.camera`
projects it. Back: the ray through the pixel meets the plane at that height.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from tvr.trance.world import vocab
from tvr.trance.world.camera import IMAGE_WIDTH, Camera


def centre_height(size: str, shape: str) -> float:
    """Height (scene units) of an object's centre above the floor."""
    r = vocab.RADIUS_SCENE[vocab.SIZES.index(size)]
    return r / math.sqrt(2.0) if shape == "cube" else r


def project_centre(obj: dict, camera_location: Sequence[float]) -> tuple[float, float]:
    """(u, v) in a 320x240 image of an object dict's centre seen from `camera_location`."""
    x, y = (float(p) * vocab.GRID_UNIT for p in obj["position"])
    point = np.array([[x, y, centre_height(obj["size"], obj["shape"])]])
    uv, _ = Camera(tuple(float(c) for c in camera_location)).project(point)  # type: ignore[arg-type]
    return float(uv[0, 0]), float(uv[0, 1])


def pixel_to_grid(
    u: float,
    v: float,
    height: float,
    camera_location: Sequence[float],
    width: int = IMAGE_WIDTH,
) -> tuple[float, float]:
    """The world position (grid units, not rounded) of a centre at pixel (u, v) of an image
    `width` wide (4:3), at `height` scene units above the floor, seen from `camera_location`."""
    scale = IMAGE_WIDTH / width
    cam = Camera(tuple(float(c) for c in camera_location))  # type: ignore[arg-type]
    d = cam.rays(np.array([u * scale]), np.array([v * scale]))[0]
    c = np.asarray(cam.location, dtype=np.float64)
    t = (height - c[2]) / d[2]
    p = c + t * d
    return float(p[0] / vocab.GRID_UNIT), float(p[1] / vocab.GRID_UNIT)

