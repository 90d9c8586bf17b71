"""`tvr tranco baseline KIND`: the kind is positional."""

import json

import pytest

from tvr.cli import main


def test_kind_is_positional(tmp_path, capsys):
    samples = tmp_path / "samples.jsonl"
    samples.write_text(json.dumps({"id": "s1", "clips": ["a", "b"],
                                   "candidates": ["a", "b", "c", "d"]}) + "\n")  # fmt: skip
    new = tmp_path / "new.jsonl"
    assert main(["tranco", "baseline", "random", "--data", str(samples), "--seed", "2",
                 "--out", str(new)]) == 0  # fmt: skip
    assert "renamed" not in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["tranco", "baseline", "--data", str(samples), "--out", str(new)])
    assert "required: KIND" in capsys.readouterr().err
