"""The same data named as a folder or as its file is the same input of a guarded --out (issue 42)."""

from __future__ import annotations

import shutil

from tvr.cli import main


def test_a_folder_and_its_samples_file_are_the_same_input(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["sample", "--out", "data/event", "--num", "8", "--quiet"]) == 0
    assert main(["baseline", "oracle", "--data", "data/event/samples.jsonl", "--out", "p.jsonl"]) == 0
    capsys.readouterr()
    args = ["evaluate", "--predictions", "p.jsonl", "--out", "eval"]
    assert main([*args, "--data", "data/event/samples.jsonl"]) == 0
    assert main([*args, "--data", "data/event"]) == 0  # the folder of that file
    assert main([*args, "--data", "./data/../data/event/"]) == 0  # another spelling
    capsys.readouterr()
    # other data is still other inputs
    shutil.copytree("data/event", "other")
    assert main([*args, "--data", "other"]) == 2
    assert "holds results of other inputs (--data was" in capsys.readouterr().err
