"""Training augmentation: one random translation of up to 5% applied to both images of a pair."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def random_translate(
    init: torch.Tensor,
    final: torch.Tensor,
    max_fraction: float = 0.05,
    generator: torch.Generator | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Shift each pair (B, 3, H, W) by a whole number of pixels, up to `max_fraction` of the
    width and height in each direction, the same shift for the initial and the final image;
    uncovered pixels are 0."""
    if max_fraction <= 0:
        return init, final
    b, c, h, w = init.shape
    u = torch.rand(b, 2, generator=generator, device=generator.device if generator else "cpu")
    frac = (u.to(init.device) * 2 - 1) * max_fraction
    dy = torch.round(frac[:, 0] * h)
    dx = torch.round(frac[:, 1] * w)
    theta = torch.zeros(b, 2, 3, device=init.device, dtype=torch.float32)
    theta[:, 0, 0] = 1.0
    theta[:, 1, 1] = 1.0
    theta[:, 0, 2] = -2.0 * dx / w  # output pixel (i, j) reads input (i - dy, j - dx)
    theta[:, 1, 2] = -2.0 * dy / h
    both = torch.cat([init, final], dim=1)
    grid = F.affine_grid(theta, list(both.shape), align_corners=False)
    out = F.grid_sample(
        both.float(), grid, mode="nearest", padding_mode="zeros", align_corners=False
    )
    out = out.to(init.dtype)
    return out[:, :c], out[:, c:]
