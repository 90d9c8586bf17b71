"""The scene parser's network: a small encoder-decoder that finds each object's centre in a
160x120 image and names its size, colour, material and shape there.

CenterNet's idea on TRANCE's scenes: at a quarter of the input's size (30x40 cells for
160x120) it predicts a heatmap of object centres (the projection of each object's 3-D centre,
with a Gaussian around it), the sub-cell offset of the centre, and logits of the four attributes.
A detection is a local maximum of the heatmap; its attributes are read at its cell; the ground
position follows from the centre's pixel, the camera and the centre's height, which the size
and shape fix (`tvr.trance.perception.geometry`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from tvr.training.keypoints import conv_block, local_peaks
from tvr.trance.world import vocab

#: output channels: heat, offset (dy, dx), then each attribute's logits in this order
HEADS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("size", vocab.SIZES),
    ("color", vocab.COLORS),
    ("material", vocab.MATERIALS),
    ("shape", vocab.SHAPES),
)
STRIDE = 4
NUM_OUT = 3 + sum(len(values) for _, values in HEADS)


def _up(x: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """`x` resized (bilinear) to the spatial size of `like`."""
    return F.interpolate(x, size=like.shape[-2:], mode="bilinear", align_corners=False)


@dataclass(frozen=True)
class Detection:
    """One object found in an image: its centre in input pixels (u right, v down), heatmap
    score, attribute names, the probability of each and each attribute's whole distribution."""

    u: float
    v: float
    score: float
    attributes: dict[str, str]
    probabilities: dict[str, float]
    distributions: dict[str, tuple[float, ...]] | None = None

    @property
    def confidence(self) -> float:
        """The heatmap score times each attribute's probability."""
        p = self.score
        for q in self.probabilities.values():
            p *= q
        return p


class SceneParserNet(nn.Module):
    """Images (B, 3, H, W) in [0, 1] (any size; 160x120 by default) -> maps (B, NUM_OUT, H/4, W/4).

    Args:
        width: channels after the stem; doubled at each of the three levels down.
        peak_threshold: least heatmap score of a detection.
        max_objects: most detections per image.
    """

    def __init__(self, width: int = 24, peak_threshold: float = 0.3, max_objects: int = 12):
        super().__init__()
        w = width
        self.stem = nn.Sequential(
            nn.Conv2d(3, w, 3, stride=2, padding=1, bias=False),
            nn.BatchNorm2d(w),
            nn.ReLU(inplace=True),
        )
        self.level1 = conv_block(w, w)  # 1/2
        self.level2 = conv_block(w, 2 * w)  # 1/4
        self.level3 = conv_block(2 * w, 4 * w)  # 1/8
        self.level4 = conv_block(4 * w, 8 * w)  # 1/16
        self.up4 = nn.Conv2d(8 * w, 4 * w, 1)
        self.merge3 = conv_block(8 * w, 4 * w)
        self.up3 = nn.Conv2d(4 * w, 2 * w, 1)
        self.merge2 = conv_block(4 * w, 2 * w)
        self.head = nn.Sequential(
            nn.Conv2d(2 * w, 2 * w, 3, padding=1),
            nn.ReLU(inplace=True),
            nn.Conv2d(2 * w, NUM_OUT, 1),
        )
        with torch.no_grad():
            self.head[-1].bias.zero_()
            self.head[-1].bias[0] = -4.0  # the heatmap starts near 0 (CenterNet's prior)
        self.peak_threshold = peak_threshold
        self.max_objects = max_objects

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x = (images - 0.5) * 4.0
        x1 = self.level1(self.stem(x))
        x2 = self.level2(F.max_pool2d(x1, 2))
        x3 = self.level3(F.max_pool2d(x2, 2))
        x4 = self.level4(F.max_pool2d(x3, 2))
        y3 = self.merge3(torch.cat([_up(self.up4(x4), x3), x3], dim=1))
        y2 = self.merge2(torch.cat([_up(self.up3(y3), x2), x2], dim=1))
        return self.head(y2)

    @torch.no_grad()
    def detect(self, images: torch.Tensor, threshold: float | None = None) -> list[list[Detection]]:
        """The detections of each image, centres in input pixels (`threshold`: least heatmap
        score, default `peak_threshold`)."""
        return [self.decode(m, threshold) for m in self(images)]

    def decode(self, maps: torch.Tensor, threshold: float | None = None) -> list[Detection]:
        """Detections from one image's maps (NUM_OUT, h, w)."""
        heat = maps[0].sigmoid()
        limit = self.peak_threshold if threshold is None else threshold
        scores, where = local_peaks(heat, limit, self.max_objects)
        out = []
        for score, (r, c) in zip(scores.tolist(), where.tolist(), strict=True):
            dy, dx = maps[1, r, c].item(), maps[2, r, c].item()
            attrs, probs, dists = {}, {}, {}
            k = 3
            for name, values in HEADS:
                p = maps[k : k + len(values), r, c].softmax(0)
                j = int(p.argmax())
                attrs[name], probs[name] = values[j], float(p[j])
                dists[name] = tuple(p.tolist())
                k += len(values)
            out.append(
                Detection(
                    u=(c + 0.5 + dx) * STRIDE,
                    v=(r + 0.5 + dy) * STRIDE,
                    score=float(score),
                    attributes=attrs,
                    probabilities=probs,
                    distributions=dists,
                )
            )
        return out
