"""The shared part of `tvr <benchmark> compare` (`tvr.results.compare`): detail files, located
errors, a metric's row and its notes computed by hand, the table and the files written; a missing
or empty evaluation gives one line and exit 2 in every benchmark's command."""

import json
import re
from dataclasses import dataclass

import pytest

from tvr.cli import main
from tvr.core.errors import InputError, UserError
from tvr.results.compare import (
    accuracy_by,
    accuracy_by_table,
    accuracy_row,
    check_same_keys,
    coverage_note,
    default_label,
    detail_file,
    detail_rows,
    heading_lines,
    metric_table,
    number_or_none,
    score_row,
    sides,
    sign_flip_text,
    write_comparison,
)

COMMAND = "tvr x evaluate --out"


def test_detail_files_and_their_labels(tmp_path):
    run = tmp_path / "run1"
    run.mkdir()
    (run / "detail.jsonl").write_text("")
    other = tmp_path / "mine.jsonl"
    other.write_text("")
    assert detail_file(run, COMMAND) == run / "detail.jsonl"
    assert detail_file(other, COMMAND) == other
    assert [default_label(p) for p in (run, run / "detail.jsonl", other)] == [
        "run1",
        "run1",
        "mine",
    ]
    (tmp_path / "empty").mkdir()
    with pytest.raises(
        UserError, match=re.escape("empty: no detail.jsonl in this folder (write it with `tvr x")
    ):
        detail_file(tmp_path / "empty", COMMAND)
    with pytest.raises(UserError, match="nowhere: no such file or folder"):
        detail_file(tmp_path / "nowhere", COMMAND)


@pytest.mark.parametrize(
    ("line", "words"),
    [("[1]", "line 2: expected a JSON object"), ('{"id": 3}', "line 2, field 'id': expected")],
)
def test_detail_lines_are_objects_with_an_id(tmp_path, line, words):
    file = tmp_path / "detail.jsonl"
    file.write_text('{"id": "s1", "x": 1}\n' + line + "\n")
    rows = detail_rows(file)
    assert next(rows) == (1, {"id": "s1", "x": 1})
    with pytest.raises(InputError, match=words):
        next(rows)


def test_number_or_none(tmp_path):
    assert (number_or_none(3, tmp_path, 1, "R"), number_or_none(None, tmp_path, 1, "R")) == (
        3.0,
        None,
    )
    for bad in (True, "2", [1]):
        with pytest.raises(
            InputError, match=re.escape("line 4, field 'eq2.R': expected a number or null")
        ):
            number_or_none(bad, tmp_path, 4, "eq2.R")


@dataclass
class Item:
    line: int


def test_an_item_only_one_side_scores_is_located(tmp_path):
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    check_same_keys((a, {"s1": Item(1)}), (b, {"s1": Item(7)}), repr, "samples")  # no error
    # B's items are checked first: s3 on B's line 2
    with pytest.raises(InputError) as found:
        check_same_keys((a, {"s1": Item(1), "s2": Item(2)}), (b, {"s1": Item(1), "s3": Item(2)}),
                        lambda key: f"sample {key!r}", "samples")  # fmt: skip
    assert str(found.value) == (f"{b}, line 2, field 'id': sample 's3' is not in {a} (the two "
                                "evaluations must score the same samples)")  # fmt: skip
    with pytest.raises(InputError, match=re.escape(f"{a}, line 2, field 'id': 's2' is not in {b}")):
        check_same_keys((a, {"s1": Item(1), "s2": Item(2)}), (b, {"s1": Item(1)}), repr, "split")


def test_a_row_by_hand_and_its_notes():
    # y has no value in A: d = [2, 0, 2] over x, z, w; the two non-zero differences have 4 sign
    # patterns, of which ++ and -- reach |sum| 4: p = 2/4
    a = {"x": 3, "y": None, "z": 1, "w": 2}
    b = {"x": 1, "y": 5, "z": 1, "w": 0}
    row = score_row("BLEU_4", a, b, 2000, 0, name="BLEU-4")
    assert list(row)[:3] == ["metric", "name", "n"]
    assert (row["n"], row["left_out"]) == (3, 1)
    assert (row["a"], row["b"], row["difference"]) == pytest.approx((2, 2 / 3, 4 / 3))
    assert row["p"] == pytest.approx(0.5) and row["test"] == "sign-flip, exact"
    assert 0 <= row["low"] <= row["difference"] <= row["high"] <= 2
    assert score_row("BLEU_4", a, b, 2000, 0) == {k: v for k, v in row.items() if k != "name"}
    assert coverage_note("BLEU-4", row, 4, "description") == (
        "BLEU-4: compared on 3 of 4 descriptions (1 without a value in A or B)")  # fmt: skip
    none = score_row("KTD", {"x": 1, "y": None}, {"x": None, "y": 2}, 100, 0)
    assert none == {"metric": "KTD", "n": 0, "left_out": 2}
    assert coverage_note("KTD", none, 2, "sample") == (
        "KTD: left out, no sample has a value in both A and B")  # fmt: skip
    full = score_row("R", {"x": 1, "y": 0}, {"x": 0, "y": 0}, 100, 0)
    assert coverage_note("R", full, 2, "sample") is None


