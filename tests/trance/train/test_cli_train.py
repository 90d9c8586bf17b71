"""`tvr train` and `tvr predict` (their modules; the lead wires them into COMMAND_MODULES)."""

import argparse
import json

import pytest

from tvr.cli import predict as predict_cmd
from tvr.cli import train as train_cmd
from tvr.core.errors import UserError


def _run(argv):
    parser = argparse.ArgumentParser(prog="tvr")
    sub = parser.add_subparsers(dest="command")
    train_cmd.register(sub)
    predict_cmd.register(sub)
    args = parser.parse_args(argv)
    return args.func(args)


def test_train_then_predict(tmp_path, capsys):
    common = ["--output-dir", str(tmp_path), "--run-name", "r"]
    argv = ["train", "--model", "cnn+-g", "--setting", "event", "--image-size", "40x30",
            "--synthetic-sizes", "train=32,val=8,test=8", "--epochs", "1", "--batch-size", "8",
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


def test_bad_options_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="known names"):
        train_cmd.run(_parse(["train", "--model", "vgg-g", "--output-dir", str(tmp_path)]))
    with pytest.raises(UserError, match="init-checkpoint"):
        train_cmd.run(_parse(["train", "--reinforce", "--output-dir", str(tmp_path)]))
    with pytest.raises(UserError, match="no such checkpoint"):
        _run(["predict", "--run", str(tmp_path / "nothing")])
    with pytest.raises(SystemExit):
        _parse(["train", "--image-size", "120by160"])
    with pytest.raises(UserError, match="positive"):
        train_cmd.run(_parse(["train", "--train-size", "0", "--output-dir", str(tmp_path)]))
