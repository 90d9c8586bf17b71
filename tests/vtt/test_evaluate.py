"""Prediction files, their alignment with the records, and `tvr vtt evaluate` end to end on a tiny
records file: summary.json, detail.jsonl, the table with Table 2's anchors, the labels."""

import json

import pytest

from tests.vtt.samples import needs_java, sample_id, small_records, write_lines
from tvr.cli import main
from tvr.core.errors import InputError
from tvr.vtt.data.predictions import read_predictions
from tvr.vtt.data.records import read_records
from tvr.vtt.eval.evaluate import align


@pytest.mark.parametrize(
    ("line", "field", "words"),
    [
        ([1, 2], None, "JSON object"),
        ({"transformations": []}, "id", "sample id"),
        ({"id": "a"}, "transformations", "missing"),
        ({"id": "a", "transformations": "flip"}, "transformations", "list of descriptions"),
        ({"id": "a", "transformations": ["flip", None]}, "transformations[1]", "a string"),
        ({"id": "b", "transformations": []}, "id", "also the id of line 1"),
    ],
)
def test_bad_predictions_are_named(tmp_path, line, field, words):
    path = write_lines(tmp_path / "p.jsonl", [{"id": "b", "transformations": ["x"]}, line])
    with pytest.raises(InputError) as err:
        read_predictions(path)
    assert (err.value.line, err.value.field) == (2, field)
    assert words in err.value.reason


def test_alignment_counts_missing_extra_and_ignored(tmp_path):
    records = read_records(write_lines(tmp_path / "vtt.jsonl", small_records()))
    predictions = read_predictions(write_lines(tmp_path / "p.jsonl", [
        {"id": sample_id(0), "transformations": ["put steak on grill", "  "]},
        {"id": sample_id(1), "transformations": ["add cream", "pour coffee", "stir", "drink"]},
        {"id": sample_id(3), "transformations": ["peel mango"]},
        {"id": "0123456789abcdef", "transformations": []},
    ]))  # fmt: skip
    aligned = align(records, predictions, "test")
    assert aligned.hypotheses == ["put steak on grill", "", "", "add cream", "pour coffee", ""]
    assert aligned.references[:2] == ["put steak on grill", "flip steak"]
    assert aligned.counts == {
        "samples": 3, "descriptions": 6, "missing_samples": 1, "missing_descriptions": 3,
        "extra_descriptions": 2, "other_split_predictions": 1, "unknown_predictions": 1,
    }  # fmt: skip
    assert [r["missing"] for r in aligned.rows] == [False, True, True, False, False, True]


@needs_java
def test_evaluate_end_to_end(tmp_path, capsys):
    records = write_lines(tmp_path / "vtt.jsonl", small_records())
    predictions = write_lines(tmp_path / "preds.jsonl", [
        {"id": sample_id(0), "transformations": ["put steak on grill", "flip steak",
                                                 "remove steak"]},
        {"id": sample_id(1), "transformations": ["add cream"]},  # its second one is missing
        {"id": sample_id(2), "transformations": ["slice the mango"]},
    ])  # fmt: skip
    out = tmp_path / "eval"
    code = main(["vtt", "evaluate", "--data", str(records), "--predictions", str(predictions),
                 "--out", str(out)])  # fmt: skip
    assert code == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    assert (summary["samples"], summary["descriptions"]) == (3, 6)
    assert summary["missing"] == {"samples": 0, "descriptions": 1}
    m = summary["metrics"]
    assert m["SPICE"] is None and not summary["metric_info"]["SPICE"]["available"]
    bert = summary["metric_info"]["BERTScore"]
    if bert["available"]:  # the offline default is installed: labelled in every output
        assert bert["label"] == "not the paper's setting" and not bert["paper_setting"]
        assert any("not the paper's setting" in note for note in summary["notes"])
        assert "not the paper's setting" in printed and "†" in printed
    detail = [json.loads(x) for x in (out / "detail.jsonl").read_text().splitlines()]
    assert len(detail) == 6
    exact, missing = detail[:3], detail[4]
    for row in exact:  # a perfect description: ROUGE-L and METEOR 100
        assert row["ROUGE_L"] == pytest.approx(100) and row["METEOR"] == pytest.approx(100)
    # BLEU-4 with method 7: a perfect 4-word description scores above 100, a 2-word one below
    assert exact[0]["BLEU_4"] == pytest.approx(101.0629663, abs=1e-6)
    assert 0 < exact[1]["BLEU_4"] < 100
    assert missing["missing"] and missing["prediction"] == ""
    for name in ("BLEU_4", "METEOR", "ROUGE_L", "CIDEr"):
        assert missing[name] == 0.0
        assert m[name] == pytest.approx(sum(r[name] for r in detail) / 6)
    if bert["available"]:
        assert missing["BERTScore"] == 0.0  # raw F1 0, not rescaled offline
        assert all(r["BERTScore_note"] == "not the paper's setting" for r in detail)
    by_n = summary["by_transformations"]
    assert list(by_n) == ["1", "2", "3"]
    assert by_n["3"]["ROUGE_L"] == pytest.approx(100)
    assert by_n["2"]["descriptions"] == 2 and by_n["2"]["samples"] == 1
    assert set(summary["by_category"]) == {"Dish", "Drink and Snack", "Pets and Fruit"}
    assert summary["paper"]["rows"]["TTNet"]["CIDEr"] == 570.63
    table = (out / "table.md").read_text()
    for text in ("ours: preds.jsonl", "TTNet (paper)", "570.63", "GLACNet* (paper)",
                 "Gemini-1.5 (paper)", "Human (paper)", "82.26", "SPICE unavailable",
                 "by transformations", "by category"):  # fmt: skip
        assert text in table and text in printed
    ours = next(line for line in printed.splitlines() if line.startswith("ours: preds.jsonl"))
    assert ours.split()[6] == "n/a"  # SPICE, never 0
    assert f"{m['CIDEr']:.2f}" in ours


