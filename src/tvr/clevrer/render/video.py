"""Render one CLEVRER video: the shown frames of one run to video_XXXXX.mp4, masks and PNG frames.

Files (under `out_dir`, each written atomically):
- `video_XXXXX.mp4`: H.264, 480x320, 25 fps, the first `n_frames` (128) frames of the run;
- `sim_XXXXX.json` (if `masks`): the mask proposals of every frame in the official layout
  (`tvr.clevrer.data.masks`), with a `ground_truth` block (object ids, and the collisions of the
  rendered frames) when the run carries its collisions;
- `video_XXXXX/NNNNN.png` (if `frames`): the frames as PNG, frame numbers from 0 (the mask
  file's `frame_filename` names these paths).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tvr.clevrer.data.masks import MaskProposals, write_masks
from tvr.clevrer.render import masks as _masks
from tvr.clevrer.render.backends import FrameRenderer, make_frame_renderer
from tvr.clevrer.render.mp4 import Mp4Writer
from tvr.clevrer.render.scene import FrameScenes
from tvr.clevrer.vocab import FPS, SHOWN_FRAMES
from tvr.core.jsonl import write_file_bytes
from tvr.core.png import encode_png


@dataclass(frozen=True)
class RenderedVideo:
    """What `render_video` wrote, and the masks it made (None if not asked)."""

    video: Path
    masks: Path | None
    frames: tuple[Path, ...]
    proposals: MaskProposals | None
    n_frames: int


def video_name(index: int) -> str:
    """The release's name stem of video `index`: video_XXXXX."""
    return f"video_{index:05d}"


def frame_scenes(objects: Sequence[Any], trace: Any) -> FrameScenes:
    """The per-frame scenes of a run: `trace` has location (T, N, 3), orientation (T, N, 4)
    (x, y, z, w) and optionally present (N,) (a RunTrace, or anything with those arrays)."""
    return FrameScenes(objects, trace.location, trace.orientation, getattr(trace, "present", None))


def iter_frames(
    scenes: FrameScenes, renderer: FrameRenderer, n_frames: int = SHOWN_FRAMES
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """(image, id mask) of frames 0 .. n_frames - 1."""
    if not 0 < n_frames <= scenes.n_frames:
        raise ValueError(f"n_frames: expected 1..{scenes.n_frames}, got {n_frames}")
    for t in range(n_frames):
        img, ids = renderer.render(scenes.frame(t))
        if img is None:
            raise RuntimeError(f"{renderer.backend} renderer gave no image for frame {t}")
        yield img, ids


def render_video(
    objects: Sequence[Any],
    trace: Any,
    out_dir: str | Path,
    backend: str = "raster",
    preset: str = "default",
    *,
    index: int = 0,
    n_frames: int = SHOWN_FRAMES,
    masks: bool = True,
    frames: bool = False,
    renderer: FrameRenderer | None = None,
) -> RenderedVideo:
    """Render the first `n_frames` frames of one run and write the video (and masks, frames).

    Args:
        objects: per object id, its color/material/shape (ObjectProps, ObjectSpec or dicts).
        trace: the run (`tvr.clevrer.world.physics.RunTrace` or anything with `location`,
            `orientation`, optional `present` and `collisions`).
        out_dir: the folder the files go to.
        backend, preset: "raster" (default) or "cycles", and a preset of `presets.PRESETS`;
            ignored when `renderer` is given.
        index: the video's number (file names video_XXXXX.mp4, sim_XXXXX.json).
        n_frames: frames to render (the shown 128 by default).
        masks: write the mask proposals file.
        frames: also write every frame as PNG.
        renderer: a renderer to reuse (one per process); made and closed here if None.
    """
    out = Path(out_dir)
    name = video_name(index)
    scenes = frame_scenes(objects, trace)
    own = renderer is None
    r = make_frame_renderer(backend, preset) if renderer is None else renderer
    mask_frames = []
    pngs = []
    try:
        with Mp4Writer(out / f"{name}.mp4", scenes.camera.width, scenes.camera.height, FPS) as w:
            for t, (img, ids) in enumerate(iter_frames(scenes, r, n_frames)):
                w.write(img)
                if masks:
                    mask_frames.append(_masks.encode_frame(ids, scenes.props, name, t))
                if frames:
                    path = out / _masks.frame_filename(name, t)
                    write_file_bytes(path, encode_png(img))
                    pngs.append(path)
    finally:
        if own:
            r.close()
    props_path = None
    props = None
    if masks:
        collisions = getattr(trace, "collisions", None)
        pairs = None
        if collisions is not None:
            pairs = [(c.frame, tuple(c.objects)) for c in collisions if c.frame < n_frames]
        props = _masks.proposals(name, mask_frames, scenes.props, pairs)
        props_path = out / f"sim_{index:05d}.json"
        write_masks(props_path, props)
    return RenderedVideo(out / f"{name}.mp4", props_path, tuple(pngs), props, n_frames)
