"""`tvr vtt compare`: two evaluations of the same split compared description by description,
with values computed by hand; unavailable or differently set metrics left out with a note; bad
input gives one line and exit 2."""

import json
import subprocess
import sys

import pytest

from tvr.cli import main
from tvr.vtt.eval.evaluate import Evaluation, write_evaluation

DESCRIPTIONS = [("s1", 0, "cut onion"), ("s1", 1, "fry onion"), ("s2", 0, "add salt"),
                ("s2", 1, "stir soup"), ("s2", 2, "serve soup")]  # fmt: skip
NO_SPICE = {"available": False, "reason": "no --spice-corenlp"}


def _info(bert_paper=False):
    info = {m: {"available": True, "setting": f"{m} setting"}
            for m in ("BLEU_4", "METEOR", "ROUGE_L", "CIDEr", "BERTScore")}  # fmt: skip
    info["SPICE"] = NO_SPICE
    if not bert_paper:
        info["BERTScore"]["label"] = "not the paper's setting"
    return info


def _write(path, scores, info=None, descriptions=DESCRIPTIONS):
    """An evaluation folder as `tvr vtt evaluate --out` writes it; scores: metric -> values."""
    detail = []
    for i, (sample, index, reference) in enumerate(descriptions):
        row = {"id": sample, "index": index, "n": 2 if sample == "s1" else 3,
               "category": "Dish", "topic": "MakeSoup", "reference": reference,
               "prediction": "x", "missing": False}  # fmt: skip
        for metric, values in scores.items():
            row[metric] = None if values is None else values[i]
        if info and info.get("BERTScore", {}).get("label"):
            row["BERTScore_note"] = info["BERTScore"]["label"]
        detail.append(row)
    summary = {"metric_info": info} if info is not None else {}
    write_evaluation(Evaluation(summary, detail, ["table"]), path)
    if info is None:
        (path / "summary.json").unlink()
    return path


A_SCORES = {"BLEU_4": [100, 50, 0, 20, 40], "METEOR": [30, 30, 30, 30, 30],
            "ROUGE_L": [90, 80, 70, 60, 50], "CIDEr": [400, None, 100, 0, 0],
            "SPICE": None, "BERTScore": [70, 60, 50, 40, 30]}  # fmt: skip
B_SCORES = {"BLEU_4": [50, 50, 0, 10, 0], "METEOR": [30, 30, 30, 30, 30],
            "ROUGE_L": [80, 80, 70, 60, 40], "CIDEr": [100, 50, 100, 0, 0],
            "SPICE": None, "BERTScore": [60, 60, 50, 40, 30]}  # fmt: skip


def _compare(capsys, *args):
    assert main(["vtt", "compare", *map(str, args)]) == 0
    return capsys.readouterr().out


def test_compare_by_hand(tmp_path, capsys):
    a = _write(tmp_path / "ttnet", A_SCORES, _info())
    b = _write(tmp_path / "glacnet", B_SCORES, _info(bert_paper=True))
    out = tmp_path / "cmp"
    printed = _compare(capsys, a, b, "--out", out)
    doc = json.loads((out / "compare.json").read_text())
    assert (doc["a"]["label"], doc["b"]["label"]) == ("ttnet", "glacnet")
    assert (doc["samples"], doc["descriptions"]) == (2, 5)
    rows = {r["metric"]: r for r in doc["metrics"]}
    assert list(rows) == ["BLEU_4", "METEOR", "ROUGE_L", "CIDEr"]
    # BLEU-4: d = [50, 0, 0, 10, 40], mean 20; only the two uniform sign patterns of the three
    # non-zero differences reach |sum| 100: p = 2/8
    bleu = rows["BLEU_4"]
    assert (bleu["n"], bleu["a"], bleu["b"], bleu["difference"]) == (5, 42, 22, 20)
    assert bleu["p"] == pytest.approx(0.25) and bleu["test"] == "sign-flip, exact"
    assert (rows["METEOR"]["difference"], rows["METEOR"]["p"]) == (0, 1)
    # ROUGE-L: d = [10, 0, 0, 0, 10]: both patterns of equal sign reach 20 of the 4: p = 1/2
    assert rows["ROUGE_L"]["p"] == pytest.approx(0.5)
    # CIDEr-D: description 1 of s1 has no value in A: d = [300, 0, 0, 0] on 4
    assert (rows["CIDEr"]["n"], rows["CIDEr"]["left_out"]) == (4, 1)
    assert rows["CIDEr"]["difference"] == 75
    notes = doc["notes"]
    assert notes[0].startswith("CIDEr-D: compared on 4 of 5 descriptions")
    assert notes[1] == ("SPICE: left out, not computed in A and B (A: no --spice-corenlp; "
                        "B: no --spice-corenlp)")  # fmt: skip
    assert notes[2] == ("BERTScore: left out, computed in different settings (A: not the "
                        "paper's setting; B: the paper's setting)")  # fmt: skip
    assert (out / "compare.md").read_text().splitlines() == printed.splitlines()[:-1]
    assert "| BLEU-4 | 5 | 42.00 | 22.00 | +20.00 |" in printed

    swapped = json.loads(_compare(capsys, f"B={b}", f"A={a}", "--json"))
    back = {r["metric"]: r for r in swapped["metrics"]}
    assert (back["BLEU_4"]["a"], back["BLEU_4"]["difference"]) == (22, -20)
    assert back["BLEU_4"]["low"] == pytest.approx(-bleu["high"])
    assert (swapped["a"]["label"], swapped["b"]["label"]) == ("B", "A")


