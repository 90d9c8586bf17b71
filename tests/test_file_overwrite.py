"""Issue 38.6: no silent overwrite of a single output file. A writer whose --out is one file
(solve, baseline, convert, export vlmevalkit, ...) follows the evaluators' rule: the same inputs
again are idempotent, other inputs are refused in one line and the file is kept, --overwrite
replaces it (tvr.core.output_record.guarded_file). Issue 38.7: `tvr solve` of an empty samples
file is refused."""

from __future__ import annotations

import pytest

from tests.visualtrans.make_data import make_visualtrans
from tvr.cli import main


@pytest.fixture(scope="module")
def two_sample_files(tmp_path_factory):
    root = tmp_path_factory.mktemp("files")
    for name, seed in (("a", "0"), ("b", "1")):
        assert main(["sample", "--out", str(root / name), "--num", "3", "--seed", seed,
                     "--quiet"]) == 0  # fmt: skip
    return root / "a" / "samples.jsonl", root / "b" / "samples.jsonl"


def _check_rule(argv_of, out, capsys):
    """argv_of(k): the command on input k (0 and 1 differ); the rule, asserted."""
    assert main(argv_of(0)) == 0
    first = out.read_bytes()
    capsys.readouterr()
    assert main(argv_of(0)) == 0  # the same inputs: idempotent
    assert out.read_bytes() == first and "wrote" in capsys.readouterr().out
    assert main(argv_of(1)) == 2  # other inputs: refused, the file kept
    captured = capsys.readouterr()
    err = captured.err.strip().splitlines()
    assert len(err) == 1 and "--overwrite" in err[0] and str(out) in err[0], err
    assert "wrote" not in captured.out  # a refused run does not say it wrote
    assert out.read_bytes() == first
    assert sorted(p.name for p in out.parent.iterdir() if "tvr-before" in p.name) == []
    assert main([*argv_of(1), "--overwrite"]) == 0
    assert out.read_bytes() != first


def test_solve_over_other_predictions(two_sample_files, tmp_path, capsys):
    out = tmp_path / "pred.jsonl"
    _check_rule(lambda k: ["solve", "--data", str(two_sample_files[k]), "--perception", "gt",
                           "--out", str(out), "--quiet"], out, capsys)  # fmt: skip


def test_baseline_and_convert(two_sample_files, tmp_path, capsys):
    out = tmp_path / "base.jsonl"
    _check_rule(lambda k: ["baseline", "random", "--data", str(two_sample_files[0]), "--seed",
                           str(k), "--out", str(out)], out, capsys)  # fmt: skip
    out = tmp_path / "release.jsonl"
    _check_rule(lambda k: ["convert", "--to-release", str(two_sample_files[k]), "--out",
                           str(out)], out, capsys)  # fmt: skip


def test_export_vlmevalkit_with_other_options(tmp_path, capsys):
    data = make_visualtrans(tmp_path / "vt")[0]
    out = tmp_path / "mcq.tsv"
    _check_rule(lambda k: ["export", "vlmevalkit", "--benchmark", "visualtrans", "--data",
                           str(data), "--out", str(out), *(["--image-paths"] if k else [])],
                out, capsys)  # fmt: skip


def test_solve_refuses_an_empty_samples_file(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    out = tmp_path / "pred.jsonl"
    assert main(["solve", "--data", str(empty), "--perception", "gt", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "empty.jsonl: no samples to solve" in err[0], err
    assert not out.exists()