def test_an_accuracy_row_and_accuracy_by_group_by_hand():
    # right in A: x, y, z; in B: x, w: A only y, z; B only w
    a = {"x": True, "y": True, "z": True, "w": False}
    b = {"x": True, "y": False, "z": False, "w": True}
    row = accuracy_row("Acc", a, b, 2000, 0, name="accuracy")
    assert list(row)[:3] == ["metric", "name", "n"]
    assert (row["n"], row["a"], row["b"], row["difference"]) == (4, 0.75, 0.5, 0.25)
    assert (row["only_a"], row["only_b"], row["left_out"]) == (2, 1, 0)
    assert row["p"] == 1.0 and row["test"] == "McNemar exact"  # 3 discordant: 2 * 4/8 > 1
    assert row["low"] <= 0.25 <= row["high"]
    groups = {"x": 2, "y": 1, "z": 2, "w": 1}
    rows = accuracy_by("steps", groups, a, b)
    assert rows == [
        {"steps": 1, "samples": 2, "a": 0.5, "b": 0.5, "a_only": 1, "b_only": 1, "p": 1.0},
        {"steps": 2, "samples": 2, "a": 1.0, "b": 0.5, "a_only": 1, "b_only": 0, "p": 1.0},
    ]
    assert accuracy_by_table(rows, "steps", "steps")[2] == (
        "| 1 | 2 | 0.5000 | 0.5000 | 1 | 1 | 1.0000 |")  # fmt: skip


def test_the_table_and_the_files(tmp_path):
    rows = [{"metric": "R", "name": "Recall", "n": 5, "a": 0.5, "b": 0.25, "difference": 0.25,
             "low": -0.125, "high": 0.5, "p": 0.00001, "test": "sign-flip, random"}]  # fmt: skip
    assert metric_table(rows) == [
        "| metric | n | A | B | A-B | 95% low | 95% high | p | test |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
        "| R | 5 | 0.5000 | 0.2500 | +0.2500 | -0.1250 | +0.5000 | 1.0e-05 | sign-flip, random |",
    ]
    recall = "| Recall | 5 | 0.50 | 0.25 | +0.25 | -0.12 | +0.50 | 1.0e-05 | sign-flip, random |"
    assert metric_table(rows, name="name", digits=2)[2] == recall

    @dataclass
    class Side:
        label: str
        path: str

    document = {**sides(Side("mine", "a/detail.jsonl"), Side("theirs", "b.jsonl")), "metrics": rows}
    assert document["b"] == {"label": "theirs", "detail": "b.jsonl"}
    assert heading_lines("X", document, "text.") == [
        "# X: mine (A) against theirs (B)",
        "",
        "A: `a/detail.jsonl`; B: `b.jsonl`; text.",
        "",
    ]
    assert sign_flip_text({"resamples": 50, "seed": 3}, "item") == (
        "the sign-flip randomisation test (exact over every sign pattern when at most 16 items "
        "differ, else seeded random patterns); 95%: percentile bootstrap of A-B (50 resamples, "
        "seed 3)")  # fmt: skip
    out = write_comparison(tmp_path / "cmp", document, ["# title", "", "text"])
    assert json.loads((out / "compare.json").read_text()) == document
    assert (out / "compare.md").read_text() == "# title\n\ntext\n"
    (tmp_path / "file").write_text("")
    with pytest.raises(UserError, match=r"--out .*file: cannot create the folder"):
        write_comparison(tmp_path / "file", document, [])


@pytest.mark.parametrize("group", ["tranco", "vtt", "clevrer", "visualtrans"])
@pytest.mark.parametrize(
    ("case", "words"),
    [("missing", "nowhere: no such file or folder"),
     ("empty folder", "empty: no detail.jsonl in this folder")],
)  # fmt: skip
def test_a_missing_or_empty_evaluation_is_one_line(tmp_path, capsys, group, case, words):
    bad = tmp_path / ("nowhere" if case == "missing" else "empty")
    if case == "empty folder":
        bad.mkdir()
    assert main([group, "compare", str(bad), str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and str(bad) in err
    if case == "empty folder":
        assert f"(write it with `tvr {group} evaluate --out`)" in err