def test_labels_from_the_detail_lines_and_absent_metrics(tmp_path, capsys):
    # detail.jsonl files alone (no summary.json): the BERTScore label comes from the lines; a
    # metric absent from B's lines is not computed there
    a = _write(tmp_path / "a", A_SCORES)
    b = _write(tmp_path / "b", {k: v for k, v in A_SCORES.items() if k != "ROUGE_L"})
    doc = json.loads(_compare(capsys, a / "detail.jsonl", b / "detail.jsonl", "--json"))
    assert [r["metric"] for r in doc["metrics"]] == ["BLEU_4", "METEOR", "CIDEr", "BERTScore"]
    assert all(r["difference"] == 0 and r["p"] == 1 for r in doc["metrics"])
    assert "ROUGE-L: left out, not computed in B (B: no values)" in doc["notes"]

    both = {"label": "not the paper's setting"}
    a = _write(tmp_path / "c", A_SCORES, {**_info(), "BERTScore": {"available": True, **both}})
    b = _write(tmp_path / "d", B_SCORES, {**_info(), "BERTScore": {"available": True, **both}})
    doc = json.loads(_compare(capsys, a, b, "--json"))
    assert {r["metric"]: r["difference"] for r in doc["metrics"]}["BERTScore"] == 2
    assert "BERTScore: not the paper's setting in both" in doc["notes"]


def test_a_metric_with_no_description_scored_by_both_is_left_out(tmp_path, capsys):
    # CIDEr-D has a value in A on description 0 only, in B on description 1 only
    a = _write(tmp_path / "a", {**A_SCORES, "CIDEr": [1, None, None, None, None]}, _info())
    b = _write(tmp_path / "b", {**A_SCORES, "CIDEr": [None, 2, None, None, None]}, _info())
    doc = json.loads(_compare(capsys, a, b, "--json"))
    assert "CIDEr" not in [r["metric"] for r in doc["metrics"]]
    assert doc["notes"][0] == "CIDEr-D: left out, no description has a value in both A and B"


@pytest.mark.parametrize(
    ("case", "words"),
    [  # a missing or empty evaluation: tests/results/test_compare.py, for every benchmark
        ("fewer", "line 5, field 'id': description 2 of 's2' is not in"),
        ("other reference", "line 1, field 'reference': 'chop onion' here, 'cut onion' in"),
        ("bad value", "line 2, field 'BLEU_4': expected a number or null"),
    ],
)
def test_bad_input_is_one_line(tmp_path, capsys, case, words):
    a = _write(tmp_path / "a", A_SCORES, _info())
    b = tmp_path / "b"
    if case == "fewer":
        _write(b, {"BLEU_4": [1, 2, 3, 4]}, None, DESCRIPTIONS[:4])
    elif case == "other reference":
        _write(b, B_SCORES, _info(), [("s1", 0, "chop onion"), *DESCRIPTIONS[1:]])
    else:
        _write(b, {"BLEU_4": [1, "2", 3, 4, 5]}, _info())
    assert main(["vtt", "compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err
    named = a if case == "fewer" else b  # the file that holds the description only one scores
    assert str(named) in err


def test_the_command_exits_2_without_a_traceback(tmp_path):
    a = _write(tmp_path / "a", A_SCORES, _info())
    b = _write(tmp_path / "b", B_SCORES, _info(), [("s9", 0, "x"), *DESCRIPTIONS[1:]])
    done = subprocess.run([sys.executable, "-m", "tvr", "vtt", "compare", str(a), str(b)],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"tvr vtt compare: error: {b / 'detail.jsonl'}, line 1, field 'id': ")
    assert done.stderr.count("\n") == 1
