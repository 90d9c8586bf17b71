"""Sample frames of a video: a contact sheet at its event frames and an animated GIF (PyAV, Pillow)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw

from tvr.core.errors import UserError


def read_frames(video: Path, wanted: Sequence[int] | None = None) -> dict[int, np.ndarray]:
    """Frames of an mp4 as RGB arrays by index (all of them if `wanted` is None)."""
    import av

    keep = None if wanted is None else set(wanted)
    out: dict[int, np.ndarray] = {}
    try:
        with av.open(str(video)) as container:
            for i, frame in enumerate(container.decode(video=0)):
                if keep is None or i in keep:
                    out[i] = frame.to_ndarray(format="rgb24")
                if keep is not None and i >= max(keep, default=-1):
                    break
    except (OSError, av.error.FFmpegError) as err:
        raise UserError(f"{video}: cannot read the video ({err})") from None
    return out


def contact_sheet(video: Path, frames: Sequence[tuple[int, str]], path: Path, columns: int = 4) -> Path:
    """A grid of the video's frames `frames` ((index, caption) pairs), captions drawn on top."""
    images = read_frames(video, [i for i, _ in frames])
    shown = [(images[i], caption) for i, caption in frames if i in images]
    if not shown:
        raise UserError(f"{video}: none of frames {[i for i, _ in frames]} exist")
    h, w = shown[0][0].shape[:2]
    rows = -(-len(shown) // columns)
    sheet = Image.new("RGB", (w * min(columns, len(shown)), h * rows), "white")
    for k, (array, caption) in enumerate(shown):
        tile = Image.fromarray(array)
        ImageDraw.Draw(tile).text((6, 4), caption, fill=(255, 255, 255))
        sheet.paste(tile, ((k % columns) * w, (k // columns) * h))
    path.parent.mkdir(parents=True, exist_ok=True)
    sheet.save(path)
    return path


def animated_gif(video: Path, path: Path, step: int = 2, scale: float = 0.5) -> Path:
    """The video as a GIF (every `step`-th frame, scaled), for a page or a README."""
    images = read_frames(video)
    if not images:
        raise UserError(f"{video}: no frames")
    frames = []
    for i in sorted(images)[::step]:
        im = Image.fromarray(images[i])
        frames.append(im.resize((int(im.width * scale), int(im.height * scale))))
    path.parent.mkdir(parents=True, exist_ok=True)
    frames[0].save(path, save_all=True, append_images=frames[1:], duration=40 * step, loop=0)
    return path
