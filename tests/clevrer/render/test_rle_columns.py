"""RLE over only the columns that hold objects gives pycocotools' bytes for the whole mask."""

from __future__ import annotations

import numpy as np
import pytest

coco = pytest.importorskip("pycocotools.mask")

from tvr.clevrer.render.masks import encode_frame  # noqa: E402

PROPS = [("red", "rubber", "cube"), ("blue", "metal", "sphere")]


@pytest.mark.parametrize("seed", range(5))
def test_objects_in_middle_columns_only(seed):
    rng = np.random.default_rng(seed)
    ids = np.full((32, 48), -1, np.int16)
    ids[5:20, 10:17] = 0
    ids[rng.integers(0, 32, 40), rng.integers(12, 30, 40)] = 1  # scattered, some over object 0
    ids[31, 29] = 1  # a run that ends at the bottom of the last object column
    frame = encode_frame(ids, PROPS, "video_00000", 0)
    assert len(frame.objects) == 2
    for i, o in enumerate(frame.objects):
        ref = coco.encode(np.asfortranarray((ids == i).astype(np.uint8)))
        assert o.mask == {"size": [32, 48], "counts": ref["counts"].decode()}
