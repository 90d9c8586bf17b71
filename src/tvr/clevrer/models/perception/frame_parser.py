"""The video frame parser: a detector and the attribute classifier, from 480x320 frames to named
object masks.

Frames are resized to the detector's input (bilinear with antialiasing, rounded back to uint8,
the same in training and at inference); its masks are resized back to 480x320 (bilinear on the
0/1 mask, kept above 0.5), and each is named from its crop of the full frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from tvr.clevrer.models.perception.attributes import AttributeNet, crop_objects, decode
from tvr.clevrer.models.perception.detectors import build_detector
from tvr.clevrer.vocab import FRAME_HEIGHT, FRAME_WIDTH


def resize_frames(frames: np.ndarray | torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
    """uint8 frames (B, H, W, 3) -> uint8 (B, 3, h, w) at `size` (h, w)."""
    x = torch.as_tensor(np.asarray(frames)).permute(0, 3, 1, 2).float()
    if tuple(x.shape[-2:]) != tuple(size):
        x = F.interpolate(x, size=size, mode="bilinear", align_corners=False, antialias=True)
    return x.round().clamp(0, 255).to(torch.uint8)


def downscale_masks(masks: np.ndarray | torch.Tensor, size: tuple[int, int]) -> torch.Tensor:
    """Binary masks (K, H, W) -> (K, h, w): the pixels more than half covered (disjoint masks stay
    disjoint)."""
    m = torch.as_tensor(np.asarray(masks)).float()
    if m.shape[0] == 0:
        return torch.zeros((0, *size), dtype=torch.bool)
    if tuple(m.shape[-2:]) == tuple(size):
        return m > 0.5
    return F.interpolate(m[:, None], size=size, mode="area")[:, 0] > 0.5


def upscale_masks(
    masks: torch.Tensor, size: tuple[int, int] = (FRAME_HEIGHT, FRAME_WIDTH)
) -> torch.Tensor:
    """Binary masks (K, h, w) -> (K, H, W) bool at the frame's size."""
    if masks.shape[0] == 0:
        return torch.zeros((0, *size), dtype=torch.bool)
    if tuple(masks.shape[-2:]) == tuple(size):
        return masks.bool()
    up = F.interpolate(masks.float()[:, None], size=size, mode="bilinear", align_corners=False)
    return up[:, 0] > 0.5


def id_map(masks: torch.Tensor) -> torch.Tensor:
    """(h, w) int64 map of disjoint masks (K, h, w): k where mask k is, -1 elsewhere."""
    k, h, w = masks.shape
    ids = torch.full((h, w), -1, dtype=torch.int64)
    for i in range(k):
        ids[masks[i]] = i
    return ids


@dataclass(frozen=True)
class FrameObjects:
    """The objects found in one frame: scores (K,), masks (K, 320, 480) bool, attributes
    (color, material, shape) and their probabilities (K, 3)."""

    scores: np.ndarray
    masks: np.ndarray
    attributes: tuple[tuple[str, str, str], ...]
    attribute_probs: np.ndarray


class FrameParser(nn.Module):
    """Detector + attribute classifier.

    Args:
        detector: a name of `detectors.DETECTORS`.
        input_size: (height, width) the detector sees.
        width: the U-Net's first-level channels.
        crop_size: the attribute classifier's crop side.
        score_threshold: detections scoring below are dropped by `parse`.
    """

    def __init__(
        self,
        detector: str,
        input_size: tuple[int, int],
        width: int = 32,
        crop_size: int = 32,
        score_threshold: float = 0.5,
    ) -> None:
        super().__init__()
        self.detector_name = detector
        self.input_size = (int(input_size[0]), int(input_size[1]))
        self.crop_size = crop_size
        self.score_threshold = score_threshold
        self.detector = build_detector(detector, self.input_size, width)
        self.attributes = AttributeNet()

    @torch.no_grad()
    def parse(self, frames: np.ndarray, score_threshold: float | None = None) -> list[FrameObjects]:
        """The objects of uint8 frames (B, 320, 480, 3); keeps scores >= the threshold (the
        parser's own when None). Runs in eval mode and restores the mode it found."""
        threshold = self.score_threshold if score_threshold is None else score_threshold
        was_training = self.training
        self.eval()
        try:
            device = next(self.parameters()).device
            small = resize_frames(frames, self.input_size).to(device).float() / 255.0
            found = self.detector.detect(small)
            out = []
            for frame, det in zip(frames, found, strict=True):
                keep = det.scores >= threshold
                masks = upscale_masks(det.masks[keep].cpu(), frame.shape[:2])
                scores = det.scores[keep].cpu()
                crops = crop_objects(frame, masks, self.crop_size).to(device)
                if len(crops):
                    names, probs = decode(self.attributes(crops))
                else:
                    names, probs = [], torch.zeros((0, 3))
                out.append(
                    FrameObjects(scores.numpy(), masks.numpy(), tuple(names), probs.cpu().numpy())
                )
            return out
        finally:
            self.train(was_training)
