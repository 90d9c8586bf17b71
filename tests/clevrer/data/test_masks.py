"""Mask proposals: COCO RLE with text counts, round trip, faults."""

import copy
import json

import numpy as np
import pytest

from tvr.clevrer.data.masks import (
    GroundTruth,
    MaskFrame,
    MaskObject,
    MaskProposals,
    decode_mask,
    encode_mask,
    read_masks,
    rle_pixel_count,
    write_masks,
)
from tvr.core.errors import InputError


def _random_mask(rng, h=32, w=48):
    m = np.zeros((h, w), np.uint8)
    y, x = rng.integers(0, h - 8), rng.integers(0, w - 8)
    m[y : y + rng.integers(1, 8), x : x + rng.integers(1, 8)] = 1
    m[rng.random((h, w)) < 0.05] = 1  # scattered pixels: many runs
    return m


def test_rle_encodes_as_text_and_decodes_to_the_mask():
    rng = np.random.default_rng(0)
    for _ in range(20):
        m = _random_mask(rng)
        rle = encode_mask(m)
        assert isinstance(rle["counts"], str) and rle["size"] == [32, 48]
        np.testing.assert_array_equal(decode_mask(rle), m)
        assert rle_pixel_count(rle["counts"]) == 32 * 48
    empty = encode_mask(np.zeros((320, 480), np.uint8))
    assert rle_pixel_count(empty["counts"]) == 320 * 480
    assert rle_pixel_count("") == 0
    assert rle_pixel_count("\x7f") is None  # not a character of the encoding


def _proposals(rng):
    frames = []
    for t in range(3):
        objects = (
            MaskObject("red", "metal", "cube", encode_mask(_random_mask(rng))),
            MaskObject("blue", "rubber", "sphere", encode_mask(_random_mask(rng))),
        )
        frames.append(MaskFrame(f"sim_00003/frame_{t:05d}.png", t, objects))
    truth = GroundTruth(((0, "red", "metal", "cube"), (1, "blue", "rubber", "sphere")),
                        ((2, (0, 1)),))  # fmt: skip
    return MaskProposals("sim_00003", tuple(frames), truth)


def test_round_trip_keeps_the_content(tmp_path):
    masks = _proposals(np.random.default_rng(1))
    path = tmp_path / "sim_00003.json"
    write_masks(path, masks)
    data = json.loads(path.read_text())
    assert set(data) == {"video_name", "frames", "ground_truth"}
    assert data["ground_truth"]["collisions"] == [{"frame": 2, "object": [0, 1]}]
    assert data["frames"][1]["objects"][0]["mask"]["counts"] == masks.frames[1].objects[0].mask[
        "counts"]  # fmt: skip
    assert read_masks(path) == masks
    no_truth = MaskProposals(masks.video_name, masks.frames)
    write_masks(path, no_truth)
    assert "ground_truth" not in json.loads(path.read_text())
    assert read_masks(path) == no_truth


CASES = [
    (lambda d: d["frames"][1]["objects"][0]["mask"].update(counts="11"),
     "frames[1].objects[0].mask.counts", "the runs cover"),
    (lambda d: d["frames"][1]["objects"][0]["mask"].update(size=[32]),
     "frames[1].objects[0].mask.size", "expected [height, width]"),
    (lambda d: d["frames"][2]["objects"][1]["mask"].update(counts=b"x".decode() + "\x01"),
     "frames[2].objects[1].mask.counts", "not a COCO compressed RLE"),
    (lambda d: d["frames"][0]["objects"][1].update(shape="cone"),
     "frames[0].objects[1].shape", "unknown value 'cone'"),
    (lambda d: d["frames"][0].pop("frame_index"), "frames[0].frame_index", "missing"),
    (lambda d: d["ground_truth"]["collisions"][0].update(object=[0, 5]),
     "ground_truth.collisions[0].object[1]", "no object 5"),
]


@pytest.mark.parametrize("change,field,message", CASES)
def test_a_fault_names_the_file_and_the_field(tmp_path, change, field, message):
    data = copy.deepcopy(_proposals(np.random.default_rng(2)).to_json())
    change(data)
    path = tmp_path / "sim_00003.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as err:
        read_masks(path)
    assert err.value.field == field and message in err.value.reason
