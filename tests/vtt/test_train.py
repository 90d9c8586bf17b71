"""VTT training on the shared run engine: the chain train -> predict -> evaluate through the CLI,
resume, refusals, the learning-rate schedule, the validation CIDEr, the nearest-neighbour
baseline."""

import csv
import json
import shutil

import pytest
import torch

from tests.vtt.image_sets import write_image_set
from tests.vtt.samples import needs_java
from tvr.cli import main
from tvr.core.errors import UserError
from tvr.vtt.data.predictions import read_predictions
from tvr.vtt.data.records import read_records
from tvr.vtt.eval.baselines import NearestConfig, nearest_predictions
from tvr.vtt.models.config import ModelConfig
from tvr.vtt.train.config import VttTrainConfig, model_config, train_config
from tvr.vtt.train.module import linear_warmup_decay

torch.set_num_threads(1)

TINY_RUN = ["--model-size", "tiny", "--batch-size", "4", "--warmup-steps", "2", "--accelerator", "cpu",
            "--quiet", "--log-every-n-steps", "1"]  # fmt: skip


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    return write_image_set(tmp_path_factory.mktemp("vtt") / "data",
                           {"train": 8, "val": 3, "test": 3})  # fmt: skip


def rows(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@needs_java
def test_train_predict_evaluate_chain(data, tmp_path):
    runs = tmp_path / "runs"
    assert main(["vtt", "train", "--data", str(data), "--output-dir", str(runs), "--epochs", "2",
                 *TINY_RUN]) == 0  # fmt: skip
    run = runs / "ttnet"
    assert {p.name for p in (run / "checkpoints").iterdir()} >= {"best.ckpt", "last.ckpt"}
    metrics = rows(run / "metrics.csv")
    assert [r["epoch"] for r in metrics] == ["0", "1"]
    assert all(float(r["val/cider"]) >= 0 and r["train/topic_loss"] for r in metrics)
    saved = VttTrainConfig.load(run / "config.json")
    model = saved.model
    assert (model.model, model.diff, model.mtm, model.aux, model.encoder) == (
        "ttnet",
        True,
        True,
        True,
        "tvr-tiny",
    )
    test_ids = {r.id for r in read_records(data / "meta" / "vtt.jsonl") if r.split == "test"}
    trained = read_predictions(run / "predictions.jsonl")
    assert set(trained) == test_ids
    # predict again, greedy: the same descriptions; beam: written with its settings
    assert main(["vtt", "predict", "--run", str(run), "--out", str(tmp_path / "g.jsonl")]) == 0
    again = read_predictions(tmp_path / "g.jsonl")
    assert {k: v.transformations for k, v in again.items()} == {
        k: v.transformations for k, v in trained.items()
    }
    assert main(["vtt", "predict", "--checkpoint", str(run / "checkpoints" / "best.ckpt"),
                 "--data", str(data), "--out", str(tmp_path / "b.jsonl"), "--decode", "beam"]) == 0  # fmt: skip
    assert json.loads((tmp_path / "b.config.json").read_text())["decode"]["strategy"] == "beam"
    # evaluate reads them without glue
    out = tmp_path / "eval"
    assert main(["vtt", "evaluate", "--data", str(data / "meta" / "vtt.jsonl"),
                 "--predictions", str(run / "predictions.jsonl"), "--no-bertscore",
                 "--out", str(out)]) == 0  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    assert summary["missing"] == {"samples": 0, "descriptions": 0}
    assert summary["samples"] == len(test_ids) and summary["metrics"]["CIDEr"] >= 0


@needs_java
def test_resume_goes_on_and_another_config_is_refused(data, tmp_path, capsys):
    common = ["vtt", "train", "--data", str(data), "--output-dir", str(tmp_path),
              "--model", "glacnet", "--predict-split", "val", *TINY_RUN]  # fmt: skip
    assert main([*common, "--epochs", "1"]) == 0
    run = tmp_path / "glacnet"
    first = rows(run / "metrics.csv")
    assert len(first) == 1
    assert main([*common, "--epochs", "2"]) == 0
    second = rows(run / "metrics.csv")
    assert [r["epoch"] for r in second] == ["0", "1"]
    assert second[0] == first[0]  # epoch 0 was not trained again
    assert int(second[1]["step"]) == 2 * int(first[0]["step"])
    capsys.readouterr()
    assert main([*common, "--epochs", "2", "--dim", "32"]) == 2
    assert "holds another run" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["--model", "glacnet", "--no-diff"], "ablation of ttnet"),
        (["--model", "ttnet", "--no-cascade"], "GLACNet option"),
        (["--encoder", "ViT-Q-99"], "unknown image encoder"),
        (["--encoder-weights", "/nonexistent/clip.pt"], "no such file"),
    ],
)
def test_refusals_are_one_line(data, tmp_path, capsys, extra, words):
    code = main(["vtt", "train", "--data", str(data), "--output-dir", str(tmp_path),
                 *TINY_RUN, *extra])  # fmt: skip
    err = capsys.readouterr().err
    assert code == 2 and words in err and len(err.strip().splitlines()) == 1


