"""TrancoNet's training on a tiny dataset: the feature cache (reused, keyed by encoder, stale when
the images change, resumed by part), seeded batches, the train -> predict -> evaluate chain
through the CLI, the encoder-in-the-loop strategies, and resuming a stopped run."""

import csv
import json

import pytest
import torch
from lightning.pytorch.callbacks import Callback

from tests.tranco.tiny_dataset import make_tiny_dataset
from tvr.cli import main
from tvr.tranco.data.dataset import open_dataset
from tvr.tranco.train import features as features_mod
from tvr.tranco.train.checkpoint import load_trained, read_checkpoint
from tvr.tranco.train.config import TrancoTrainConfig
from tvr.tranco.train.data import Collate, TrainingItems
from tvr.tranco.train.features import EncoderRecipe, feature_cache
from tvr.tranco.train.predict import predict_split
from tvr.tranco.train.run import train

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def dataset_root(tmp_path_factory):
    return make_tiny_dataset(tmp_path_factory.mktemp("tranco") / "data")


def _config(root, out, **kw):
    base = dict(data=str(root), model="small-t", epochs=2, batch_size=4, lr=1e-3,
                warmup_steps=0, accelerator="cpu", output_dir=str(out), log_every_n_steps=1)  # fmt: skip
    return TrancoTrainConfig(**{**base, **kw})


def _count_encodes(monkeypatch):
    calls = []
    real = features_mod.encode_paths

    def counting(encoder, paths, *args, **kwargs):
        calls.append(len(paths))
        return real(encoder, paths, *args, **kwargs)

    monkeypatch.setattr(features_mod, "encode_paths", counting)
    return calls


def test_feature_cache_is_reused_and_keyed_by_the_encoder(tmp_path, monkeypatch):
    root = make_tiny_dataset(tmp_path / "data", sizes={"train": 4, "val": 2, "test": 2})
    dataset = open_dataset(root)
    monkeypatch.setattr(features_mod, "PART_SIZE", 16)
    calls = _count_encodes(monkeypatch)
    first = feature_cache(dataset, EncoderRecipe("small"))
    images = len(first.paths)
    assert sum(calls) == images and len(calls) == (images + 15) // 16
    assert torch.allclose(first.features.norm(dim=1), torch.ones(images))
    folders = sorted(p.name for p in (root / "features").iterdir())
    assert len(folders) == 1 and folders[0].startswith("small-") and folders[0].endswith("-crop")
    header = json.loads((root / "features" / folders[0] / "cache.json").read_text())
    assert header["weights_sha256"] == first.weights_sha256 and header["images"] == images

    calls.clear()
    again = feature_cache(dataset, EncoderRecipe("small"))  # read back, nothing encoded
    assert calls == [] and torch.equal(again.features, first.features)

    # another encoder, other weights (seed), GELU or another resize: a cache of its own
    others = [(EncoderRecipe("smallrn"), "crop"), (EncoderRecipe("small", seed=1), "crop"),
              (EncoderRecipe("small", quick_gelu=False), "crop"), (EncoderRecipe("small"), "squash")]  # fmt: skip
    for recipe, resize in others:
        calls.clear()
        other = feature_cache(dataset, recipe, resize)
        assert sum(calls) == images and not torch.equal(other.features, first.features)
    assert len(list((root / "features").iterdir())) == 5

    # a killed run: only the missing part is computed
    folder = root / "features" / folders[0]
    (folder / "part-00001.pt").unlink()
    calls.clear()
    assert torch.equal(feature_cache(dataset, EncoderRecipe("small")).features, first.features)
    assert calls == [16]

    # a dataset rebuilt in place: the cache is stale and computed again
    frame = root / dataset.clips[next(iter(dataset.clips))].frames[0]
    frame.write_bytes((root / dataset.split("train")[0].initial).read_bytes())
    calls.clear()
    changed = feature_cache(dataset, EncoderRecipe("small"))
    assert sum(calls) == images and not torch.equal(changed.features, first.features)


def test_training_batches_are_seeded_per_epoch(dataset_root):
    dataset = open_dataset(dataset_root)
    a = TrainingItems(dataset, k=5, clip_frames=2, seed=7)
    b = TrainingItems(dataset, k=5, clip_frames=2, seed=7)
    assert a[(1, 0)] == b[(1, 0)] and a[(1, 0)] != a[(1, 1)]
    item = a[(1, 0)]
    assert set(item.clips) <= set(item.candidates) and len(item.candidates) == 5
    assert all(len(f) == 2 for f in item.frames)  # 2 of the clips' 3 frames
    batch = Collate({p: i for i, p in enumerate(sorted({item.initial, item.final,
                     *(f for fs in item.frames for f in fs)}))})([item])  # fmt: skip
    targets = batch["targets"][0].tolist()
    assert [item.candidates[t - 1] for t in targets[:-1]] == list(item.clips) and targets[-1] == 0


