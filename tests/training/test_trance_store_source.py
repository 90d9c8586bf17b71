"""The PyTorch Datasets over a generated store, and training on one with no glue code."""

from __future__ import annotations

import json
import pickle

import numpy as np
import pytest

pytest.importorskip("moderngl")
pytest.importorskip("lightning")

import torch
from torch.utils.data import DataLoader

from tvr.cli import main
from tvr.training.batch import IGNORE, OBJ_END, VALUE_END, VIEW_INDEX, collate
from tvr.training.config import TrainConfig
from tvr.training.data import make_dataset
from tvr.trance.dataset_config import DatasetConfig
from tvr.trance.dataset_generate import generate_dataset
from tvr.trance.features import object_vectors
from tvr.trance.torch_data import store_dataset

TINY = {"preset": "preview", "image_width": 96, "image_height": 72, "small_width": 64,
        "small_height": 48, "shard_size": 8}  # fmt: skip


def _make(root, setting, sizes):
    return generate_dataset(
        DatasetConfig(setting=setting, split_sizes=sizes, **TINY), root / setting, progress=False
    )


@pytest.fixture(scope="module")
def stores(tmp_path_factory):
    root = tmp_path_factory.mktemp("stores")
    sizes = {"train": 12, "val": 2, "test": 2}
    return {s: _make(root, s, sizes) for s in ("basic", "view")}


def _check_example(ex, sp, i, view):
    s = sp.sample(i)
    assert ex["id"] == s.id
    assert ex["init_image"].shape == (3, 48, 64) and ex["init_image"].dtype == np.float32
    assert np.allclose(ex["init_image"], sp.image(i, "init", "C").transpose(2, 0, 1) / 255.0)
    assert np.allclose(ex["final_image"], sp.image(i, "fin", view).transpose(2, 0, 1) / 255.0)
    assert ex["objects"].shape == (10, 19)
    assert np.array_equal(ex["objects"], object_vectors(s.initial_array))
    assert np.array_equal(ex["final_state"], s.final_array)
    n = len(s.steps)
    assert list(ex["obj_target"][:n]) == [st.obj for st in s.steps]
    assert list(ex["value_target"][:n]) == [st.value for st in s.steps]
    assert ex["obj_target"][n] == OBJ_END and ex["value_target"][n] == VALUE_END
    assert (ex["obj_target"][n + 1 :] == IGNORE).all()
    assert int(ex["num_steps"]) == n and int(ex["view"]) == VIEW_INDEX[view]


def test_basic_items_accept_every_out_option(stores):
    ds = store_dataset(stores["basic"], "train")
    for i in range(len(ds)):
        ex = ds[i]
        step = ds.split.sample(i).steps[0]
        _check_example(ex, ds.split, i, "C")
        assert set(np.flatnonzero(ex["options"])) == set(step.accepted)


def test_view_items_show_the_samples_view(stores):
    ds = store_dataset(stores["view"], "train")
    views = [ds.split.sample(i).extra["view"] for i in range(len(ds))]
    for i in range(len(ds)):
        _check_example(ds[i], ds.split, i, views[i])
    # an Event model on a View store reads fin.C; View on a Basic store is refused
    ev = store_dataset(stores["view"], "train", "event")
    assert int(ev[0]["view"]) == VIEW_INDEX["C"]
    with pytest.raises(ValueError, match="needs a view"):
        store_dataset(stores["basic"], "train", "view")


def test_loader_with_workers_and_full_size(stores):
    ds = store_dataset(stores["view"], "train")
    loader = DataLoader(ds, batch_size=5, num_workers=2, collate_fn=collate)
    batches = list(loader)
    assert sum(len(b["id"]) for b in batches) == 12
    assert batches[0]["init_image"].shape == (5, 3, 48, 64)
    assert [i for b in batches for i in b["id"]] == ds.split.ids
    full = store_dataset(stores["view"], "train", size="full")
    assert full[3]["final_image"].shape == (3, 72, 96)
    # a spawned worker gets the dataset without its caches (a memmap would pickle as a copy)
    for i in range(len(ds)):
        ds[i]
    copy = pickle.loads(pickle.dumps(ds))
    assert len(pickle.dumps(ds)) < 20_000
    assert all(np.array_equal(copy[i]["final_image"], ds[i]["final_image"]) for i in range(12))


def test_training_source_by_name(stores, tmp_path):
    config = TrainConfig(model="cnn+-g", setting="view", data="trance",
                         data_root=str(stores["view"].root), image_size=(48, 64))  # fmt: skip
    train = make_dataset(config, "train")
    assert len(train) == 12 and train[0]["init_image"].shape == (3, 48, 64)
    config.image_size = (72, 96)
    assert make_dataset(config, "val")[0]["init_image"].shape == (3, 72, 96)
    config.image_size = (120, 160)
    with pytest.raises(ValueError, match="image-size"):
        make_dataset(config, "val")
    config.data_root = None
    with pytest.raises(ValueError, match="data-root"):
        make_dataset(config, "val")


def test_train_predict_evaluate_on_a_generated_dataset(tmp_path, capsys):
    root = tmp_path / "data"
    assert main(["generate", "--setting", "event", "--split-sizes", "train=16,val=4,test=4",
                 "--out", str(root), "--preset", "preview", "--image-size", "96x72",
                 "--small-size", "64x48", "--shard-size", "8", "--quiet"]) == 0  # fmt: skip
    torch.manual_seed(0)
    runs = tmp_path / "runs"
    assert main(["train", "--data", "trance", "--data-root", str(root), "--setting", "event",
                 "--model", "cnn+-g", "--image-size", "64x48", "--epochs", "2",
                 "--batch-size", "8", "--accelerator", "cpu", "--output-dir", str(runs),
                 "--run-name", "r"]) == 0  # fmt: skip
    metrics = (runs / "r" / "metrics.csv").read_text().splitlines()
    assert len(metrics) == 3  # header + two epochs
    preds = tmp_path / "p.jsonl"
    assert main(["predict", "--run", str(runs / "r"), "--out", str(preds)]) == 0
    lines = [json.loads(x) for x in preds.read_text().splitlines()]
    test_ids = [json.loads(x)["id"] for x in (root / "test" / "samples.jsonl").read_text().splitlines()]
    assert sorted(r["id"] for r in lines) == sorted(test_ids)
    capsys.readouterr()
    out = tmp_path / "eval"
    assert main(["evaluate", "--samples", str(root / "test" / "samples.jsonl"),
                 "--predictions", str(preds), "--setting", "event", "--out", str(out)]) == 0  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    assert summary["samples"] == 4 and summary["missing"] == 0 and summary["invalid"] == 0
    assert 0.0 <= summary["metrics"]["Acc"] <= 1.0
