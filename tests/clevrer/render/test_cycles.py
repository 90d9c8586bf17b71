"""Cycles renders a CLEVRER frame (2 samples) with masks on the raster backend's pixels."""

from __future__ import annotations

import numpy as np
import pytest

from tvr.clevrer.render.video import frame_scenes


def test_cycles_frame_and_mask_agree_with_raster(run, raster):
    pytest.importorskip("bpy")
    from tvr.clevrer.render import make_frame_renderer

    objects, trace = run
    desc = frame_scenes(objects, trace).frame(2)
    cycles = make_frame_renderer("cycles", "preview")
    try:
        img, ids = cycles.render(desc)
        img2, ids2 = cycles.render(desc)  # objects moved in place (same objects): same result
    finally:
        cycles.close()
    assert img.shape == (320, 480, 3) and 40 < img.mean() < 220
    assert np.array_equal(ids, ids2) and np.array_equal(img, img2)
    _, r_ids = raster.render(desc, image=False)
    for i in range(3):
        inter = ((ids == i) & (r_ids == i)).sum()
        union = ((ids == i) | (r_ids == i)).sum()
        assert union > 200 and inter / union > 0.95, (i, inter / union)
