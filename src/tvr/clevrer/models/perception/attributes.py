"""The attribute classifier: colour (8), material (2) and shape (3) of an object from its masked crop.

Every detector proposes masks without naming them; this small CNN names each one. Its input is a
square crop around the mask, taken from the full 480x320 frame (so a light detector working at
half size still gives the classifier every pixel): the crop's side is 1.25 times the mask's
larger box side (at least 8 pixels), resampled to `crop_size` squared with RoIAlign, as four
channels: the RGB pixels with the floor and other objects zeroed, and the mask. The paper's Mask
R-CNN names the 48 attribute combinations as its classes; three heads on one crop say the same
with fewer, better-fed outputs, and are the same for every detector.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn
from torchvision.ops import roi_align

from tvr.clevrer.models.perception.unet import conv_block
from tvr.clevrer.vocab import COLORS, MATERIALS, SHAPES

#: the three heads, in order: (name, values)
HEADS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("color", COLORS),
    ("material", MATERIALS),
    ("shape", SHAPES),
)
CROP_MARGIN = 1.25
MIN_CROP_SIDE = 8.0


def crop_boxes(masks: torch.Tensor) -> torch.Tensor:
    """Square crop boxes (K, 4) x0, y0, x1, y1 around (K, H, W) masks (empty masks: the frame's
    centre, 8 pixels)."""
    k, h, w = masks.shape
    if k == 0:
        return torch.zeros((0, 4))
    rows = masks.any(dim=2)
    cols = masks.any(dim=1)
    ar_h = torch.arange(h, dtype=torch.float32)
    ar_w = torch.arange(w, dtype=torch.float32)
    big = float(max(h, w))
    y0 = torch.where(rows, ar_h, big).amin(dim=1)
    y1 = torch.where(rows, ar_h, -1.0).amax(dim=1) + 1
    x0 = torch.where(cols, ar_w, big).amin(dim=1)
    x1 = torch.where(cols, ar_w, -1.0).amax(dim=1) + 1
    empty = y1 <= y0
    cy = torch.where(empty, torch.tensor(h / 2), (y0 + y1) / 2)
    cx = torch.where(empty, torch.tensor(w / 2), (x0 + x1) / 2)
    side = torch.clamp(torch.maximum(y1 - y0, x1 - x0) * CROP_MARGIN, min=MIN_CROP_SIDE)
    side = torch.where(empty, torch.tensor(MIN_CROP_SIDE), side)
    return torch.stack([cx - side / 2, cy - side / 2, cx + side / 2, cy + side / 2], dim=1)


def crop_objects(
    image: np.ndarray | torch.Tensor, masks: np.ndarray | torch.Tensor, size: int
) -> torch.Tensor:
    """Crops (K, 4, size, size) in [0, 1] of the objects `masks` (K, H, W) mark in `image`
    (H, W, 3) uint8: masked RGB and the mask."""
    img = torch.as_tensor(np.asarray(image)).permute(2, 0, 1).float() / 255.0
    m = torch.as_tensor(np.asarray(masks)).bool()
    if m.shape[0] == 0:
        return torch.zeros((0, 4, size, size))
    boxes = crop_boxes(m)
    # each object's own pixels only: mask the frame per object, then resample its box
    masked = torch.cat([img[None] * m[:, None].float(), m[:, None].float()], dim=1)  # (K, 4, H, W)
    return roi_align(
        masked,
        list(boxes[:, None]),
        output_size=size,
        spatial_scale=1.0,
        sampling_ratio=2,
        aligned=True,
    )


class AttributeNet(nn.Module):
    """Crops (K, 4, s, s) -> logits of each head: {"color": (K, 8), "material": (K, 2), "shape":
    (K, 3)}.

    Args:
        width: channels of the first block (doubled twice).
    """

    def __init__(self, width: int = 32) -> None:
        super().__init__()
        self.features = nn.Sequential(
            conv_block(4, width),
            nn.MaxPool2d(2),
            conv_block(width, 2 * width),
            nn.MaxPool2d(2),
            conv_block(2 * width, 4 * width),
            nn.AdaptiveAvgPool2d(1),
            nn.Flatten(),
        )
        self.heads = nn.ModuleDict(
            {name: nn.Linear(4 * width, len(values)) for name, values in HEADS}
        )

    def forward(self, crops: torch.Tensor) -> dict[str, torch.Tensor]:
        z = self.features(crops)
        return {name: head(z) for name, head in self.heads.items()}


def attribute_loss(logits: dict[str, torch.Tensor], labels: torch.Tensor) -> torch.Tensor:
    """Summed cross-entropy of the heads; `labels` (K, 3) indices in HEADS order."""
    if labels.shape[0] == 0:
        return sum(v.sum() * 0.0 for v in logits.values())  # type: ignore[return-value]
    return sum(
        nn.functional.cross_entropy(logits[name], labels[:, k]) for k, (name, _) in enumerate(HEADS)
    )  # type: ignore[return-value]


def label_indices(color: str, material: str, shape: str) -> tuple[int, int, int]:
    """The heads' class indices of an object's attributes."""
    return COLORS.index(color), MATERIALS.index(material), SHAPES.index(shape)


def decode(logits: dict[str, torch.Tensor]) -> tuple[list[tuple[str, str, str]], torch.Tensor]:
    """The most likely attributes of each crop, and their probabilities (K, 3) (one per head)."""
    names, probs = [], []
    for name, values in HEADS:
        p = logits[name].softmax(dim=1)
        best = p.argmax(dim=1)
        names.append([values[i] for i in best.tolist()])
        probs.append(p.gather(1, best[:, None])[:, 0])
    k = len(names[0])
    return [(names[0][i], names[1][i], names[2][i]) for i in range(k)], torch.stack(probs, dim=1)
