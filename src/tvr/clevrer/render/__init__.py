"""Rendering CLEVRER videos: raster (default) or Cycles frames, H.264 mp4, COCO RLE mask files.

`scene` places a run's objects in CLEVR's look, `backends` draws frames (the shared engines of
`tvr.render`), `mp4` encodes, `masks` builds the official mask-proposals layout, `video` ties them
together in `render_video`. Heavy packages (moderngl, bpy, av) load only when used.
"""

from tvr.clevrer.render.backends import BACKENDS, make_frame_renderer
from tvr.clevrer.render.presets import PRESETS, get_preset
from tvr.clevrer.render.video import RenderedVideo, render_video, video_name

__all__ = [
    "BACKENDS",
    "PRESETS",
    "RenderedVideo",
    "get_preset",
    "make_frame_renderer",
    "render_video",
    "video_name",
]
