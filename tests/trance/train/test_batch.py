"""The batch contract: target layout and the collated tensors' shapes and types."""

import numpy as np
import pytest
import torch

from tvr.trance.data.batch import (
    IGNORE,
    OBJ_END,
    VALUE_END,
    collate,
    image_to_float,
    image_to_uint8,
    images_to_float,
    make_example,
    targets,
)
from tvr.trance.train.synthetic import make_synthetic_examples
from tvr.trance.world.vocab import VALUE_INDEX


def test_targets_layout():
    obj, val = targets([(3, 1), (0, VALUE_INDEX["shape.cube"])])
    assert obj.tolist() == [3, 0, OBJ_END, IGNORE, IGNORE]
    assert val.tolist() == [1, 27, VALUE_END, IGNORE, IGNORE]
    obj, val = targets([(1, 2)] * 4)
    assert obj.tolist() == [1, 1, 1, 1, OBJ_END]
    with pytest.raises(ValueError):
        targets([(1, 2)] * 5)


@pytest.mark.parametrize("setting", ["basic", "event", "view"])
def test_collate_follows_the_contract(setting):
    b = collate(make_synthetic_examples(5, setting, (24, 32), seed=1))
    assert b["init_image"].shape == b["final_image"].shape == (5, 24, 32, 3)
    assert b["init_image"].dtype == b["final_image"].dtype == torch.uint8
    f = images_to_float(b)
    assert f["init_image"].shape == f["final_image"].shape == (5, 3, 24, 32)
    assert f["init_image"].dtype == torch.float32 and f["init_image"].is_contiguous()
    assert float(f["init_image"].min()) >= 0.0 and float(f["init_image"].max()) <= 1.0
    assert f["objects"] is b["objects"] and f["id"] == b["id"]
    assert b["objects"].shape == (5, 10, 19) and b["objects"].dtype == torch.float32
    assert b["init_state"].shape == b["final_state"].shape == (5, 10, 6)
    assert b["obj_target"].shape == b["value_target"].shape == (5, 5)
    assert b["obj_target"].dtype == b["value_target"].dtype == torch.int64
    assert b["options"].shape == (5, 33) and b["options"].dtype == torch.bool
    assert b["num_steps"].shape == b["view"].shape == (5,)
    assert len(b["id"]) == 5 and len(set(b["id"])) == 5
    n = b["num_steps"].numpy()
    ends = (b["obj_target"] == OBJ_END).int().argmax(1).numpy()
    np.testing.assert_array_equal(ends, n)
    # the reference first value is always accepted
    first = b["value_target"][:, 0]
    assert b["options"][torch.arange(5), first].all()
    if setting == "basic":
        assert (b["num_steps"] == 1).all()
    if setting != "view":
        assert (b["view"] == 1).all()


def test_float_conversion_is_x_over_255_per_channel():
    rng = np.random.default_rng(0)
    hwc = rng.integers(0, 256, (2, 5, 7, 3), dtype=np.uint8)
    hwc[0, 0, 0] = (0, 128, 255)
    f = image_to_float(torch.from_numpy(hwc))
    want = torch.from_numpy(hwc.transpose(0, 3, 1, 2).astype(np.float32) / np.float32(255.0))
    assert torch.equal(f, want)  # the very numbers of the float32 contract
    assert torch.allclose(f[0, :, 0, 0], torch.tensor([0.0, 128 / 255, 1.0]))  # channels
    already = torch.rand(2, 3, 5, 7)
    assert image_to_float(already) is already


def test_make_example_takes_float_and_either_layout():
    rng = np.random.default_rng(1)
    hwc = rng.integers(0, 256, (6, 8, 3), dtype=np.uint8)
    chw_float = hwc.transpose(2, 0, 1).astype(np.float32) / 255.0
    state = np.zeros((10, 6), dtype=np.int64)
    ex = make_example("s", chw_float, hwc.transpose(2, 0, 1), state, state, [(0, 1)])
    assert ex["init_image"].dtype == np.uint8 and ex["init_image"].shape == (6, 8, 3)
    np.testing.assert_array_equal(ex["init_image"], hwc)  # x / 255 rounds back exactly
    np.testing.assert_array_equal(ex["final_image"], hwc)
    assert image_to_uint8(np.full((3, 2, 2), 0.5))[0, 0, 0] == 128  # round(127.5) to even
    assert image_to_uint8(np.full((3, 2, 2), 0.502))[0, 0, 0] == 128
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        image_to_uint8(np.full((2, 2, 3), 1.5, dtype=np.float32))
    with pytest.raises(ValueError, match="shape"):
        image_to_uint8(np.zeros((4, 4), dtype=np.uint8))
