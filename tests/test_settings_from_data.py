"""Settings read from the data (issue 29): a samples file with a config.json beside it (or in the
dataset folder above a split) is read under that setting; a contradicting flag is refused."""

from __future__ import annotations

import json
import shutil

import pytest

from tvr.cli import main


@pytest.fixture(scope="module")
def basic(tmp_path_factory):
    """A Basic sample set of `tvr sample` (its config.json says "basic")."""
    root = tmp_path_factory.mktemp("basic")
    assert main(["sample", "--out", str(root), "--num", "12", "--setting", "basic", "--quiet"]) == 0
    return root


def test_basic_samples_are_scored_as_basic_without_the_flag(basic, tmp_path, capsys):
    pred = tmp_path / "oracle.jsonl"
    assert main(["baseline", "oracle", "--data", str(basic), "--out", str(pred)]) == 0
    capsys.readouterr()
    assert main(["evaluate", "--data", str(basic / "samples.jsonl"), "--predictions", str(pred),
                 "--json"]) == 0  # fmt: skip
    summary = json.loads(capsys.readouterr().out)
    assert summary["setting"] == "basic"
    assert "ObjAcc" in summary["metrics"] and summary["metrics"]["Acc"] == 1.0


def test_a_setting_that_contradicts_the_data_is_refused(basic, tmp_path, capsys):
    pred = tmp_path / "oracle.jsonl"
    assert main(["baseline", "oracle", "--data", str(basic), "--out", str(pred)]) == 0
    capsys.readouterr()
    for argv in (["evaluate", "--data", str(basic), "--predictions", str(pred), "--setting", "event",
                  "--out", str(tmp_path / "ev")],
                 ["baseline", "random", "--data", str(basic), "--setting", "view",
                  "--out", str(tmp_path / "r.jsonl")]):  # fmt: skip
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "contradicts" in err[0] and str(basic / "config.json") in err[0]
    assert not (tmp_path / "ev").exists() and not (tmp_path / "r.jsonl").exists()
    # the same setting as the data's is fine
    assert main(["evaluate", "--data", str(basic), "--predictions", str(pred), "--setting",
                 "basic", "--json"]) == 0  # fmt: skip


def test_a_split_of_a_dataset_folder_takes_the_folders_setting(basic, tmp_path, capsys):
    """`tvr generate`'s layout: DIR/config.json and DIR/<split>/samples.jsonl."""
    data = tmp_path / "data"
    (data / "test").mkdir(parents=True)
    shutil.copy(basic / "config.json", data / "config.json")
    shutil.copy(basic / "samples.jsonl", data / "test" / "samples.jsonl")
    pred = tmp_path / "random.jsonl"
    assert main(["baseline", "random", "--data", str(data), "--out", str(pred)]) == 0
    assert all(len(json.loads(line)["steps"]) == 1 for line in pred.read_text().splitlines())
    capsys.readouterr()
    assert main(["evaluate", "--data", str(data), "--split", "test", "--predictions", str(pred),
                 "--json"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out)["setting"] == "basic"
    assert main(["evaluate", "--data", str(data), "--split", "val", "--predictions", str(pred)]) == 2
    assert "looked for samples.jsonl, val/samples.jsonl" in capsys.readouterr().err


def test_samples_without_a_config_take_the_flag(basic, tmp_path, capsys):
    bare = tmp_path / "samples.jsonl"
    shutil.copy(basic / "samples.jsonl", bare)
    pred = tmp_path / "oracle.jsonl"
    assert main(["baseline", "oracle", "--data", str(bare), "--setting", "basic",
                 "--out", str(pred)]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["evaluate", "--data", str(bare), "--predictions", str(pred), "--setting", "basic",
                 "--json"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out)["setting"] == "basic"
