"""The frame parser's data: frames drawn from a set's videos with their objects' masks and
attributes (the mask files of `tvr clevrer generate`, or the release's).

Frames are decoded from the mp4 (what the parser sees at test time, H.264 and all) and drawn per
video with `numpy.random.default_rng([seed, scene_index])`. A `FrameSample` keeps the frame at
the detector's size with an id map of its objects (masks shrunk by area; an object that keeps no
pixel at that size is left out of the map), the attribute crops of every object from the full
frame, and (for validation) the full frame and its masks as COCO RLE, which mAP is scored on.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch.nn import functional as F
from torch.utils.data import Dataset

from tvr.clevrer.data.layout import find_video
from tvr.clevrer.data.masks import MaskFrame, decode_mask, read_masks
from tvr.clevrer.models.perception.attributes import crop_objects, label_indices
from tvr.clevrer.models.perception.frame_parser import (
    downscale_masks,
    id_map,
    resize_frames,
    upscale_masks,
)
from tvr.clevrer.models.sets import split_files, take
from tvr.clevrer.report.frames import read_frames
from tvr.core.errors import UserError

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class FrameSample:
    """One frame with its objects.

    Args:
        scene_index, frame_index: where it comes from.
        image: (3, h, w) uint8 at the detector's size.
        ids: (h, w) int64: k on object k's pixels, -1 on the floor.
        labels: (K, 3) int64 colour, material, shape indices of the objects.
        crops: (V * K, 4, c, c) float16 attribute crops from the full frame, V variants of the
            masks (see `frame_sample`).
        crop_labels: (V * K, 3) their labels.
        full: (320, 480, 3) uint8, validation frames only.
        rles: the objects' full-size masks as COCO RLE, validation frames only.
    """

    scene_index: int
    frame_index: int
    image: torch.Tensor
    ids: torch.Tensor
    labels: torch.Tensor
    crops: torch.Tensor
    crop_labels: torch.Tensor
    full: np.ndarray | None = None
    rles: tuple[dict, ...] = ()


def mask_variants(full_masks: np.ndarray, small: torch.Tensor) -> list[np.ndarray]:
    """The masks the attribute classifier trains on: the true ones, and as a detector working at
    the smaller size gives them back (shrunk and grown again), and that eroded by one pixel of
    the smaller size (a detector's masks are often thin), so that it names detected masks as
    well as true ones."""
    out = [full_masks]
    if tuple(small.shape[-2:]) != tuple(full_masks.shape[-2:]):
        size = tuple(full_masks.shape[-2:])
        out.append(upscale_masks(small, size).numpy())
        if len(small):
            eroded = ~(F.max_pool2d((~small).float()[:, None], 3, stride=1, padding=1)[:, 0] > 0)
            keep = eroded.flatten(1).any(1)
            eroded[~keep] = small[~keep]
            out.append(upscale_masks(eroded, size).numpy())
        else:
            out.append(full_masks)
    return out


def frame_sample(
    scene_index: int,
    frame: np.ndarray,
    masks: MaskFrame,
    size: tuple[int, int],
    crop_size: int,
    keep_full: bool,
    variants: bool = False,
) -> FrameSample:
    """A `FrameSample` of a decoded (320, 480, 3) frame and its mask-file entry; its crops are
    of the true masks, or (`variants`) of every mask of `mask_variants`."""
    full_masks = (
        np.stack([decode_mask(o.mask) for o in masks.objects])
        if masks.objects
        else np.zeros((0, *frame.shape[:2]), dtype=np.uint8)
    )
    labels = torch.tensor(
        [label_indices(o.color, o.material, o.shape) for o in masks.objects], dtype=torch.int64
    ).reshape(-1, 3)
    small = downscale_masks(full_masks, size)
    shapes = mask_variants(full_masks, small) if variants else [full_masks]
    crops = torch.cat([crop_objects(frame, m, crop_size) for m in shapes])
    return FrameSample(
        scene_index=scene_index,
        frame_index=masks.frame_index,
        image=resize_frames(frame[None], size)[0],
        ids=id_map(small),
        labels=labels,
        crops=crops.half(),
        crop_labels=labels.repeat(len(shapes), 1),
        full=frame if keep_full else None,
        rles=tuple(dict(o.mask) for o in masks.objects) if keep_full else (),
    )


def load_frames(
    root: str | Path,
    split: str,
    videos: int | None,
    frames_per_video: int,
    size: tuple[int, int],
    crop_size: int,
    seed: int,
    keep_full: bool = False,
) -> list[FrameSample]:
    """`frames_per_video` frames of each of the first `videos` videos of `split` with a mask file."""
    files = take(split_files(root, split, "masks"), videos)
    if not files:
        raise UserError(f"{root}: no mask files of the {split} split under masks/")
    samples: list[FrameSample] = []
    for index, path in files.items():
        proposals = read_masks(path)
        rng = np.random.default_rng([seed, index])
        n = len(proposals.frames)
        chosen = sorted(rng.choice(n, size=min(frames_per_video, n), replace=False).tolist())
        entries = [proposals.frames[k] for k in chosen]
        decoded = read_frames(find_video(root, index), [e.frame_index for e in entries])
        for entry in entries:
            if entry.frame_index not in decoded:
                raise UserError(f"{path}: frame {entry.frame_index} is not in the video")
            samples.append(
                frame_sample(
                    index,
                    decoded[entry.frame_index],
                    entry,
                    size,
                    crop_size,
                    keep_full,
                    variants=not keep_full,
                )
            )
    log.info("%s: %d frames of %d %s videos", root, len(samples), len(files), split)
    return samples


class FrameDataset(Dataset):
    """Training samples, flipped left-right at random when `flip` (attributes do not change)."""

    def __init__(self, samples: Sequence[FrameSample], flip: bool = False) -> None:
        self.samples = list(samples)
        self.flip = flip

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, i: int) -> FrameSample:
        s = self.samples[i]
        if self.flip and torch.rand(()) < 0.5:
            s = dataclasses.replace(
                s, image=s.image.flip(-1), ids=s.ids.flip(-1), crops=s.crops.flip(-1)
            )
        return s


@dataclass(frozen=True)
class FrameBatch:
    """A training batch: images (B, 3, h, w) float in [0, 1], id maps (B, h, w), the attribute
    crops (sum V*K, 4, c, c) and their labels (sum V*K, 3), and the samples."""

    images: torch.Tensor
    ids: torch.Tensor
    crops: torch.Tensor
    labels: torch.Tensor
    samples: tuple[FrameSample, ...]


def collate(samples: Sequence[FrameSample]) -> FrameBatch:
    return FrameBatch(
        images=torch.stack([s.image for s in samples]).float() / 255.0,
        ids=torch.stack([s.ids for s in samples]),
        crops=torch.cat([s.crops for s in samples]).float(),
        labels=torch.cat([s.crop_labels for s in samples]),
        samples=tuple(samples),
    )
