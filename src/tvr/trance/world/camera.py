"""Cameras and lights of the TRANCE scenes: base positions, per-sample jitter, pinhole projection.

All coordinates are in scene units (one grid unit = 0.15). Cameras aim at the origin with +z up,
a 35 mm lens on a 32 mm sensor (horizontal field of view about 49.1 degrees), images 320x240.
The renderers and the occlusion check both project with `Camera.project`, so they agree on where
every object lands.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvr.render.camera import PinholeCamera

IMAGE_WIDTH = 320
IMAGE_HEIGHT = 240


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
class Camera(PinholeCamera):
    """TRANCE's camera: a pinhole at `location` looking at the origin, images 320x240 by default."""

    width: int = IMAGE_WIDTH
    height: int = IMAGE_HEIGHT
