"""Cameras and lights of the TRANCE scenes: base positions, per-sample jitter, pinhole projection.

All coordinates are in scene units (one grid unit = 0.15). Cameras aim at the origin with +z up,
a 35 mm lens on a 32 mm sensor (horizontal field of view about 49.1 degrees), images 320x240.
The renderers and the occlusion check both project with `Camera.project`, so they agree on where
every object lands.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from tvr._moved import forwarding_getattr

IMAGE_WIDTH = 320
IMAGE_HEIGHT = 240
LENS_MM = 35.0
SENSOR_MM = 32.0
HFOV = 2.0 * math.atan(SENSOR_MM / 2.0 / LENS_MM)


CAMERA_BASE = {
    "C": (9.4811, 0.0, 6.3437),
    "L": (7.4811, -6.5076, 6.3437),
    "R": (7.4811, 6.5076, 6.3437),
}
LIGHT_BASE = {
    "key": (6.45, -2.91, 4.26),
    "back": (-1.17, 2.65, 5.82),
    "fill": (-4.67, -4.01, 5.01),
}
CAMERA_JITTER = 0.5
LIGHT_JITTER = 1.0


def sample_jitter(
    rng: np.random.Generator,
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Jittered camera and light positions for one sample (uniform +-0.5 and +-1.0 per axis)."""
    cameras = {
        k: [round(float(v + rng.uniform(-CAMERA_JITTER, CAMERA_JITTER)), 6) for v in base]
        for k, base in CAMERA_BASE.items()
    }
    lights = {
        k: [round(float(v + rng.uniform(-LIGHT_JITTER, LIGHT_JITTER)), 6) for v in base]
        for k, base in LIGHT_BASE.items()
    }
    return cameras, lights


@dataclass(frozen=True)
class Camera:
    """A pinhole camera at `location` looking at the origin, +z up."""

    location: tuple[float, float, float]
    width: int = IMAGE_WIDTH
    height: int = IMAGE_HEIGHT
    hfov: float = HFOV

    @cached_property
    def basis(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(right, up, forward) unit vectors of the camera frame."""
        c = np.asarray(self.location, dtype=np.float64)
        forward = -c / math.sqrt(float(c @ c))
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


# VIEWS and VIEW_NAMES moved to tvr.trance.world.vocab; they resolve here for one release
__getattr__ = forwarding_getattr(__name__, "tvr.trance.camera", "tvr.trance.world.vocab")
