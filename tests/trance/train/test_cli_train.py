"""`tvr train` and `tvr predict` (their modules; the lead wires them into COMMAND_MODULES)."""

import argparse
import json

import pytest

from tvr.cli import predict as predict_cmd
from tvr.cli import train as train_cmd


def _run(argv):
    parser = argparse.ArgumentParser(prog="tvr")
    sub = parser.add_subparsers(dest="command")
    train_cmd.register(sub)
    predict_cmd.register(sub)
    args = parser.parse_args(argv)
    return args.func(args)


def test_train_then_predict(tmp_path, capsys):
    common = ["--output-dir", str(tmp_path), "--run-name", "r"]
    argv = ["train", "--source", "synthetic", "--model", "cnn+-g", "--setting", "event",
            "--image-size", "40x30",
            "--split-sizes", "train=32,val=8,test=8", "--epochs", "1", "--batch-size", "8",
            "--accelerator", "cpu", *common]  # fmt: skip
    assert _run(argv) == 0
    run_dir = tmp_path / "r"
    config = json.loads((run_dir / "config.json").read_text())
    assert config["image_size"] == [30, 40] and config["model"] == "cnn+-g"
    assert config["synthetic_sizes"] == {"train": 32, "val": 8, "test": 8}
    assert _run(["predict", "--run", str(run_dir), "--out", str(tmp_path / "p.jsonl")]) == 0
    assert (tmp_path / "p.jsonl").read_text() == (run_dir / "predictions.jsonl").read_text()
    assert (
        _run(
            ["predict", "--run", str(run_dir), "--split", "val", "--out", str(tmp_path / "v.jsonl")]
        )
        == 0
    )
    assert len((tmp_path / "v.jsonl").read_text().splitlines()) == 8
    # a config file plus an override
    argv = ["train", "--config", str(run_dir / "config.json"), "--run-name", "r2", "--lr", "0.01"]
    args_ok = train_cmd.config_from_args(_parse(argv))
    assert args_ok.lr == 0.01 and args_ok.image_size == (30, 40) and args_ok.run_name == "r2"
    assert not args_ok.channels_last
    fast = ["train", "--config", str(run_dir / "config.json"), "--precision", "bf16-mixed",
            "--channels-last"]  # fmt: skip
    args_fast = train_cmd.config_from_args(_parse(fast))
    assert args_fast.channels_last and args_fast.precision == "bf16-mixed"
    sized = train_cmd.config_from_args(_parse([*fast, "--train-size", "20"]))
    assert sized.train_size == 20 and args_fast.train_size is None


def _parse(argv):
    parser = argparse.ArgumentParser(prog="tvr")
    sub = parser.add_subparsers(dest="command")
    train_cmd.register(sub)
    return parser.parse_args(argv)


def test_bad_options_are_user_errors(tmp_path, capsys):
    """Each is one line `tvr train: error: ...` (or `tvr predict: ...`), exit status 2."""
    out = ["--output-dir", str(tmp_path)]
    synthetic = ["train", "--source", "synthetic", *out]
    cases = [
        ([*synthetic, "--model", "vgg-g"], "known names"),
        ([*synthetic, "--reinforce"], "init-checkpoint"),
        (["predict", "--run", str(tmp_path / "nothing")], "no such checkpoint"),
        ([*synthetic, "--image-size", "120by160"], "WIDTHxHEIGHT"),
        ([*synthetic, "--train-size", "0"], "positive"),
        ([*synthetic, "--epochs", "zero"], "--epochs"),
        ([*synthetic, "--batch-size", "-8"], "--batch-size"),
        ([*synthetic, "--log-every-n-steps", "0"], "--log-every-n-steps"),
        ([*synthetic, "--translate", "1.5"], "--translate"),
        ([*synthetic, "--accelerator", "tpu"], "--accelerator"),
        ([*synthetic, "--devices", "two"], "--devices"),
        ([*synthetic, "--config", str(tmp_path / "none.json")], "none.json"),
        ([*synthetic, "--setting", "basic", "--reinforce", "--init-checkpoint", "x.ckpt"],
         "x.ckpt"),
        (["predict", "--run", str(tmp_path), "--checkpoint", "x.ckpt"], "not allowed"),
    ]  # fmt: skip
    for argv, expected in cases:
        line = _fail(argv, capsys)
        assert line.startswith(f"tvr {argv[0]}: error: ") and expected in line, (argv, line)
    assert not any(tmp_path.iterdir()), "a failed command wrote a run folder"


def _fail(argv, capsys):
    """Run `tvr ARGV`, expecting a user error: exit 2 and exactly one line on stderr."""
    from tvr.cli import main

    capsys.readouterr()
    try:
        status = main(argv)
    except SystemExit as exit_:  # a bad option, found by argparse
        status = exit_.code
    assert status == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    return err.strip()


