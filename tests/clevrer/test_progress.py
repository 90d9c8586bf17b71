"""The long steps of `tvr clevrer report`, `execute` and `nsdr` show progress bars on stderr, and
`--quiet` hides them; stdout keeps only the result lines."""

from __future__ import annotations

import pytest

from tvr.cli import main


def _run(argv: list[str], capsys) -> tuple[str, str]:
    assert main(argv) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


@pytest.mark.parametrize("quiet", [False, True])
def test_clevrer_report_progress(symbolic_set, tmp_path, capsys, quiet):
    pytest.importorskip("matplotlib")
    argv = ["clevrer", "report", "--data", str(symbolic_set), "--out", str(tmp_path / "report"),
            "--videos", "1", *(["--quiet"] if quiet else [])]  # fmt: skip
    out, err = _run(argv, capsys)
    assert "report.md" in out
    for bar in ("question files", "annotations", "videos shown"):
        assert (bar in err) is not quiet, err
        assert bar not in out


@pytest.mark.parametrize("quiet", [False, True])
def test_clevrer_execute_progress(symbolic_set, tmp_path, capsys, quiet):
    argv = ["clevrer", "execute", "--data", str(symbolic_set), "--split", "test",
            "--dynamics", str(symbolic_set / "dynamics"), "--out", str(tmp_path / "answers.json"),
            *(["--quiet"] if quiet else [])]  # fmt: skip
    out, err = _run(argv, capsys)
    assert out.startswith("answered ")
    assert ("executing" in err) is not quiet, err
    assert "executing" not in out


@pytest.mark.parametrize("quiet", [False, True])
def test_clevrer_nsdr_progress(symbolic_set, tmp_path, capsys, quiet):
    argv = ["clevrer", "nsdr", "--data", str(symbolic_set), "--split", "test", "--limit", "1",
            "--out", str(tmp_path / "nsdr"), *(["--quiet"] if quiet else [])]  # fmt: skip
    out, err = _run(argv, capsys)
    for bar in ("scenes", "executing"):
        assert (bar in err) is not quiet, err
    assert "executing" not in out
