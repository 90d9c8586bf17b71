"""A run never writes into another run's folder; a fine-tune reads its model from the checkpoint."""

import hashlib
import json

import pytest

from tvr.cli import main
from tvr.trance.train.config import TrainConfig
from tvr.trance.train.run import train

TINY = ["--image-size", "40x30", "--split-sizes", "train=16,val=8,test=8",
        "--batch-size", "8", "--accelerator", "cpu", "--quiet"]  # fmt: skip


def _digests(folder):
    """sha256 of every file under `folder`, by relative path."""
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def _fail(argv, capsys):
    """Run `tvr ARGV`, expecting a user error: exit 2 and exactly one line on stderr."""
    capsys.readouterr()
    try:
        status = main(argv)
    except SystemExit as exit_:  # a bad option, found by argparse
        status = exit_.code
    assert status == 2
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A one-epoch supervised run in its default folder, runs/event-cnn+-g (40x30, synthetic)."""
    runs = tmp_path_factory.mktemp("runs")
    argv = ["train", "--source", "synthetic", "--model", "cnn+-g", "--setting", "event",
            "--epochs", "1", "--output-dir", str(runs), *TINY]  # fmt: skip
    assert main(argv) == 0
    return runs / "event-cnn+-g"


def test_reinforce_without_run_name_gets_a_folder_of_its_own(base, capsys):
    """Issue 15.8: the fine-tune used to resume from the base run's last.ckpt (ignoring
    --init-checkpoint) and overwrite its config.json, metrics.csv and predictions.jsonl."""
    before = _digests(base)
    ckpt = base / "checkpoints" / "last.ckpt"
    argv = ["train", "--reinforce", "--init-checkpoint", str(ckpt), "--model", "cnn+-g",
            "--setting", "event", "--epochs", "1", "--output-dir", str(base.parent), *TINY]  # fmt: skip
    assert main(argv) == 0
    assert _digests(base) == before, "the base run's folder was written into"
    tuned = base.parent / "event-cnn+-g-reinforce-both"
    config = json.loads((tuned / "config.json").read_text())
    assert config["reinforce"] and config["init_checkpoint"] == str(ckpt)
    # it started from the checkpoint (epoch 0 of its own), not from the base's last epoch
    rows = (tuned / "metrics.csv").read_text().splitlines()
    assert len(rows) == 2 and rows[1].startswith("0,") and "train/reward" in rows[0]
    assert (tuned / "predictions.jsonl").exists()
    assert f"run folder: {tuned}" in capsys.readouterr().out
    # the paper variant and another reward are other runs, so other folders
    cfg = TrainConfig.load(tuned / "config.json")
    cfg.run_name, cfg.rl_variant, cfg.reward = None, "paper", "corr"
    assert cfg.run_dir.name == "event-cnn+-g-reinforce-paper-corr"


def test_a_folder_of_another_run_is_never_written_into(tmp_path):
    cfg = TrainConfig(model="cnn+-g", image_size=(30, 40), epochs=1, batch_size=8,
                      synthetic_sizes={"train": 16, "val": 8, "test": 8},
                      output_dir=str(tmp_path), run_name="run")  # fmt: skip
    run_dir = train(cfg)
    before = _digests(run_dir)
    other = TrainConfig.from_dict({**cfg.to_dict(), "model": "cnn--g"})
    with pytest.raises(ValueError, match=r"run.*model.*cnn\+-g.*cnn--g.*--run-name"):
        train(other)
    other.resume = False  # starting over does not make it this run's folder either
    with pytest.raises(ValueError, match="model"):
        train(other)
    seeded = TrainConfig.from_dict({**cfg.to_dict(), "seed": 7})
    with pytest.raises(ValueError, match="seed"):
        train(seeded)
    assert _digests(run_dir) == before
    # a folder that holds something else's config.json is no run of ours
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "config.json").write_text('{"format": "tvr.trance.store/1"}\n')
    with pytest.raises(ValueError, match="not the config of a training run"):
        train(TrainConfig.from_dict({**cfg.to_dict(), "run_name": "data"}))
    # the same run with more epochs (a setting a resume may change) goes on in its folder
    longer = TrainConfig.from_dict({**cfg.to_dict(), "epochs": 2})
    assert train(longer) == run_dir
    assert len((run_dir / "metrics.csv").read_text().splitlines()) == 3


def test_the_model_comes_from_the_init_checkpoint(base, tmp_path, capsys):
    """Issue 15.9: without --model the default resnet--g met the cnn+-g weights (a raw
    RuntimeError, size mismatch)."""
    ckpt = str(base / "checkpoints" / "best.ckpt")
    common = ["--epochs", "1", "--batch-size", "8", "--accelerator", "cpu", "--quiet",
              "--output-dir", str(tmp_path)]  # fmt: skip
    # no --model, --setting, --image-size or data options: all from the checkpoint's run
    assert main(["train", "--init-checkpoint", ckpt, "--run-name", "ft", *common]) == 0
    config = json.loads((tmp_path / "ft" / "config.json").read_text())
    assert (config["model"], config["setting"], config["image_size"]) == ("cnn+-g", "event", [30, 40])
    assert (config["data"], config["synthetic_sizes"]) == ("synthetic", {"train": 16, "val": 8, "test": 8})
    # asking for another architecture is one line naming both
    line = _fail(["train", "--init-checkpoint", ckpt, "--model", "resnet--g", *common], capsys)
    assert line.startswith("tvr train: error: ") and "cnn+-g" in line and "resnet--g" in line
    line = _fail(["train", "--init-checkpoint", ckpt, "--image-size", "64x48", *common], capsys)
    assert "40x30" in line and "64x48" in line
    line = _fail(["train", "--init-checkpoint", str(tmp_path / "nope.ckpt"), *common], capsys)
    assert "nope.ckpt" in line
    junk = tmp_path / "junk.ckpt"
    junk.write_text("not a checkpoint\n")
    line = _fail(["train", "--init-checkpoint", str(junk), *common], capsys)
    assert "junk.ckpt" in line and "checkpoint" in line
    assert not (tmp_path / "event-resnet--g").exists() and not (tmp_path / "event-cnn+-g").exists()
    # tvr predict reads the same checkpoints with the same one-line errors
    line = _fail(["predict", "--checkpoint", str(junk)], capsys)
    assert line.startswith("tvr predict: error: ") and "junk.ckpt" in line
