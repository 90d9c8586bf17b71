"""Issue 38.5 and 38.7: `tvr export hf` / `lmms-eval` that fail (a torn line, the wrong
--benchmark) or are interrupted leave nothing that blocks the same command again (the export is
built beside --out and moved into place whole); an empty samples file is refused; a samples file
without images says which image columns are null."""

from __future__ import annotations

import os

import pytest

pytest.importorskip("datasets")
pytest.importorskip("pyarrow")

from tvr.cli import main

os.environ["HF_HUB_OFFLINE"] = "1"


@pytest.fixture(scope="module")
def samples(tmp_path_factory):
    out = tmp_path_factory.mktemp("export") / "s"
    assert main(["sample", "--out", str(out), "--num", "3", "--quiet"]) == 0
    return out / "samples.jsonl"


def _names(folder):
    return sorted(p.name for p in folder.iterdir() if not p.name.endswith(".tvr-lock"))


def _export(fmt, data, out, capsys, benchmark="trance"):
    capsys.readouterr()
    status = main(["export", fmt, "--benchmark", benchmark, "--data", str(data), "--out",
                   str(out), "--quiet"])  # fmt: skip
    return status, capsys.readouterr().err


@pytest.mark.parametrize("fmt", ["hf", "lmms-eval"])
def test_a_failed_export_leaves_nothing_and_the_rerun_works(fmt, samples, tmp_path, capsys):
    torn = tmp_path / "torn.jsonl"
    text = samples.read_text()
    torn.write_text(text + text.splitlines()[0][:40])
    out = tmp_path / "out"
    status, err = _export(fmt, torn, out, capsys)
    assert status == 2 and "torn.jsonl, line 4" in err
    assert _names(tmp_path) == ["torn.jsonl"]  # no OUT, no stage beside it
    status, err = _export(fmt, samples, out, capsys, benchmark="vtt")  # the wrong --benchmark
    assert status == 2 and _names(tmp_path) == ["torn.jsonl"]
    torn.write_text(text)  # the same command, now on a whole file
    assert _export(fmt, torn, out, capsys)[0] == 0
    assert "README.md" in _names(out) or "utils.py" in _names(out)
    first = sorted(str(p.relative_to(out)) for p in out.rglob("*"))
    assert _export(fmt, torn, out, capsys)[0] == 0  # the same inputs again: idempotent
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*")) == first
    # hf keeps its record of inputs beside the folder it uploads as it is
    beside = [".out.tvr-inputs.json"] if fmt == "hf" else []
    assert _names(tmp_path) == [*beside, "out", "torn.jsonl"]


def test_an_interrupted_export_leaves_the_former_one(samples, tmp_path, capsys, monkeypatch):
    import tvr.trance.hf_export as trance_export

    out = tmp_path / "out"
    calls = {"n": 0}
    real = trance_export.image

    def interrupt(path):
        calls["n"] += 1
        if calls["n"] == 6:
            raise KeyboardInterrupt
        return real(path)

    monkeypatch.setattr(trance_export, "image", interrupt)
    status, err = _export("hf", samples, out, capsys)
    assert status == 130 and "interrupted" in err
    assert _names(tmp_path) == []
    monkeypatch.setattr(trance_export, "image", real)
    assert _export("hf", samples, out, capsys)[0] == 0
    before = (out / "README.md").read_text()
    calls["n"] = 0
    monkeypatch.setattr(trance_export, "image", interrupt)
    assert _export("hf", samples, out, capsys)[0] == 130
    assert (out / "README.md").read_text() == before and _names(tmp_path) == [".out.tvr-inputs.json", "out"]


def test_the_empty_folders_of_an_older_failed_export_do_not_block(samples, tmp_path, capsys):
    out = tmp_path / "out"
    (out / "data" / "event").mkdir(parents=True)  # what a failed export of tvr 0.x left
    assert _export("hf", samples, out, capsys)[0] == 0


def test_an_empty_samples_file_is_refused(tmp_path, capsys):
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    for fmt in ("hf", "lmms-eval"):
        status, err = _export(fmt, empty, tmp_path / "out", capsys)
        assert status == 2 and "nothing to export" in err and len(err.strip().splitlines()) == 1
        assert not (tmp_path / "out").exists()


def test_samples_without_images_name_the_null_columns(samples, tmp_path, capsys):
    status, err = _export("hf", samples, tmp_path / "out", capsys)
    assert status == 0
    assert "event/test: no image files found" in err
    assert "init_C, fin_L, fin_C, fin_R are null in every row" in err


def test_the_hf_folder_holds_no_local_paths(tmp_path, capsys):
    """The record of inputs (absolute paths) stays beside the folder a user uploads (issue 42)."""
    from tvr.cli import main

    assert main(["sample", "--out", str(tmp_path / "s"), "--num", "6", "--quiet"]) == 0
    out = tmp_path / "hf"
    argv = ["export", "hf", "--benchmark", "trance", "--data", str(tmp_path / "s"), "--out",
            str(out), "--quiet"]  # fmt: skip
    assert main(argv) == 0
    assert main(argv) == 0  # the same inputs again: idempotent, through the record beside it
    capsys.readouterr()
    inside = [p for p in out.rglob("*") if p.is_file()]
    assert not [p for p in inside if p.name.startswith(".")], inside
    assert not [p for p in inside if str(tmp_path) in p.read_bytes().decode("latin-1")
                and p.suffix != ".parquet"], inside  # fmt: skip
    assert (tmp_path / ".hf.tvr-inputs.json").is_file()
