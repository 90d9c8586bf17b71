"""Rendering TRANCE samples: one scene description, a Cycles (bpy) backend and a fast raster one.

`scene` builds the renderer-neutral description, `cycles` and `raster` draw it, `presets` holds
the quality levels, `images` renders a sample's four views with object-index masks. The backends
import their heavy packages (bpy, moderngl) only when made.
"""

from tvr.trance.render.images import (
    BACKENDS,
    RenderedImage,
    Renderer,
    make_renderer,
    render_sample,
    write_images,
)
from tvr.trance.render.presets import PRESETS, Preset, get_preset

__all__ = [
    "BACKENDS",
    "PRESETS",
    "Preset",
    "RenderedImage",
    "Renderer",
    "get_preset",
    "make_renderer",
    "render_sample",
    "write_images",
]
