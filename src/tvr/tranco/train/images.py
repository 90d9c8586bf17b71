"""Images as a CLIP encoder takes them: open_clip's eval transform (resize, centre crop or squash,
CLIP's pixel statistics), loaded from JPEG files with one-line errors."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import torch

from tvr.core.images import open_rgb
from tvr.tranco.models.encoders import CLIP_MEAN, CLIP_STD

#: how an image is brought to the encoder's square input: open_clip's resize modes
RESIZE_MODES = {
    "crop": "shortest",  # shortest side to the size, then the centre square (CLIP's own)
    "squash": "squash",  # the whole image stretched to the square
}

ImageTransform = Callable[[object], torch.Tensor]


def image_transform(size: int, resize: str = "crop") -> ImageTransform:
    """PIL image -> (3, size, size) float tensor normalised with CLIP's mean and std."""
    from open_clip.transform import image_transform as open_clip_transform

    if resize not in RESIZE_MODES:
        raise ValueError(f"unknown resize {resize!r}: one of {', '.join(RESIZE_MODES)}")
    return open_clip_transform(
        size, is_train=False, mean=CLIP_MEAN, std=CLIP_STD, resize_mode=RESIZE_MODES[resize]
    )


def load_image(path: str | Path, transform: ImageTransform) -> torch.Tensor:
    """One image file through `transform`; UserError naming the file if it cannot be read."""
    return transform(open_rgb(path))


def load_images(paths: Sequence[str | Path], transform: ImageTransform) -> torch.Tensor:
    """(N, 3, S, S) of `paths`, in order."""
    return torch.stack([load_image(p, transform) for p in paths])
