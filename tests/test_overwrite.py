"""No silent overwrite (issue 29): an --out folder holding results of other inputs is refused
unless --overwrite is given; the same inputs again are idempotent (tvr.core.output_record)."""

from __future__ import annotations

import shutil

import pytest

from tests.core.test_input_fuzz import inputs  # noqa: F401  (the shared valid inputs)
from tvr.cli import main
from tvr.core.output_record import RECORD_FILE

#: an evaluation per benchmark: (argv with {P} for the predictions file, the predictions key)
EVALUATIONS = {
    "trance": (["evaluate", "--data", "{trance_samples}", "--predictions", "{P}"],
               "trance_predictions"),
    "tranco": (["tranco", "evaluate", "--data", "{tranco_samples}", "--predictions", "{P}"],
               "tranco_predictions"),
    "clevrer": (["clevrer", "evaluate", "--data", "{clevrer_questions}", "--predictions", "{P}"],
                "clevrer_predictions"),
    "visualtrans": (["visualtrans", "evaluate", "--data", "{visualtrans_data}", "--predictions",
                     "{P}"], "visualtrans_results"),
    "vtt": (["vtt", "evaluate", "--data", "{vtt_records}", "--predictions", "{P}",
             "--no-bertscore"], "vtt_predictions"),
}  # fmt: skip


def _argv(template, inputs, predictions, out):  # noqa: F811
    names = {k: str(v) for k, v in inputs.items()}
    return [a.replace("{P}", str(predictions)).format(**names) if "{" in a else a
            for a in template] + ["--out", str(out)]  # fmt: skip


def _files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir()) if p.is_file()}


@pytest.mark.parametrize("bench", sorted(EVALUATIONS))
def test_same_inputs_are_idempotent_other_inputs_need_overwrite(bench, inputs, tmp_path, capsys):  # noqa: F811
    template, key = EVALUATIONS[bench]
    first = inputs[key]
    other = tmp_path / f"other{first.suffix}"
    shutil.copy(first, other)
    out = tmp_path / "eval"

    assert main(_argv(template, inputs, first, out)) == 0
    assert (out / RECORD_FILE).is_file()
    before = _files(out)
    assert main(_argv(template, inputs, first, out)) == 0  # the same inputs: fine, same results
    after = _files(out)
    assert after.keys() == before.keys()
    capsys.readouterr()

    assert main(_argv(template, inputs, other, out)) == 2  # other predictions: refused
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert "holds results of other inputs (--predictions was" in err[0] and "--overwrite" in err[0]
    assert _files(out) == after  # nothing touched

    assert main([*_argv(template, inputs, other, out), "--overwrite"]) == 0
    assert str(other.resolve()) in (out / RECORD_FILE).read_text()


def test_a_folder_of_other_files_is_refused_and_an_empty_one_is_not(inputs, tmp_path, capsys):  # noqa: F811
    template, key = EVALUATIONS["trance"]
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("my notes")
    assert main(_argv(template, inputs, inputs[key], out)) == 2
    assert "holds files of another command" in capsys.readouterr().err
    assert (out / "notes.txt").read_text() == "my notes" and len(list(out.iterdir())) == 1
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(_argv(template, inputs, inputs[key], empty)) == 0


def test_a_folder_of_another_command_is_refused(inputs, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "eval"
    template, key = EVALUATIONS["trance"]
    assert main(_argv(template, inputs, inputs[key], out)) == 0
    template, key = EVALUATIONS["tranco"]
    assert main(_argv(template, inputs, inputs[key], out)) == 2
    assert "holds the results of `tvr evaluate`" in capsys.readouterr().err


def test_compare_is_guarded_alike(inputs, tmp_path, capsys):  # noqa: F811
    template, key = EVALUATIONS["trance"]
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(_argv(template, inputs, inputs[key], a)) == 0
    assert main(_argv(template, inputs, inputs[key], b)) == 0
    out = tmp_path / "cmp"
    assert main(["compare", f"mine={a}", f"theirs={b}", "--resamples", "50", "--out", str(out)]) == 0
    assert main(["compare", f"mine={a}", f"theirs={b}", "--resamples", "50", "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["compare", f"x={a}", f"y={b}", "--resamples", "50", "--out", str(out)]) == 2
    assert "--overwrite" in capsys.readouterr().err
