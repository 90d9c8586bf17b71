"""A whole run: train two epochs on a tiny synthetic set, then predictions; resume; REINFORCE."""

import csv
import json

import pytest
import torch
from lightning.pytorch.callbacks import Callback

from tvr.training.config import TrainConfig
from tvr.training.data import make_dataset, synthetic_split_records
from tvr.training.run import train
from tvr.training.synthetic import write_synthetic_samples
from tvr.trance.vocab import VALUE_INDEX

SIZES = {"train": 48, "val": 16, "test": 16}


def _config(tmp_path, **kw):
    base = dict(
        model="cnn+-g",
        setting="event",
        image_size=(30, 40),
        synthetic_sizes=SIZES,
        epochs=2,
        batch_size=16,
        output_dir=str(tmp_path),
        run_name="run",
        log_every_n_steps=1,
    )
    base.update(kw)
    return TrainConfig(**base)


def _read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


@pytest.mark.parametrize("setting", ["event", "basic", "view"])
def test_two_epoch_run_writes_everything(tmp_path, setting):
    cfg = _config(tmp_path, setting=setting)
    run_dir = train(cfg)
    assert TrainConfig.load(run_dir / "config.json") == cfg
    rows = _read_csv(run_dir / "metrics.csv")
    assert [int(r["epoch"]) for r in rows] == [0, 1]
    assert {"train/loss", "val/acc", "val/loss", "lr"} <= set(rows[0])
    assert float(rows[0]["lr"]) == pytest.approx(1e-3) and float(rows[1]["lr"]) == pytest.approx(
        1e-4
    )
    assert (run_dir / "checkpoints" / "best.ckpt").exists()
    assert (run_dir / "checkpoints" / "last.ckpt").exists()
    assert any((run_dir / "tensorboard").glob("events.out.tfevents.*"))

    preds = [json.loads(line) for line in (run_dir / "predictions.jsonl").read_text().splitlines()]
    test_ids = [e["id"] for e in make_dataset(cfg, "test").examples]
    assert [p["id"] for p in preds] == test_ids
    for p in preds:
        assert len(p["steps"]) <= 4
        if setting == "basic":
            assert len(p["steps"]) == 1
        for s in p["steps"]:
            assert 0 <= s["obj"] < 10 and s["value"] in VALUE_INDEX
        assert ("view" in p) == (setting == "view")
        if setting == "view":
            assert p["view"] in ("L", "C", "R")


def test_predictions_are_scored_by_tvr_evaluate(tmp_path):
    """`tvr train` -> predictions.jsonl -> `tvr evaluate` without glue code."""
    pytest.importorskip("tvr.trance.evaluate")
    from tvr.cli import main

    cfg = _config(tmp_path)
    run_dir = train(cfg)
    samples = write_synthetic_samples(
        tmp_path / "samples.jsonl", synthetic_split_records(cfg, "test")
    )
    out = tmp_path / "eval"
    rc = main(
        [
            "evaluate",
            "--samples",
            str(samples),
            "--predictions",
            str(run_dir / "predictions.jsonl"),
            "--setting",
            "event",
            "--out",
            str(out),
        ]
    )
    assert rc == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary  # scored


class _Kill(Callback):
    def on_train_epoch_start(self, trainer, pl_module):
        if trainer.current_epoch == 1:
            raise RuntimeError("killed")


class _StartEpoch(Callback):
    def __init__(self):
        self.epochs = []

    def on_train_epoch_start(self, trainer, pl_module):
        self.epochs.append(trainer.current_epoch)


def test_killed_run_resumes_from_last_checkpoint(tmp_path):
    cfg = _config(tmp_path, epochs=3)
    with pytest.raises(RuntimeError, match="killed"):
        train(cfg, callbacks=[_Kill()])
    run_dir = cfg.run_dir
    assert (run_dir / "checkpoints" / "last.ckpt").exists()
    assert not (run_dir / "predictions.jsonl").exists()
    seen = _StartEpoch()
    train(cfg, callbacks=[seen])
    assert seen.epochs == [1, 2], "the resumed run starts after the last finished epoch"
    rows = _read_csv(run_dir / "metrics.csv")
    assert [int(r["epoch"]) for r in rows] == [0, 1, 2]
    assert (run_dir / "predictions.jsonl").exists()


def test_reinforce_fine_tuning_run(tmp_path):
    base = train(_config(tmp_path, model="cnn+-t", run_name="base"))
    for variant in ("reinforce", "paper"):
        cfg = _config(
            tmp_path,
            model="cnn+-t",
            run_name=f"rl-{variant}",
            reinforce=True,
            reward="both",
            rl_variant=variant,
            epochs=1,
            lr=1e-4,
            init_checkpoint=str(base / "checkpoints" / "last.ckpt"),
        )
        run_dir = train(cfg)
        rows = _read_csv(run_dir / "metrics.csv")
        assert "train/reward" in rows[0]
        assert (run_dir / "predictions.jsonl").exists()
    # the fine-tuned model starts from the base weights
    ckpt = torch.load(base / "checkpoints" / "last.ckpt", map_location="cpu", weights_only=False)
    assert any(k.startswith("model.") for k in ckpt["state_dict"])
