"""The batch contract: target layout and the collated tensors' shapes and types."""

import numpy as np
import pytest
import torch

from tvr.training.batch import IGNORE, OBJ_END, VALUE_END, collate, targets
from tvr.training.synthetic import make_synthetic_examples
from tvr.trance.vocab import VALUE_INDEX


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
    assert b["init_image"].shape == b["final_image"].shape == (5, 3, 24, 32)
    assert b["init_image"].dtype == torch.float32
    assert float(b["init_image"].min()) >= 0.0 and float(b["init_image"].max()) <= 1.0
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
