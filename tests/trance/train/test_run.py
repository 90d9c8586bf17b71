"""A whole run: train two epochs on a tiny synthetic set, then predictions; resume; REINFORCE."""

import csv
import json

import numpy as np
import pytest
import torch
from lightning.pytorch.callbacks import Callback

from tvr.trance.data.batch import collate
from tvr.trance.train.config import TrainConfig
from tvr.trance.train.data import make_dataset, synthetic_split_records
from tvr.trance.train.run import train
from tvr.trance.train.scoring import basic_scores, event_scores
from tvr.trance.train.synthetic import write_synthetic_samples
from tvr.trance.world.vocab import VALUE_INDEX, VALUES

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
    assert [int(r["batches"]) for r in rows] == [3, 3]
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


def _pred_arrays(preds):
    objs = np.full((len(preds), 4), -1)
    values = np.full((len(preds), 4), 33)
    for i, p in enumerate(preds):
        for k, st in enumerate(p["steps"]):
            objs[i, k], values[i, k] = st["obj"], VALUE_INDEX[st["value"]]
    return objs, values


@pytest.mark.parametrize("setting", ["event", "basic", "view"])
def test_predictions_are_scored_by_tvr_evaluate(tmp_path, setting):
    """`train` -> predictions.jsonl -> `tvr evaluate` without glue code, and the evaluator
    agrees with the validation scoring; the references themselves score Acc 1."""
    pytest.importorskip("tvr.trance.eval.evaluate")
    from tvr.cli import main

    cfg = _config(tmp_path, setting=setting)
    run_dir = train(cfg)
    records = synthetic_split_records(cfg, "test")
    samples = write_synthetic_samples(tmp_path / "samples.jsonl", records)

    def evaluate(pred_path, out):
        args = ["evaluate", "--data", str(samples), "--predictions", str(pred_path)]
        assert main([*args, "--setting", setting, "--out", str(out)]) == 0
        summary = json.loads((out / "summary.json").read_text())
        assert summary["predicted"] == summary["samples"] == len(records)
        assert summary["missing"] == summary["invalid"] == 0
        return summary["metrics"]

    pred_path = run_dir / "predictions.jsonl"
    metrics = evaluate(pred_path, tmp_path / "eval")
    preds = [json.loads(line) for line in pred_path.read_text().splitlines()]
    objs, values = _pred_arrays(preds)
    batch = collate(make_dataset(cfg, "test").examples)
    if setting == "basic":
        mine = basic_scores(
            objs[:, 0], values[:, 0], batch["obj_target"][:, 0].numpy(), batch["options"].numpy()
        )
        assert metrics["Acc"] == pytest.approx(mine.correct.mean())
        assert metrics["ObjAcc"] == pytest.approx(mine.obj.mean())
    else:
        mine = event_scores(
            batch["init_state"].numpy(),
            batch["final_state"].numpy(),
            objs,
            values,
            batch["num_steps"].numpy(),
        )
        assert metrics["Acc"] == pytest.approx(mine.correct.mean())
        assert metrics["AD"] == pytest.approx(mine.distance.mean())
        assert metrics["AND"] == pytest.approx(mine.norm_distance.mean())

    reference = tmp_path / "reference.jsonl"
    with reference.open("w") as f:
        for r in records:
            rec = {"id": r.id, "steps": [{"obj": o, "value": VALUES[v]} for o, v in r.steps]}
            if setting == "view":
                rec["view"] = r.view
            f.write(json.dumps(rec) + "\n")
    assert evaluate(reference, tmp_path / "eval-ref")["Acc"] == 1.0


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


def test_last_checkpoint_is_the_last_epoch_even_when_val_acc_does_not_improve(tmp_path):
    """With lr 0 the weights never change, so val/acc never improves after epoch 0; last.ckpt
    must still be rewritten every epoch (Lightning's own `save_last` is not), and a rerun with
    more epochs goes on after the last one."""
    run_dir = train(_config(tmp_path, epochs=3, lr=0.0))
    ckpt_dir = run_dir / "checkpoints"
    last = torch.load(ckpt_dir / "last.ckpt", map_location="cpu", weights_only=False)
    best = torch.load(ckpt_dir / "best.ckpt", map_location="cpu", weights_only=False)
    assert (last["epoch"], best["epoch"]) == (2, 0)
    seen = _StartEpoch()
    train(_config(tmp_path, epochs=4, lr=0.0), callbacks=[seen])
    assert seen.epochs == [3]