def test_train_predict_evaluate_chain(dataset_root, tmp_path, capsys):
    out = tmp_path / "runs"
    assert main(["tranco", "train", "--data", str(dataset_root), "--model", "small-g",
                 "--epochs", "2", "--batch-size", "4", "--warmup-steps", "0", "--lr", "1e-3",
                 "--accelerator", "cpu", "--output-dir", str(out), "--quiet"]) == 0  # fmt: skip
    run = out / "small-g-frozen"
    captured = capsys.readouterr()
    text = captured.out
    assert "epoch 2/2" in text and "val EMR" in text
    # no --clip-weights: the frozen encoder is random, and the run says so once (issue 29)
    warned = [line for line in captured.err.splitlines() if "random weights" in line]
    assert len(warned) == 1 and "--clip-weights" in warned[0]
    config = json.loads((run / "config.json").read_text())
    assert config["model"] == "small-g" and config["strategy"] == "frozen"
    with (run / "metrics.csv").open() as f:
        rows = list(csv.DictReader(f))
    assert [r["epoch"] for r in rows] == ["0", "1"] and "val/emr" in rows[0]
    pred = tmp_path / "pred_full.jsonl"
    assert main(["tranco", "predict", "--checkpoint", str(run / "checkpoints" / "best.ckpt"),
                 "--data", str(dataset_root), "--candidates", "full", "--out", str(pred)]) == 0  # fmt: skip
    err = capsys.readouterr().err
    assert "decoding (full)" in err  # progress on stderr, off with --quiet
    assert err.count("random weights") == 1  # the run's frozen encoder had no --clip-weights
    assert main(["tranco", "predict", "--checkpoint", str(run / "checkpoints" / "best.ckpt"),
                 "--data", str(dataset_root), "--out", str(tmp_path / "quiet.jsonl"),
                 "--quiet"]) == 0  # fmt: skip
    assert "decoding" not in capsys.readouterr().err
    samples = dataset_root / "test.jsonl"
    for path, setting in ((run / "predictions_tiny.jsonl", "tiny"), (pred, "full")):
        lines = [json.loads(x) for x in path.read_text().splitlines()]
        assert len(lines) == 3 and all(1 <= len(x["clips"]) <= 7 for x in lines)
        assert main(["tranco", "evaluate", "--data", str(samples), "--predictions", str(path),
                     "--candidates", setting, "--out", str(tmp_path / setting)]) == 0  # fmt: skip
        summary = json.loads((tmp_path / setting / "summary.json").read_text())
        assert summary["setting"] == setting
    assert (run / "predictions_full.jsonl").read_text() == pred.read_text()
    assert "clips outside the candidates 0" in capsys.readouterr().out


@pytest.mark.parametrize("strategy", ["scratch", "finetune"])
def test_encoder_in_the_loop_trains_and_predicts(dataset_root, tmp_path, strategy):
    weights = None
    if strategy == "finetune":
        from tvr.tranco.models.encoders import build_image_encoder

        weights = tmp_path / "clip.pt"
        torch.save(build_image_encoder("small").state_dict(), weights)
    config = _config(dataset_root, tmp_path / "runs", epochs=1, strategy=strategy,
                     clip_weights=str(weights) if weights else None)  # fmt: skip
    run = train(config, epoch_lines=False, predict=False)
    ckpt = read_checkpoint(run / "checkpoints" / "last.ckpt")
    assert any(k.startswith("model.encoder.") for k in ckpt["state_dict"])
    trained = load_trained(run / "checkpoints" / "last.ckpt")
    assert trained.recipe is None and trained.model.encoder is not None
    if weights is not None:  # the encoder moved away from the given weights
        start = torch.load(weights)
        moved = trained.model.encoder.state_dict()
        assert any(not torch.equal(start[k], moved[k]) for k in start)
    predictions = predict_split(trained, open_dataset(dataset_root), "test", "tiny", "cpu")
    assert [p[0] for p in predictions] == ["test000", "test001", "test002"]


class _StopAt(Callback):
    """Fails in the first batch of epoch `epoch`, as a killed run would stop there."""

    def __init__(self, epoch):
        self.epoch = epoch

    def on_train_batch_start(self, trainer, module, batch, batch_idx):
        if trainer.current_epoch == self.epoch:
            raise RuntimeError("stopped")


def test_a_stopped_run_resumes_where_it_left(dataset_root, tmp_path):
    kw = dict(epochs=3, dropout=0.0)
    straight = train(_config(dataset_root, tmp_path / "a", **kw), epoch_lines=False, predict=False)
    stopped_cfg = _config(dataset_root, tmp_path / "b", **kw)
    with pytest.raises(RuntimeError, match="stopped"):
        train(stopped_cfg, callbacks=[_StopAt(1)], epoch_lines=False, predict=False)
    with (stopped_cfg.run_dir / "metrics.csv").open() as f:
        assert len(list(csv.DictReader(f))) == 1
    resumed = train(stopped_cfg, epoch_lines=False, predict=False)
    rows = {}
    for run in (straight, resumed):
        with (run / "metrics.csv").open() as f:
            rows[run] = [(r["epoch"], r["step"], round(float(r["train/loss"]), 5))
                         for r in csv.DictReader(f)]  # fmt: skip
    assert rows[straight] == rows[resumed] and len(rows[straight]) == 3
    a = read_checkpoint(straight / "checkpoints" / "last.ckpt")["state_dict"]
    b = read_checkpoint(resumed / "checkpoints" / "last.ckpt")["state_dict"]
    assert all(torch.allclose(a[k], b[k], atol=1e-6) for k in a)
    with pytest.raises(ValueError, match="holds another run"):
        train(_config(dataset_root, tmp_path / "b", model="small-g", run_name=resumed.name, **kw))
