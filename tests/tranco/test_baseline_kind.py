"""`tvr tranco baseline KIND`: the kind is positional; the former `--kind` still works, with one
line on stderr, and gives the same file."""

import json

import pytest

from tvr.cli import main


def test_kind_is_positional_and_the_old_option_still_works(tmp_path, capsys):
    samples = tmp_path / "samples.jsonl"
    samples.write_text(json.dumps({"id": "s1", "clips": ["a", "b"],
                                   "candidates": ["a", "b", "c", "d"]}) + "\n")  # fmt: skip
    new, old = tmp_path / "new.jsonl", tmp_path / "old.jsonl"
    assert main(["tranco", "baseline", "random", "--data", str(samples), "--seed", "2",
                 "--out", str(new)]) == 0  # fmt: skip
    assert "renamed" not in capsys.readouterr().err
    assert main(["tranco", "baseline", "--kind", "random", "--data", str(samples), "--seed", "2",
                 "--out", str(old)]) == 0  # fmt: skip
    assert "--kind is renamed KIND" in capsys.readouterr().err
    assert new.read_text() == old.read_text()
    with pytest.raises(SystemExit):
        main(["tranco", "baseline", "--data", str(samples), "--out", str(new)])
    assert "required: KIND" in capsys.readouterr().err
