"""Centre-heatmap building blocks shared by the image parsers (CLEVRER's frames, TRANCE's scenes).

CenterNet's recipe, as both parsers use it: a convolution block, the penalty-reduced focal loss
on a Gaussian heatmap of object centres, Gaussian splats for its targets, and the heatmap's
local maxima as detections. The soft Dice loss serves the foreground maps.
"""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F


def conv_block(c_in: int, c_out: int) -> nn.Sequential:
    """Two 3x3 convolutions (c_in -> c_out -> c_out), each with batch norm and ReLU."""
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, 3, padding=1, bias=False),
        nn.BatchNorm2d(c_out),
        nn.ReLU(inplace=True),
        nn.Conv2d(c_out, c_out, 3, padding=1, bias=False),
        nn.BatchNorm2d(c_out),
        nn.ReLU(inplace=True),
    )


def soft_dice_loss(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """1 - the soft Dice overlap of object pixels, per image, averaged (objects cover a few
    percent of a frame: cross-entropy alone learns the floor first)."""
    p = logits.sigmoid().flatten(1)
    t = target.flatten(1)
    inter = (p * t).sum(1)
    return (1 - (2 * inter + 1) / (p.sum(1) + t.sum(1) + 1)).mean()


def centre_focal_loss(
    logits: torch.Tensor,
    heat: torch.Tensor,
    alpha: float = 2.0,
    beta: float = 4.0,
    weight: torch.Tensor | None = None,
) -> torch.Tensor:
    """CenterNet's penalty-reduced focal loss over heatmaps, per centre (cells where the target
    is 1). `weight` (same shape, 0 or 1) leaves cells out, e.g. around barely visible objects."""
    p = logits.sigmoid().clamp(1e-4, 1 - 1e-4)
    pos = heat >= 1.0
    pos_term = -(torch.log(p) * (1 - p) ** alpha)
    neg_term = -(torch.log(1 - p) * p**alpha * (1 - heat) ** beta)
    if weight is not None:
        pos_term, neg_term = pos_term * weight, neg_term * weight
    return (pos_term[pos].sum() + neg_term[~pos].sum()) / pos.sum().clamp(min=1)


def splat_gaussian(
    heat: torch.Tensor, cy: float, cx: float, sigma: float, peak: bool = True
) -> None:
    """Raise `heat` (H, W) in place to a Gaussian of `sigma` cells centred at (cy, cx); with
    `peak`, the cell holding the centre is set to 1 (the focal loss's positive)."""
    h, w = heat.shape
    yy = torch.arange(h, dtype=heat.dtype)[:, None]
    xx = torch.arange(w, dtype=heat.dtype)[None, :]
    g = torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * sigma**2))
    if peak:
        py = int(min(max(round(cy), 0), h - 1))
        px = int(min(max(round(cx), 0), w - 1))
        g[py, px] = 1.0
    torch.maximum(heat, g, out=heat)


def local_peaks(
    heat: torch.Tensor, threshold: float, max_peaks: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The local maxima (3x3) of one heatmap (H, W) of probabilities above `threshold`, best
    first, at most `max_peaks`: (scores (K,), positions (K, 2) as row, column)."""
    pooled = F.max_pool2d(heat[None, None], 3, stride=1, padding=1)[0, 0]
    peaks = (heat == pooled) & (heat > threshold)
    values = heat[peaks]
    where = peaks.nonzero()
    order = values.argsort(descending=True)[:max_peaks]
    return values[order], where[order]