def test_the_data_source_follows_data_root(tmp_path, capsys):
    """Issue 15.10: `--data DIR` without `--source trance` trained on the synthetic set."""
    config = train_cmd.config_from_args(_parse(["train", "--data", str(tmp_path / "ds")]))
    assert config.data == "trance" and config.data_root == str(tmp_path / "ds")
    runs = ["--output-dir", str(tmp_path / "runs")]
    # synthetic data is asked for by name; nothing at all is an error that names both ways
    line = _fail(["train", *runs], capsys)
    assert line.startswith("tvr train: error: ")
    assert "--data" in line and "--source synthetic" in line
    line = _fail(["train", "--source", "synthetic", "--data", str(tmp_path), *runs], capsys)
    assert "synthetic" in line and "--data" in line
    line = _fail(["train", "--source", "imagenet", *runs], capsys)
    assert "imagenet" in line and "synthetic" in line and "trance" in line
    line = _fail(["train", "--data", "imagenet", *runs], capsys)  # --data is the folder now
    assert "imagenet: no such dataset folder" in line
    # a root that is no dataset: one line, and no run folder is made
    line = _fail(["train", "--data", str(tmp_path / "missing"), *runs], capsys)
    assert "missing" in line
    release = tmp_path / "release"
    release.mkdir()
    (release / "data.jsonl").write_text("{}\n")
    line = _fail(["train", "--data", str(release), *runs], capsys)
    assert "release" in line and "tvr convert --from-release" in line
    assert not (tmp_path / "runs").exists()
    # --help names the sources and says what each is
    from tvr.cli import main

    with pytest.raises(SystemExit):
        main(["train", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "synthetic:" in text and "trance:" in text and "tvr generate" in text


def test_predict_options_are_user_errors(tmp_path, capsys):
    line = _fail(["predict", "--checkpoint", str(tmp_path / "x.ckpt")], capsys)
    assert line.startswith("tvr predict: error: ") and "x.ckpt" in line


def test_one_line_per_epoch_and_a_progress_bar(tmp_path, capsys):
    """Issue 15.11: the per-epoch line holds the epoch's numbers of metrics.csv; the progress
    bar is shown unless --quiet; --log-every-n-steps is saved in the config."""
    import csv
    import re

    from tvr.cli import main

    argv = ["train", "--source", "synthetic", "--model", "cnn+-g", "--setting", "event",
            "--image-size", "40x30", "--split-sizes", "train=16,val=8,test=8",
            "--epochs", "2", "--batch-size", "8", "--accelerator", "cpu",
            "--output-dir", str(tmp_path), "--log-every-n-steps", "1"]  # fmt: skip
    capsys.readouterr()
    assert main([*argv, "--run-name", "quiet", "--quiet"]) == 0
    out, err = capsys.readouterr()
    run_dir = tmp_path / "quiet"
    assert json.loads((run_dir / "config.json").read_text())["log_every_n_steps"] == 1
    with (run_dir / "metrics.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    pattern = re.compile(
        r"epoch (\d+)/2: train loss (\S+), val loss (\S+), val Acc (\S+), "
        r"[\d.]+ s, ([\d.]+) samples/s"
    )
    lines = [line for line in out.splitlines() if line.startswith("epoch ")]
    assert len(lines) == 2
    for k, (line, row) in enumerate(zip(lines, rows, strict=True)):
        m = pattern.fullmatch(line)
        assert m, line
        assert int(m[1]) == k + 1
        assert float(m[2]) == pytest.approx(float(row["train/loss"]), abs=5e-5)
        assert float(m[3]) == pytest.approx(float(row["val/loss"]), abs=5e-5)
        assert float(m[4]) == pytest.approx(float(row["val/acc"]), abs=5e-5)
        assert float(m[5]) > 0
    assert "Epoch 0" not in out + err  # --quiet: no progress bar
    assert main([*argv, "--run-name", "bar", "--epochs", "1"]) == 0
    out, err = capsys.readouterr()
    assert "Epoch 0" in out + err and len([x for x in out.splitlines() if x.startswith("epoch ")]) == 1


def test_the_model_forms_are_flags_saved_in_the_config():
    from tvr.cli import build_parser
    from tvr.cli.train import config_from_args

    args = build_parser().parse_args(
        ["train", "--source", "synthetic", "--model", "resnet--t", "--decoder-form", "tvr"]
    )
    config = config_from_args(args)
    assert (config.decoder_form, config.duda_form) == ("tvr", "original")
    args = build_parser().parse_args(["train", "--source", "synthetic", "--model", "duda-g"])
    assert config_from_args(args).duda_form == "original"  # the original code's, for new runs
