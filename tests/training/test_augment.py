"""The shared random translation of image pairs."""

import torch

from tvr.training.augment import random_translate


def test_same_shift_for_both_images_and_at_most_five_percent():
    torch.manual_seed(0)
    b, h, w = 16, 40, 60
    init = torch.rand(b, 3, h, w)
    final = init.clone()
    a, f = random_translate(init, final, 0.05)
    assert torch.equal(a, f), "both images of a pair move together"
    shifted = 0
    for i in range(b):
        found = False
        for dy in range(-2, 3):
            for dx in range(-3, 4):
                ref = torch.roll(init[i], shifts=(dy, dx), dims=(1, 2))
                ys = slice(max(dy, 0), h + min(dy, 0))
                xs = slice(max(dx, 0), w + min(dx, 0))
                if torch.equal(a[i][:, ys, xs], ref[:, ys, xs]):
                    found = True
                    shifted += (dy, dx) != (0, 0)
                    break
            if found:
                break
        assert found, f"sample {i} is not a whole-pixel shift of at most 5%"
    assert shifted > 0


def test_zero_translation_is_identity():
    x = torch.rand(2, 3, 8, 8)
    a, f = random_translate(x, x + 1, 0.0)
    assert torch.equal(a, x) and torch.equal(f, x + 1)


def test_pairs_get_different_shifts():
    torch.manual_seed(1)
    x = torch.rand(1, 3, 40, 60).expand(32, -1, -1, -1).contiguous()
    a, _ = random_translate(x, x, 0.05)
    assert len({tuple(a[i].flatten()[:500].tolist()) for i in range(32)}) > 1
