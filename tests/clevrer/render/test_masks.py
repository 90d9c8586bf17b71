"""COCO RLE of id masks: the same bytes as pycocotools' own encoder, edge pixels included."""

from __future__ import annotations

import numpy as np
import pytest

coco = pytest.importorskip("pycocotools.mask")

from tvr.clevrer.render.masks import encode_frame, frame_filename, rle_counts  # noqa: E402

PROPS = [("red", "rubber", "cube"), ("blue", "metal", "sphere"), ("gray", "rubber", "cylinder")]


@pytest.mark.parametrize("seed", range(20))
def test_rle_equals_pycocotools_encode(seed):
    rng = np.random.default_rng(seed)
    h, w = (int(v) for v in rng.integers(1, 9, 2))
    ids = rng.integers(-1, 3, (h, w)).astype(np.int16)
    ids[0, 0] = seed % 3  # an object on the first pixel
    ids[-1, -1] = (seed + 1) % 3  # and on the last
    frame = encode_frame(ids, PROPS, "video_00001", 4)
    present = sorted(set(ids[ids >= 0].ravel().tolist()))
    assert [(o.color, o.material, o.shape) for o in frame.objects] == [PROPS[i] for i in present]
    for o, i in zip(frame.objects, present, strict=True):
        ref = coco.encode(np.asfortranarray((ids == i).astype(np.uint8)))
        assert o.mask == {"size": [h, w], "counts": ref["counts"].decode()}
        assert np.array_equal(coco.decode({"size": [h, w], "counts": o.mask["counts"]}), ids == i)


def test_runs_add_up_and_empty_frames_list_nothing():
    ids = np.full((4, 5), -1, np.int16)
    assert rle_counts(ids) == {}
    assert encode_frame(ids, PROPS, "v", 0).objects == ()
    ids[1:3, 2] = 1
    counts = rle_counts(ids)[1]
    assert counts == [9, 2, 9] and sum(counts) == 20  # column 2 starts at pixel 8
    assert frame_filename("video_00012", 3) == "video_00012/00003.png"
