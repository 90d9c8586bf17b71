"""A hand-made CLEVRER run for the render tests, and one raster renderer per test session."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from tvr.clevrer.render.scene import OBJECT_RADIUS

#: three objects: (color, material, shape, start (x, y), velocity per frame (x, y), yaw per frame)
OBJECTS = [
    ("red", "rubber", "cube", (0.0, 0.0), (0.04, 0.0), 0.05),
    ("blue", "metal", "sphere", (1.5, 1.0), (0.0, -0.03), 0.0),
    ("green", "rubber", "cylinder", (-1.5, -0.5), (0.02, 0.02), 0.1),
]


def hand_run(n_frames: int = 6) -> tuple[list[dict], SimpleNamespace]:
    """Object dicts and a run-like object (location, orientation, present, collisions)."""
    objects = [{"color": c, "material": m, "shape": s} for c, m, s, *_ in OBJECTS]
    loc = np.zeros((n_frames, len(OBJECTS), 3))
    quat = np.zeros((n_frames, len(OBJECTS), 4))
    for i, (_, _, shape, start, vel, spin) in enumerate(OBJECTS):
        z = OBJECT_RADIUS / math.sqrt(2.0) if shape == "cube" else OBJECT_RADIUS
        for t in range(n_frames):
            loc[t, i] = (start[0] + vel[0] * t, start[1] + vel[1] * t, z)
            yaw = spin * t
            quat[t, i] = (0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0))
    collision = SimpleNamespace(frame=3, objects=(0, 1), location=(0.5, 0.5, 0.35))
    trace = SimpleNamespace(
        location=loc,
        orientation=quat,
        present=np.ones(len(OBJECTS), bool),
        collisions=(collision,),
    )
    return objects, trace


@pytest.fixture(scope="session")
def run():
    return hand_run()


@pytest.fixture(scope="session")
def raster():
    pytest.importorskip("moderngl")
    from tvr.clevrer.render import make_frame_renderer

    try:
        renderer = make_frame_renderer("raster", "default")
    except RuntimeError as err:  # no EGL / OpenGL driver on this machine
        pytest.skip(str(err))
    yield renderer
    renderer.close()
