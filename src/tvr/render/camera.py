"""A pinhole camera with +z up: projection of 3-D points to pixels, and pixel rays."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

# a 35 mm lens on a 32 mm sensor (horizontal fit), CLEVR's and Blender's default: about 49.1 degrees
LENS_MM = 35.0
SENSOR_MM = 32.0
HFOV = 2.0 * math.atan(SENSOR_MM / 2.0 / LENS_MM)


@dataclass(frozen=True)
class PinholeCamera:
    """A pinhole camera at `location` looking at `target`, +z up, square pixels.

    Args:
        location: camera centre in scene units.
        width, height: image size in pixels.
        hfov: horizontal field of view in radians.
        target: the point the optical axis goes through.
    """

    location: tuple[float, float, float]
    width: int
    height: int
    hfov: float = HFOV
    target: tuple[float, float, float] = (0.0, 0.0, 0.0)

    @cached_property
    def basis(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(right, up, forward) unit vectors of the camera frame."""
        c = np.asarray(self.location, dtype=np.float64)
        forward = np.asarray(self.target, dtype=np.float64) - c
        forward = forward / math.sqrt(float(forward @ forward))
        # forward x (0, 0, 1), normalised
        right = np.array([forward[1], -forward[0], 0.0])
        right /= math.sqrt(float(right @ right))
        up = np.array(
            [
                right[1] * forward[2] - right[2] * forward[1],
                right[2] * forward[0] - right[0] * forward[2],
                right[0] * forward[1] - right[1] * forward[0],
            ]
        )
        return right, up, forward

    @property
    def focal_px(self) -> float:
        """Focal length in pixels (square pixels, horizontal sensor fit)."""
        return (self.width / 2.0) / math.tan(self.hfov / 2.0)

    def project(self, points: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Pixel coordinates (u right, v down; pixel centres at +0.5) and depth of 3-D points."""
        right, up, forward = self.basis
        d = np.asarray(points, dtype=np.float64) - np.asarray(self.location)
        z = d @ forward
        f = self.focal_px
        u = self.width / 2.0 + f * (d @ right) / z
        v = self.height / 2.0 - f * (d @ up) / z
        return np.stack([u, v], axis=-1), z

    def rays(self, u: np.ndarray, v: np.ndarray) -> np.ndarray:
        """Unit ray directions through pixel positions (u, v), same convention as `project`."""
        right, up, forward = self.basis
        f = self.focal_px
        x = (np.asarray(u, dtype=np.float64) - self.width / 2.0) / f
        y = (self.height / 2.0 - np.asarray(v, dtype=np.float64)) / f
        d = x[..., None] * right + y[..., None] * up + forward
        return d / np.sqrt((d * d).sum(axis=-1, keepdims=True))
