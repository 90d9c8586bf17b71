"""Fast rasterized TRANCE images: the shared raster engine (`tvr.render.raster`) at TRANCE's presets.

The engine (moderngl on a headless EGL context, Mesa llvmpipe or a GPU) draws the same
`SceneDescription` as the Cycles backend with the same meshes and camera; see its docstring for
the shading. Here: the renderer made from TRANCE's preset names, and the object-pixel counts the
sampler's occlusion check can use.
"""

from __future__ import annotations

import numpy as np

from tvr.render import raster as _engine
from tvr.render.presets import Preset
from tvr.render.raster import (
    create_context,
    linear_to_srgb,
    projection_matrix,
    set_threads,
    view_matrix,
)
from tvr.trance.render.presets import get_preset

__all__ = [
    "RasterRenderer",
    "create_context",
    "linear_to_srgb",
    "projection_matrix",
    "set_threads",
    "view_matrix",
    "visible_pixel_counts",
]


class RasterRenderer(_engine.RasterRenderer):
    """Renders TRANCE's `SceneDescription`s with OpenGL 3.3 through moderngl. One per process."""

    def __init__(self, preset: Preset | str = "default", gl_backend: str | None = None):
        super().__init__(get_preset(preset) if isinstance(preset, str) else preset, gl_backend)


_COUNTER: RasterRenderer | None = None


def visible_pixel_counts(objects: list[dict], camera_location, lights=None) -> np.ndarray:
    """Pixels (10,) that each object shows in a 320x240 segmentation render from a camera: the
    raster backend's object-index mask, counted. Objects under 150 pixels count as occluded."""
    global _COUNTER
    if _COUNTER is None:
        _COUNTER = RasterRenderer("preview")
    from tvr.trance.render.scene import build_scene

    mask = _COUNTER.render_mask(build_scene(objects, camera_location, lights))
    return np.bincount(mask[mask >= 0].ravel(), minlength=len(objects))[: len(objects)]