@needs_java
def test_perfect_copies_show_the_paper_and_the_standard_bleu(tmp_path, capsys):
    """Issue 42: exact copies of 7- and 12-word references score B@4 111.67 in the paper's
    convention (NLTK method 7, what the released metrics.py computes); the table says that its
    B@4 is the paper's and gives the standard one (100.00)."""
    from tests.vtt.samples import record

    seven = "put the steak on the hot grill"
    twelve = "pour the warm coffee into the glass and then add the whipped cream"
    records = write_lines(tmp_path / "vtt.jsonl", [record(0, [seven]), record(1, [twelve])])
    predictions = write_lines(tmp_path / "p.jsonl", [{"id": sample_id(0), "transformations": [seven]},
                                                     {"id": sample_id(1), "transformations": [twelve]}])  # fmt: skip
    out = tmp_path / "eval"
    assert main(["vtt", "evaluate", "--data", str(records), "--predictions", str(predictions),
                 "--out", str(out), "--no-bertscore"]) == 0  # fmt: skip
    printed = capsys.readouterr().out.splitlines()
    m = json.loads((out / "summary.json").read_text())["metrics"]
    assert round(m["BLEU_4"], 2) == 111.67 and m["BLEU_4_standard"] == pytest.approx(100)
    header = next(i for i, x in enumerate(printed) if x.startswith("model"))
    assert "B@4 (paper)" in printed[header]
    assert any("standard B@4 (method 3, at most 100): 100.00" in x for x in printed)
    assert printed[header - 1].startswith("missing (scored as empty): 0 descriptions")


def test_evaluate_input_errors_are_one_line(tmp_path, capsys):
    records = write_lines(tmp_path / "vtt.jsonl", small_records())
    bad = write_lines(tmp_path / "bad.jsonl", [{"id": sample_id(0), "transformations": [3]}])
    other = write_lines(tmp_path / "other.jsonl", [{"id": sample_id(3), "transformations": ["a"]}])
    good = write_lines(tmp_path / "good.jsonl", [{"id": sample_id(0), "transformations": ["a"]}])
    cases = [
        (["--predictions", str(bad)], f"{bad}, line 1, field 'transformations[0]': expected a string"),
        (["--predictions", str(other)], "none of its 1 ids is a test sample of "),
        (["--predictions", str(other)], "1 of them are train ids: predictions for another split? "
                                        "(score them with --split train)"),
        (["--predictions", str(good), "--split", "val"], "no val samples"),
        (["--predictions", str(good), "--bertscore-model", str(tmp_path / "roberta")],
         "--bertscore-model"),
        (["--predictions", str(good), "--spice-corenlp", str(tmp_path)], "--spice-corenlp"),
        (["--predictions", str(tmp_path / "absent.jsonl")], "absent.jsonl: no such file"),
    ]  # fmt: skip
    for extra, words in cases:
        assert main(["vtt", "evaluate", "--data", str(records), *extra]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("tvr vtt evaluate: error: ") and words in err
        assert "\n" not in err and "Traceback" not in err