def test_resumed_run_follows_the_new_configs_lr_schedule(tmp_path, caplog):
    """A run made for 2 epochs (lr drop at 1), then extended to 6 (drop at 3), trains epochs 2
    and 3 at the first lr again (1e-3 under the new config) and drops it at epoch 3."""
    cfg = _config(tmp_path, epochs=2)
    run_dir = train(cfg)
    assert [float(r["lr"]) for r in _read_csv(run_dir / "metrics.csv")] == pytest.approx(
        [1e-3, 1e-4]
    )
    seen = _StartEpoch()
    with caplog.at_level("WARNING", logger="tvr.trance.train.module"):
        train(_config(tmp_path, epochs=6), callbacks=[seen])
    assert "schedule other than the checkpoint's" in caplog.text
    assert seen.epochs == [2, 3, 4, 5]
    lrs = [float(r["lr"]) for r in _read_csv(run_dir / "metrics.csv")]
    assert lrs == pytest.approx([1e-3, 1e-4, 1e-3, 1e-4, 1e-4, 1e-4])


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


@pytest.mark.parametrize("channels_last", [False, True])
def test_mixed_precision_run_on_cpu(tmp_path, channels_last):
    """The autocast code paths (used on GPUs) run end to end; bf16 works on CPUs too, with the
    NHWC layout as well (the fast CPU setting), and the config saved says how it ran."""
    cfg = _config(
        tmp_path, model="cnn+-t", precision="bf16-mixed", channels_last=channels_last, epochs=1
    )
    run_dir = train(cfg)
    lines = (run_dir / "predictions.jsonl").read_text().splitlines()
    assert len(lines) == SIZES["test"]
    saved = json.loads((run_dir / "config.json").read_text())
    assert saved["precision"] == "bf16-mixed" and saved["channels_last"] is channels_last


@pytest.mark.parametrize("model", ["resnet+-g", "cnn--t", "duda-g"])
def test_channels_last_is_only_a_memory_layout(model):
    """With the same weights and batch, the NHWC model gives the loss and the greedy steps of
    the default layout; its convolution weights really are NHWC."""
    from tvr.trance.data.batch import images_to_float
    from tvr.trance.train.losses import supervised_loss
    from tvr.trance.train.module import TranceModule, image_layout
    from tvr.trance.train.synthetic import make_synthetic_examples

    torch.manual_seed(0)
    cfg = TrainConfig(model=model, image_size=(30, 40))
    plain = TranceModule(cfg.to_dict())
    nhwc = TranceModule({**cfg.to_dict(), "channels_last": True})
    nhwc.model.load_state_dict(plain.model.state_dict())
    convs = [p for p in nhwc.model.parameters() if p.dim() == 4]
    assert convs and all(p.is_contiguous(memory_format=torch.channels_last) for p in convs)
    assert not all(p.is_contiguous() for p in convs)
    batch = images_to_float(collate(make_synthetic_examples(8, "event", (30, 40), seed=1)))
    losses, steps = [], []
    for module in (plain, nhwc):
        module.eval()
        init, final = image_layout(module.config, batch["init_image"], batch["final_image"])
        with torch.no_grad():
            losses.append(supervised_loss(module.model, batch, init, final)["loss"])
            steps.append(module.model.decode(init, final, batch["objects"]).steps())
    torch.testing.assert_close(losses[0], losses[1], rtol=1e-4, atol=1e-5)
    assert steps[0] == steps[1]


@pytest.mark.parametrize("minutes", [1e-6, 0.02])
def test_max_minutes_stops_fitting_and_still_predicts(tmp_path, minutes):
    """A time limit ends the run long before its 1,000 epochs (each takes well over 1 ms), and
    the run still writes predictions: of the best epoch, or of the current weights when no epoch
    finished (1e-6 minutes)."""
    run_dir = train(_config(tmp_path, epochs=1000, max_minutes=minutes, batch_size=4))
    rows = _read_csv(run_dir / "metrics.csv") if (run_dir / "metrics.csv").exists() else []
    assert len(rows) < 1000
    # every epoch but the last ran all 12 batches; a cut one says how many it ran
    assert all(int(r["batches"]) == 12 for r in rows[:-1])
    assert (run_dir / "predictions.jsonl").exists()
