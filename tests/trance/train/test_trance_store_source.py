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
from tvr.trance.data.batch import IGNORE, OBJ_END, VALUE_END, VIEW_INDEX, collate, images_to_float
from tvr.trance.data.torch_data import store_dataset
from tvr.trance.generate.config import DatasetConfig
from tvr.trance.generate.job import generate_dataset
from tvr.trance.models.features import object_vectors
from tvr.trance.train.config import TrainConfig
from tvr.trance.train.data import make_dataset

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
    assert ex["init_image"].shape == (48, 64, 3) and ex["init_image"].dtype == np.uint8
    assert np.array_equal(ex["init_image"], sp.image(i, "init", "C"))
    assert np.array_equal(ex["final_image"], sp.image(i, "fin", view))
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
    assert batches[0]["init_image"].shape == (5, 48, 64, 3)
    assert batches[0]["init_image"].dtype == torch.uint8
    assert [i for b in batches for i in b["id"]] == ds.split.ids
    full = store_dataset(stores["view"], "train", size="full")
    assert full[3]["final_image"].shape == (72, 96, 3)
    # a spawned worker gets the dataset without its caches (a memmap would pickle as a copy)
    for i in range(len(ds)):
        ds[i]
    copy = pickle.loads(pickle.dumps(ds))
    assert len(pickle.dumps(ds)) < 20_000
    assert all(np.array_equal(copy[i]["final_image"], ds[i]["final_image"]) for i in range(12))


def _old_float32(img: np.ndarray) -> np.ndarray:
    """The float32 (3, H, W) image the loader made before images travelled as uint8."""
    out = np.empty((3, *img.shape[:2]), dtype=np.float32)
    np.divide(img.transpose(2, 0, 1), np.float32(255.0), out=out, dtype=np.float32)
    return out


def test_the_model_step_sees_the_float32_images_of_before(stores):
    import warnings

    from tvr.trance.train.losses import supervised_loss
    from tvr.trance.train.module import TranceModule

    ds = store_dataset(stores["view"], "train")
    loader = DataLoader(ds, batch_size=6, num_workers=1, collate_fn=collate)
    batch = next(iter(loader))
    views = [ds.split.sample(i).extra["view"] for i in range(6)]
    init = np.stack([_old_float32(ds.split.image(i, "init", "C")) for i in range(6)])
    final = np.stack([_old_float32(ds.split.image(i, "fin", views[i])) for i in range(6)])
    seen = images_to_float(batch)  # what each step of the module starts with
    assert seen["init_image"].dtype == torch.float32
    assert torch.equal(seen["init_image"], torch.from_numpy(init))
    assert torch.equal(seen["final_image"], torch.from_numpy(final))
    # so the module's loss on the uint8 batch is the loss on the float32 images of before
    config = TrainConfig(model="cnn+-g", setting="view", image_size=(48, 64), translate=0.0)
    module = TranceModule(config.to_dict())
    old = dict(batch, init_image=torch.from_numpy(init), final_image=torch.from_numpy(final))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # self.log without a Trainer
        loss = module.training_step(batch, 0)
    want = supervised_loss(module.model, old, old["init_image"], old["final_image"])["loss"]
    assert torch.equal(loss, want)


def test_training_source_by_name(stores, tmp_path):
    config = TrainConfig(model="cnn+-g", setting="view", data="trance",
                         data_root=str(stores["view"].root), image_size=(48, 64))  # fmt: skip
    train = make_dataset(config, "train")
    assert len(train) == 12 and train[0]["init_image"].shape == (48, 64, 3)
    config.image_size = (72, 96)
    assert make_dataset(config, "val")[0]["init_image"].shape == (72, 96, 3)
    config.image_size = (120, 160)
    with pytest.raises(ValueError, match="image-size"):
        make_dataset(config, "val")
    config.data_root = None
    with pytest.raises(ValueError, match="data-root"):
        make_dataset(config, "val")


def _ids(ds):
    return [ds[i]["id"] for i in range(len(ds))]


