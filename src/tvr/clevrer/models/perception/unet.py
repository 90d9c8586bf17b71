"""The light detector: a small U-Net that finds object pixels, object centres and each pixel's
offset to its centre, and groups the pixels into instance masks (Panoptic-DeepLab's idea).

Per pixel it predicts four maps at the input's size: object-vs-floor (a logit; cross-entropy
plus soft Dice, as objects cover a few percent of a frame), the centre
heatmap (a logit; the target is 1 at the pixel holding the mask's centroid, with a Gaussian of
`sigma` pixels around it, trained with CenterNet's penalty-reduced focal loss) and the offset
(dy, dx) from the pixel to its object's centroid (L1 on object pixels, in units of
OFFSET_SCALE pixels). Instances: the heatmap's local maxima (3x3) above `peak_threshold`, at most
`max_objects` of them, are the centres; every object pixel joins the centre nearest to where
its offset points (within `max_assign_distance` pixels); a centre with fewer than `min_pixels`
pixels is dropped. A detection's score is its heatmap peak. CLEVRER's objects never overlap
much, so one label per pixel loses little.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

from tvr.training.keypoints import centre_focal_loss, conv_block, local_peaks, soft_dice_loss

__all__ = ["CentreUNet", "Detections", "centre_focal_loss", "conv_block", "soft_dice_loss"]

OFFSET_SCALE = 10.0


@dataclass(frozen=True)
class Detections:
    """One image's detections at the detector's input size: scores (K,), masks (K, H, W) bool."""

    scores: torch.Tensor
    masks: torch.Tensor


class CentreUNet(nn.Module):
    """Images (B, 3, H, W) in [0, 1] -> maps (B, 4, H, W): object logit, centre logit, offset
    dy, dx (H and W multiples of 2**(depth - 1)).

    Args:
        width: channels of the first level, doubled at each level down.
        depth: levels (3 poolings for 4).
        sigma: the centre Gaussian's width, pixels.
        peak_threshold, max_objects, min_pixels, max_assign_distance: how instances are formed.
    """

    def __init__(
        self,
        width: int = 32,
        depth: int = 4,
        sigma: float = 2.0,
        peak_threshold: float = 0.1,
        max_objects: int = 16,
        min_pixels: int = 4,
        max_assign_distance: float = 24.0,
    ) -> None:
        super().__init__()
        chans = [width * 2**k for k in range(depth)]
        self.down = nn.ModuleList()
        c_in = 3
        for c in chans:
            self.down.append(conv_block(c_in, c))
            c_in = c
        self.up = nn.ModuleList()
        self.merge = nn.ModuleList()
        for c_skip in reversed(chans[:-1]):
            self.up.append(nn.ConvTranspose2d(c_in, c_skip, 2, stride=2))
            self.merge.append(conv_block(2 * c_skip, c_skip))
            c_in = c_skip
        self.head = nn.Conv2d(c_in, 4, 1)
        nn.init.constant_(self.head.bias, 0.0)
        with torch.no_grad():
            self.head.bias[1] = -4.0  # the centre heatmap starts near 0 (CenterNet's prior)
        self.register_buffer("mean", torch.tensor([0.5, 0.5, 0.5]).view(1, 3, 1, 1))
        self.sigma = sigma
        self.peak_threshold = peak_threshold
        self.max_objects = max_objects
        self.min_pixels = min_pixels
        self.max_assign_distance = max_assign_distance

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        x = (images - self.mean) * 4.0
        skips = []
        for k, block in enumerate(self.down):
            if k:
                x = F.max_pool2d(x, 2)
            x = block(x)
            skips.append(x)
        for up, merge, skip in zip(self.up, self.merge, reversed(skips[:-1]), strict=True):
            x = merge(torch.cat([up(x), skip], dim=1))
        return self.head(x)

    # ------------------------------------------------------------------ training

    def targets(self, ids: torch.Tensor) -> dict[str, torch.Tensor]:
        """Training targets from id maps (B, H, W) (-1 floor, k >= 0 object k): object (B, H, W),
        heat (B, H, W), offset (B, 2, H, W)."""
        b, h, w = ids.shape
        fg = ids >= 0
        heat = torch.zeros((b, h, w))
        offset = torch.zeros((b, 2, h, w))
        yy = torch.arange(h, dtype=torch.float32)[:, None].expand(h, w)
        xx = torch.arange(w, dtype=torch.float32)[None, :].expand(h, w)
        for i in range(b):
            for k in torch.unique(ids[i]).tolist():
                if k < 0:
                    continue
                sel = ids[i] == k
                cy, cx = yy[sel].mean(), xx[sel].mean()
                g = torch.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * self.sigma**2))
                py, px = int(cy.round().clamp(0, h - 1)), int(cx.round().clamp(0, w - 1))
                g[py, px] = 1.0
                heat[i] = torch.maximum(heat[i], g)
                offset[i, 0][sel] = (cy - yy[sel]) / OFFSET_SCALE
                offset[i, 1][sel] = (cx - xx[sel]) / OFFSET_SCALE
        return {"object": fg.float(), "heat": heat, "offset": offset}

    def losses(self, images: torch.Tensor, ids: torch.Tensor) -> dict[str, torch.Tensor]:
        """The three losses of a batch with its id maps."""
        out = self(images)
        t = {k: v.to(out.device) for k, v in self.targets(ids.cpu()).items()}
        fg = t["object"]
        loss_object = F.binary_cross_entropy_with_logits(out[:, 0], fg) + soft_dice_loss(
            out[:, 0], fg
        )
        loss_heat = centre_focal_loss(out[:, 1], t["heat"])
        n_fg = fg.sum().clamp(min=1.0)
        loss_offset = (
            F.l1_loss(out[:, 2:], t["offset"], reduction="none").sum(1) * fg
        ).sum() / n_fg
        return {"object": loss_object, "centre": loss_heat, "offset": loss_offset}

    # ------------------------------------------------------------------ inference

    @torch.no_grad()
    def detect(self, images: torch.Tensor) -> list[Detections]:
        """Instances of each image (masks at the input's size)."""
        out = self(images)
        return [self.group(o) for o in out]

    def group(self, maps: torch.Tensor) -> Detections:
        """Instances from one image's maps (4, H, W)."""
        _, h, w = maps.shape
        fg = maps[0] > 0
        heat = maps[1].sigmoid()
        values, where = local_peaks(heat, self.peak_threshold, self.max_objects)
        where = where.float()  # (P, 2) y, x
        if len(values) == 0 or not fg.any():
            return Detections(torch.zeros(0), torch.zeros((0, h, w), dtype=torch.bool))
        pix = fg.nonzero().float()  # (F, 2)
        voted = pix + maps[2:, fg].T * OFFSET_SCALE
        dist = torch.cdist(voted, where)  # (F, P)
        best_d, best = dist.min(dim=1)
        ok = best_d <= self.max_assign_distance
        masks = torch.zeros((len(values), h, w), dtype=torch.bool)
        rows, cols = pix[ok, 0].long(), pix[ok, 1].long()
        masks[best[ok], rows, cols] = True
        keep = masks.flatten(1).sum(1) >= self.min_pixels
        return Detections(values[keep], masks[keep])
