"""The two frame renderers of CLEVRER videos: raster (fast, the default) and Cycles (CLEVR's look).

Both take a frame's `SceneDescription` and give (image (H, W, 3) uint8 or None, mask (H, W)
int16 with the object id at each pixel centre, -1 for the floor), with the same meshes and
camera, so masks agree between them. One renderer per process; reuse it across videos (making
the OpenGL context or importing bpy takes seconds).
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from tvr.clevrer.render.presets import get_preset
from tvr.clevrer.render.scene import unit_meshes
from tvr.render.presets import Preset
from tvr.render.scene import SceneDescription

BACKENDS = ("raster", "cycles")


class FrameRenderer(Protocol):
    """What a backend offers: one frame's scene in, (image or None, object-id mask) out."""

    backend: str
    preset: Preset

    def render(
        self, desc: SceneDescription, image: bool = True
    ) -> tuple[np.ndarray | None, np.ndarray]: ...

    def close(self) -> None: ...


class RasterFrames:
    """The fixed-view raster renderer (`tvr.render.frames`): the floor is shaded once per view."""

    backend = "raster"

    def __init__(self, preset: Preset, gl_backend: str | None = None):
        from tvr.render.frames import FrameRenderer as _Frames

        self.preset = preset
        self._r = _Frames(preset, gl_backend, shapes=unit_meshes())
        self.device = self._r.device

    def render(self, desc: SceneDescription, image: bool = True):
        return self._r.render_frame(desc, image)

    def close(self) -> None:
        self._r.close()


class CyclesFrames:
    """The shared Cycles engine (`tvr.render.cycles`); between frames the objects only move."""

    backend = "cycles"

    def __init__(self, preset: Preset, device: str = "auto", threads: int = 0):
        from tvr.render.cycles import CyclesRenderer

        self.preset = preset
        self._r = CyclesRenderer(preset, device, threads, shapes=unit_meshes(), reuse_objects=True)
        self.device = self._r.device

    def render(self, desc: SceneDescription, image: bool = True):
        return self._r.render(desc, image)

    def close(self) -> None:
        self._r.close()


def make_frame_renderer(
    backend: str = "raster", preset: str | Preset = "default", **options: Any
) -> FrameRenderer:
    """A frame renderer of `backend` ("raster" or "cycles") at a preset of `presets.PRESETS`."""
    p = get_preset(preset) if isinstance(preset, str) else preset
    if backend == "raster":
        return RasterFrames(p, **options)
    if backend == "cycles":
        return CyclesFrames(p, **options)
    raise ValueError(f"unknown backend {backend!r}: expected one of {', '.join(BACKENDS)}")