def test_train_size_takes_a_seeded_nested_subset_of_the_training_split(stores):
    config = TrainConfig(model="cnn+-g", setting="view", data="trance",
                         data_root=str(stores["view"].root), image_size=(48, 64))  # fmt: skip
    whole = _ids(make_dataset(config, "train"))
    val = _ids(make_dataset(config, "val"))
    config.train_size = 5
    small = _ids(make_dataset(config, "train"))
    assert len(small) == 5 and set(small) <= set(whole)
    assert _ids(make_dataset(config, "val")) == val  # only the training split is cut
    config.train_size = 9
    larger = _ids(make_dataset(config, "train"))
    assert len(larger) == 9 and set(small) <= set(larger)  # nested for one seed
    config.seed += 1
    assert _ids(make_dataset(config, "train")) != larger
    config.train_size = len(whole) + 1
    too_many = rf"train_size {len(whole) + 1} is larger than the training split \({len(whole)} "
    with pytest.raises(ValueError, match=too_many):
        make_dataset(config, "train")
    with pytest.raises(ValueError, match="positive"):
        TrainConfig(train_size=0)


def test_train_predict_evaluate_on_a_generated_dataset(tmp_path, capsys):
    root = tmp_path / "data"
    assert main(["generate", "--setting", "event", "--split-sizes", "train=16,val=4,test=4",
                 "--out", str(root), "--preset", "preview", "--image-size", "96x72",
                 "--small-size", "64x48", "--shard-size", "8", "--quiet"]) == 0  # fmt: skip
    torch.manual_seed(0)
    runs = tmp_path / "runs"
    assert main(["train", "--source", "trance", "--data", str(root), "--setting", "event",
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
    assert main(["evaluate", "--data", str(root / "test" / "samples.jsonl"),
                 "--predictions", str(preds), "--setting", "event", "--out", str(out)]) == 0  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    assert summary["samples"] == 4 and summary["missing"] == 0 and summary["invalid"] == 0
    assert 0.0 <= summary["metrics"]["Acc"] <= 1.0


def test_a_dataset_class_takes_a_folder_and_a_split_and_says_what_is_wrong(stores):
    """Issue 29: `EventDataset("data/ev", "test")` said "size is 'small' or 'full', got 'test'".
    Each class takes (root, split) and names a wrong argument."""
    from tvr.core.errors import UserError
    from tvr.trance.data.torch_data import BasicDataset, EventDataset, ViewDataset

    root = stores["basic"].root
    ds = EventDataset(root, "test")
    assert len(ds) == 2 and ds[0]["init_image"].shape == (48, 64, 3)
    assert len(BasicDataset(root, "train", size="full")) == 12
    assert len(EventDataset(stores["basic"].split("val"), "small")) == 2  # the older call
    with pytest.raises(UserError, match="give the split"):
        EventDataset(root)
    with pytest.raises(UserError, match="no split 'dev'"):
        EventDataset(root, "dev")
    with pytest.raises(UserError, match="size is 'small'"):
        EventDataset(root, "test", size="large")
    with pytest.raises(UserError, match="is a basic dataset: ViewDataset needs a view one"):
        ViewDataset(root, "test")


def test_a_typo_in_data_root_is_said_as_such(stores, tmp_path, capsys):
    """Issue 29: a typo in --data was reported as "holds another run (its config.json
    differs in data_root ...)"."""
    from tvr.cli import main

    root = stores["basic"].root
    argv = ["train", "--source", "trance", "--setting", "basic", "--model", "cnn+-g",
            "--image-size", "64x48", "--epochs", "1", "--batch-size", "4", "--accelerator",
            "cpu", "--output-dir", str(tmp_path), "--run-name", "r", "--quiet"]  # fmt: skip
    assert main([*argv, "--data", str(root)]) == 0
    capsys.readouterr()
    assert main([*argv, "--data", f"{root}x"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == f"tvr train: error: {root}x: no such dataset folder (make one with `tvr generate`)"