def test_run_names_and_ablation_configs():
    def name(**model):
        return VttTrainConfig(model=ModelConfig(**model)).default_run_name()

    names = {
        name(model="ttnet"),
        name(model="ttnet", diff=False),
        name(model="ttnet", mtm=False, aux=False),
        name(model="ttnet-base", diff=False, mtm=False, aux=False),
    }
    assert names == {"ttnet", "ttnet-no-diff", "ttnet-no-mtm-no-aux", "ttnet-base"}
    with pytest.raises(ValueError, match="no Diff"):
        VttTrainConfig(model=ModelConfig(model="ttnet-base"))
    assert model_config("ttnet-base", "tiny") == ModelConfig(
        model="ttnet-base", encoder="tvr-tiny", dim=64, heads=4, diff=False, mtm=False, aux=False
    )
    assert model_config("ttnet", ablated=["mtm"], dim=256).mtm is False
    with pytest.raises(ValueError, match="ablation of ttnet"):
        model_config("glacnet", ablated=["diff"])


def test_config_json_holds_the_model_as_one_table():
    config = train_config("d", model_config("glacnet", "tiny", cascade=False), epochs=3)
    saved = config.to_dict()
    assert saved["model"]["model"] == "glacnet" and saved["model"]["cascade"] is False
    assert saved["epochs"] == 3 and "dim" not in saved
    assert VttTrainConfig.from_dict(saved) == config
    other = train_config("./d/", model_config("glacnet", "tiny", cascade=False, dim=32))
    assert other.differences(config) == ["model.dim (32 there, 64 here)"]


def test_warmup_then_linear_decay():
    f = linear_warmup_decay(4, 12)
    assert [f(s) for s in (0, 2, 4, 8, 12, 20)] == [0.0, 0.5, 1.0, 0.5, 0.0, 0.0]


@needs_java
def test_val_cider_is_the_evaluation_cider():
    from tvr.vtt.eval.metrics.suite import MetricOptions, score_descriptions
    from tvr.vtt.train.module import val_cider

    refs = ["put steak on grill", "flip steak", "cut mango", "pour coffee"]
    hyps = ["put steak on grill", "flip the steak", "peel mango", ""]
    scores = score_descriptions(hyps, refs, MetricOptions(bertscore=False))
    assert val_cider(hyps, refs) == pytest.approx(scores["CIDEr"].mean)
    assert val_cider(refs, refs) > val_cider(hyps, refs) > 0


def test_nearest_copies_the_training_pair_with_the_same_images(data, tmp_path):
    # a copy of the data where each test sample's states are a training sample's
    copy = tmp_path / "data"
    shutil.copytree(data, copy)
    records = read_records(copy / "meta" / "vtt.jsonl")
    train = [r for r in records if r.split == "train"]
    test = [r for r in records if r.split == "test"]
    expected = {}
    for target in test:
        source = next(r for r in train if r.n == target.n)
        for a, b in zip(source.state_names(), target.state_names(), strict=True):
            shutil.copy(copy / "states" / a, copy / "states" / b)
        expected[target.id] = source.labels
    for pair in ("both", "concat", "diff"):
        config = NearestConfig(data=str(copy), encoder="tvr-tiny", pair=pair,
                               feature_cache=str(tmp_path / "cache"))  # fmt: skip
        found = nearest_predictions(config)
        assert set(found) == set(expected)
        # the same pair always wins (a copied description can also be another equal label)
        for sample_id, labels in expected.items():
            assert found[sample_id] == labels, pair
    out = tmp_path / "nn.jsonl"
    assert main(["vtt", "baseline", "nearest", "--data", str(copy), "--encoder", "tvr-tiny",
                 "--feature-cache", str(tmp_path / "cache"), "--out", str(out)]) == 0  # fmt: skip
    assert {k: list(v.transformations) for k, v in read_predictions(out).items()} == expected
    assert json.loads((tmp_path / "nn.config.json").read_text())["pair"] == "both"
    # on the training split a pair never copies itself: two training samples with the same
    # images get each other's descriptions
    a, b = next((x, y) for i, x in enumerate(train) for y in train[i + 1 :] if x.n == y.n)
    for x, y in zip(a.state_names(), b.state_names(), strict=True):
        shutil.copy(copy / "states" / x, copy / "states" / y)
    on_train = nearest_predictions(NearestConfig(data=str(copy), split="train",
                                                 encoder="tvr-tiny"))  # fmt: skip
    assert (on_train[a.id], on_train[b.id]) == (b.labels, a.labels)
    with pytest.raises(UserError, match="no val samples"):
        nearest_predictions(NearestConfig(data=str(_no_val(tmp_path, data)), split="val",
                                          encoder="tvr-tiny"))  # fmt: skip


def _no_val(tmp_path, data):
    folder = tmp_path / "noval"
    shutil.copytree(data, folder)
    lines = [json.loads(x) for x in (folder / "meta" / "vtt.jsonl").read_text().splitlines()]
    kept = [x for x in lines if x["split"] != "val"]
    (folder / "meta" / "vtt.jsonl").write_text("".join(json.dumps(x) + "\n" for x in kept))
    return folder
