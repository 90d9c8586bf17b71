"""`tvr tranco compare`: two evaluations of the same samples compared sample by sample, with
values computed by hand; bad input gives one line and exit 2."""

import json
import subprocess
import sys

import pytest

from tvr.cli import main

CANDIDATES = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "x"]
REFERENCES = {"s1": ["a", "b"], "s2": ["c", "d", "e"], "s3": ["f", "g"], "s4": ["h", "i", "j"]}
# A: s1, s2 exact; s3 reversed; s4 one of three clips.  B: s1, s3 exact; s2 with d, e swapped;
# s4 a wrong clip
PREDICTIONS_A = {"s1": ["a", "b"], "s2": ["c", "d", "e"], "s3": ["g", "f"], "s4": ["h"]}
PREDICTIONS_B = {"s1": ["a", "b"], "s2": ["c", "e", "d"], "s3": ["f", "g"], "s4": ["x"]}


def _write(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _evaluate(tmp_path, name, predictions, references=REFERENCES):
    samples = _write(tmp_path / f"samples_{name}.jsonl", [
        {"id": k, "clips": v, "candidates": CANDIDATES} for k, v in references.items()
    ])  # fmt: skip
    preds = _write(tmp_path / f"{name}.jsonl",
                   [{"id": k, "clips": v} for k, v in predictions.items()])  # fmt: skip
    out = tmp_path / name
    assert main(["tranco", "evaluate", "--data", str(samples), "--predictions", str(preds),
                 "--out", str(out)]) == 0  # fmt: skip
    return out


def _compare(capsys, *args):
    assert main(["tranco", "compare", *map(str, args)]) == 0
    return capsys.readouterr().out


def test_compare_by_hand(tmp_path, capsys):
    a = _evaluate(tmp_path, "runA", PREDICTIONS_A)
    b = _evaluate(tmp_path, "runB", PREDICTIONS_B)
    capsys.readouterr()
    out = tmp_path / "cmp"
    printed = _compare(capsys, a, b, "--out", out)
    doc = json.loads((out / "compare.json").read_text())
    assert (doc["a"]["label"], doc["b"]["label"], doc["samples"]) == ("runA", "runB", 4)
    rows = {r["metric"]: r for r in doc["metrics"]}
    assert list(rows) == ["R", "P", "KTD", "SD", "NSD", "EMR"]
    emr = rows["EMR"]
    assert (emr["a"], emr["b"], emr["only_a"], emr["only_b"], emr["p"]) == (0.5, 0.5, 1, 1, 1.0)
    # eq2 P = hits / |T|: A [1, 1, 1, 1/3], B [1, 1, 1, 0]: d = [0, 0, 0, 1/3]
    p = rows["P"]
    assert (p["a"], p["b"], p["difference"]) == pytest.approx((10 / 12, 0.75, 1 / 12))
    assert p["p"] == 1.0 and p["test"] == "sign-flip, exact"
    # eq2 KTD (one shared clip scores 1): A [0, 0, 1, 1], B [0, 1/3, 0, 1]
    ktd = rows["KTD"]
    assert (ktd["a"], ktd["b"], ktd["difference"]) == pytest.approx((0.5, 1 / 3, 1 / 6))
    # SD: A [0, 0, 0, 2], B [0, 0, 0, 2]
    assert (rows["SD"]["difference"], rows["SD"]["p"]) == (0.0, 1.0)
    assert doc["emr_by_length"] == [
        {"length": 2, "samples": 2, "a": 0.5, "b": 1.0, "a_only": 0, "b_only": 1, "p": 1.0},
        {"length": 3, "samples": 2, "a": 0.5, "b": 0.0, "a_only": 1, "b_only": 0, "p": 1.0},
    ]
    assert (out / "compare.md").read_text().splitlines() == printed.splitlines()[:-1]
    assert "| KTD | 4 | 0.5000 | 0.3333 | +0.1667 |" in printed
    assert printed.splitlines()[-1] == f"wrote {out}/compare.json, compare.md"

    # prose: P = hits / |T^|: A [1, 1, 1, 1], B [1, 1, 1, 0]; KTD of one shared clip is 0
    prose = json.loads(_compare(capsys, a / "detail.jsonl", b, "--convention", "prose", "--json"))
    rows = {r["metric"]: r for r in prose["metrics"]}
    assert (rows["P"]["a"], rows["P"]["b"]) == (1.0, 0.75)
    assert rows["KTD"]["a"] == pytest.approx(0.25)
    assert prose["a"]["label"] == "runA"  # a detail.jsonl is named after its folder


def test_a_clear_difference_and_the_swap(tmp_path, capsys):
    # six samples: A gets each right, B predicts one wrong clip each time
    references = {f"s{i}": ["a", "b"] if i % 2 else ["c", "d", "e"] for i in range(6)}
    a = _evaluate(tmp_path, "good", references, references)
    b = _evaluate(tmp_path, "bad", {key: ["x"] for key in references}, references)
    capsys.readouterr()
    doc = json.loads(_compare(capsys, f"mine={a}", f"theirs={b}", "--json"))
    rows = {r["metric"]: r for r in doc["metrics"]}
    assert (doc["a"]["label"], doc["b"]["label"]) == ("mine", "theirs")
    # McNemar: 6 discordant samples all one way: 2 / 2^6; sign flips of six equal differences:
    # only the two uniform patterns are as extreme: 2 / 2^6
    assert (rows["EMR"]["only_a"], rows["EMR"]["only_b"]) == (6, 0)
    assert rows["EMR"]["p"] == pytest.approx(2 / 64) and rows["EMR"]["difference"] == 1.0
    assert rows["R"]["p"] == pytest.approx(2 / 64) and rows["R"]["difference"] == 1.0
    assert rows["R"]["low"] == rows["R"]["high"] == 1.0
    swapped = json.loads(_compare(capsys, b, a, "--json"))
    back = {r["metric"]: r for r in swapped["metrics"]}
    assert back["R"]["difference"] == -1.0 and back["R"]["p"] == rows["R"]["p"]
    assert (back["EMR"]["only_a"], back["EMR"]["only_b"]) == (0, 6)
    assert (back["NSD"]["a"], back["NSD"]["b"]) == (rows["NSD"]["b"], rows["NSD"]["a"])


def test_samples_without_a_value_are_left_out_and_counted(tmp_path, capsys):
    a = _evaluate(tmp_path, "runA", PREDICTIONS_A)
    b = _evaluate(tmp_path, "runB", PREDICTIONS_B)
    capsys.readouterr()
    lines = [json.loads(x) for x in (b / "detail.jsonl").read_text().splitlines()]
    lines[1]["eq2"]["KTD"] = None  # s2
    for line in lines:
        line["eq2"]["NSD"] = None
    _write(b / "detail.jsonl", lines)
    doc = json.loads(_compare(capsys, a, b, "--json"))
    rows = {r["metric"]: r for r in doc["metrics"]}
    # KTD on s1, s3, s4: A [0, 1, 1], B [0, 0, 1]
    assert (rows["KTD"]["n"], rows["KTD"]["left_out"]) == (3, 1)
    assert rows["KTD"]["difference"] == pytest.approx(1 / 3)
    assert "NSD" not in rows
    assert doc["notes"] == ["KTD: compared on 3 of 4 samples (1 without a value in A or B)",
                            "NSD: left out, no sample has a value in both A and B"]  # fmt: skip


@pytest.mark.parametrize(
    ("case", "words"),
    [  # a missing or empty evaluation: tests/results/test_compare.py, for every benchmark
        ("other samples", "detail.jsonl, line 5, field 'id': sample 's5' is not in"),
        ("other length", "detail.jsonl, line 4, field 'length': sample 's4' has 2 steps here"),
        ("bad line", "detail.jsonl, line 2, field 'exact': expected true or false"),
    ],
)
def test_bad_input_is_one_line(tmp_path, capsys, case, words):
    a = _evaluate(tmp_path, "runA", PREDICTIONS_A)
    if case == "other samples":
        b = _evaluate(tmp_path, "runB", PREDICTIONS_B, {**REFERENCES, "s5": ["a", "c"]})
    elif case == "other length":
        b = _evaluate(tmp_path, "runB", PREDICTIONS_B, {**REFERENCES, "s4": ["h", "i"]})
    else:
        b = _evaluate(tmp_path, "runB", PREDICTIONS_B)
        lines = (b / "detail.jsonl").read_text().splitlines()
        lines[1] = lines[1].replace('"exact":false', '"exact":0')
        (b / "detail.jsonl").write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert main(["tranco", "compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and words in err and str(b) in err


def test_the_command_exits_2_without_a_traceback(tmp_path):
    a = _evaluate(tmp_path, "runA", PREDICTIONS_A)
    done = subprocess.run([sys.executable, "-m", "tvr", "tranco", "compare", str(a),
                           str(tmp_path / "nowhere")], capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr == f"tvr tranco compare: error: {tmp_path / 'nowhere'}: no such file or folder\n"
