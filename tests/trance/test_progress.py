"""The long steps of `tvr render`, `tvr report` (a dataset folder) and `tvr convert` (folders)
show progress bars on stderr, and `--quiet` hides them; stdout keeps only the result lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from tvr.cli import main

pytest.importorskip("moderngl")
pytest.importorskip("PIL")


@pytest.fixture(scope="module")
def dataset(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("progress") / "set"
    assert main(["generate", "--split-sizes", "train=1,val=0,test=2", "--out", str(out),
                 "--preset", "preview", "--image-size", "64x48", "--small-size", "32x32",
                 "--quiet"]) == 0  # fmt: skip
    return out


def _run(argv: list[str], capsys) -> tuple[str, str]:
    capsys.readouterr()
    assert main(argv) == 0
    captured = capsys.readouterr()
    return captured.out, captured.err


QUIET = pytest.mark.parametrize("quiet", [False, True])


def _quiet(quiet: bool) -> list[str]:
    return ["--quiet"] if quiet else []


@QUIET
def test_render_progress(dataset, tmp_path, capsys, quiet):
    out, err = _run(["render", "--data", str(dataset), "--split", "test", "--limit", "1",
                     "--preset", "preview", "--out", str(tmp_path / "png"), *_quiet(quiet)],
                    capsys)  # fmt: skip
    assert out.startswith("rendered 1 samples")
    assert ("rendering" in err) is not quiet, err


@QUIET
def test_report_progress(dataset, tmp_path, capsys, quiet):
    pytest.importorskip("matplotlib")
    out, err = _run(["report", "--data", str(dataset), "--out", str(tmp_path / "report"),
                     "--examples", "1", *_quiet(quiet)], capsys)  # fmt: skip
    assert "report:" in out
    assert ("reading" in err) is not quiet, err


@QUIET
def test_convert_folders_progress(dataset, tmp_path, capsys, quiet):
    release = tmp_path / "release"
    out, err = _run(["convert", "--to-release", str(dataset), "--split", "test", "--out",
                     str(release), *_quiet(quiet)], capsys)  # fmt: skip
    assert out.startswith("wrote 2 samples")
    assert ("exporting" in err) is not quiet, err
    out, err = _run(["convert", "--from-release", str(release), "--out", str(tmp_path / "back"),
                     "--split", "test", "--small-size", "32x32", *_quiet(quiet)],
                    capsys)  # fmt: skip
    assert out.startswith("imported 2 samples")
    assert ("importing" in err) is not quiet, err
