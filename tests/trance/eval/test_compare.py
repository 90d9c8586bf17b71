"""`tvr compare`: two TRANCE evaluations of the same samples compared sample by sample (an
evaluation against itself differs by 0, the oracle beats the random baseline, values by hand
on made-up detail lines); bad input gives one line and exit 2."""

import json
import subprocess
import sys

import pytest

from tvr.cli import main
from tvr.core.jsonl import write_jsonl
from tvr.trance.data.files import write_samples
from tvr.trance.eval.baselines import predict
from tvr.trance.eval.compare import compare_evaluations, read_detail
from tvr.trance.eval.evaluate import evaluate_files
from tvr.trance.sampling.sampler import SamplerConfig, ShardSampler

N = 12


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Evaluation folders of the oracle and the random baseline in each setting."""
    root = tmp_path_factory.mktemp("trance-compare")
    out = {}
    for i, setting in enumerate(("basic", "event", "view")):
        steps = 1 if setting == "basic" else 4
        sampler = ShardSampler(SamplerConfig(max_steps=steps, occlusion=False), seed=i, shard=0)
        samples = [sampler.sample(k) for k in range(N)]
        write_samples(root / f"{setting}.jsonl", samples)
        for name in ("oracle", "random"):
            predictions = root / f"{setting}-{name}.jsonl"
            write_jsonl(predictions, predict(name, samples, setting, seed=1))
            folder = root / f"{setting}-{name}"
            evaluate_files(root / f"{setting}.jsonl", predictions, setting, folder)
            out[setting, name] = folder
    return out


def _compare(capsys, *args):
    capsys.readouterr()
    assert main(["compare", *map(str, args)]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("setting", ["basic", "event", "view"])
def test_an_evaluation_against_itself_differs_by_nothing(runs, capsys, setting):
    run = runs[setting, "random"]
    doc = json.loads(_compare(capsys, run, run / "detail.jsonl", "--json"))
    assert doc["setting"] == setting and doc["benchmark"] == "trance"
    assert doc["samples"] == N * (3 if setting == "view" else 1)
    rows = {r["metric"]: r for r in doc["metrics"]}
    expected = ["ObjAcc", "AttrAcc", "ValAcc", "Acc"] if setting == "basic" else [
        "AD", "AND", "LAcc", "Acc"]  # fmt: skip
    assert list(rows) == expected
    for r in rows.values():
        assert r["difference"] == 0 and r["a"] == r["b"] and r["p"] == 1.0
        assert r["low"] == r["high"] == 0
    summary = json.loads((run / "summary.json").read_text())["metrics"]
    for metric in expected:
        assert rows[metric]["a"] == pytest.approx(summary[metric])


@pytest.mark.parametrize("setting", ["basic", "event", "view"])
def test_the_oracle_beats_the_random_baseline(runs, capsys, tmp_path, setting):
    oracle, random = runs[setting, "oracle"], runs[setting, "random"]
    out = tmp_path / "cmp"
    printed = _compare(capsys, f"oracle={oracle}", random, "--out", out)
    doc = json.loads((out / "compare.json").read_text())
    assert (doc["a"]["label"], doc["b"]["label"]) == ("oracle", f"{setting}-random")
    rows = {r["metric"]: r for r in doc["metrics"]}
    acc = rows["Acc"]
    assert acc["a"] == 1.0 and acc["difference"] > 0 and acc["only_b"] == 0
    assert acc["only_a"] == round(acc["difference"] * acc["n"])
    assert acc["test"] == "McNemar exact"
    if setting != "basic":
        assert rows["AD"]["difference"] < 0 and rows["AD"]["test"].startswith("sign-flip")
        assert doc["lower_is_better"] == ["AD", "AND"]
        assert sum(r["samples"] for r in doc["acc_by_steps"]) == doc["samples"]
        assert all(r["a"] == 1.0 for r in doc["acc_by_steps"])
        assert doc["order_sensitive"]["a"]["EO"] in (0.0, None)
    else:
        assert {r["attribute"] for r in doc["acc_by_attribute"]} <= {
            "color", "material", "position", "shape", "size"}  # fmt: skip
    if setting == "view":
        assert [r["view"] for r in doc["acc_by_view"]] == ["C", "L", "R"]
    assert (out / "compare.md").read_text().splitlines() == printed.splitlines()[:-1]
    assert printed.splitlines()[0] == f"# TRANCE: oracle (A) against {setting}-random (B)"
    assert printed.splitlines()[-1] == f"wrote {out}/compare.json, compare.md"
    # the swap changes the sign, not the p-value
    back = {
        r["metric"]: r for r in json.loads(_compare(capsys, random, oracle, "--json"))["metrics"]
    }
    assert back["Acc"]["difference"] == -acc["difference"] and back["Acc"]["p"] == acc["p"]
    assert (back["Acc"]["only_a"], back["Acc"]["only_b"]) == (0, acc["only_a"])


def _line(sid, correct, loose, distance, steps=2, order=False):
    return {"id": sid, "num_steps": steps, "reference": [], "prediction": None,
            "correct": correct, "loose_correct": loose, "distance": distance,
            "norm_distance": distance / steps, "broken_rule": None, "order_sensitive": order}  # fmt: skip


def test_made_up_detail_lines_by_hand(tmp_path):
    a = tmp_path / "a.jsonl"
    b = tmp_path / "b.jsonl"
    write_jsonl(a, [_line("s1", True, True, 0), _line("s2", True, True, 0, order=True),
                    _line("s3", False, True, 0, 3, True), _line("s4", False, False, 2)])  # fmt: skip
    write_jsonl(b, [_line("s1", True, True, 0), _line("s2", False, True, 0, order=True),
                    _line("s3", False, False, 4, 3, True), _line("s4", False, False, 4)])  # fmt: skip
    doc = compare_evaluations(read_detail(a), read_detail(b), 2000, 0)
    assert (doc["setting"], doc["a"]["label"], doc["samples"]) == ("event", "a", 4)
    rows = {r["metric"]: r for r in doc["metrics"]}
    assert (rows["Acc"]["a"], rows["Acc"]["b"], rows["Acc"]["only_a"]) == (0.5, 0.25, 1)
    assert (rows["LAcc"]["a"], rows["LAcc"]["b"]) == (0.75, 0.5)
    # AD: A [0, 0, 0, 2], B [0, 0, 4, 4]: d = [0, 0, -4, -2]; 4 sign patterns, 2 as extreme
    assert (rows["AD"]["difference"], rows["AD"]["p"]) == (-1.5, 0.5)
    assert rows["AND"]["a"] == pytest.approx(0.25)
    assert doc["acc_by_steps"] == [
        {"steps": 2, "samples": 3, "a": 2 / 3, "b": 1 / 3, "a_only": 1, "b_only": 0, "p": 1.0},
        {"steps": 3, "samples": 1, "a": 0.0, "b": 0.0, "a_only": 0, "b_only": 0, "p": 1.0},
    ]
    # order-sensitive s2, s3: A LAcc 1, Acc 1/2 (EO 1/2); B LAcc 1/2, Acc 0 (EO 1)
    o = doc["order_sensitive"]
    assert o["samples"] == 2 and o["a"] == {"LAcc": 1.0, "Acc": 0.5, "EO": 0.5}
    assert o["b"] == {"LAcc": 0.5, "Acc": 0.0, "EO": 1.0}


@pytest.mark.parametrize(
    ("case", "words"),
    [
        ("other samples", "line 2, field 'id': sample 's9' is not in"),
        ("other steps", "line 1, field 'num_steps': sample 's1' has 3 steps here and 2"),
        ("bad line", "line 2, field 'correct': expected true or false"),
        ("other setting", "scores the event setting and"),
        ("twice", "line 2, field 'id': sample 's1' is scored twice"),
    ],
)
def test_bad_input_is_one_line(tmp_path, capsys, runs, case, words):
    a = tmp_path / "a.jsonl"
    write_jsonl(a, [_line("s1", True, True, 0), _line("s2", False, False, 1)])
    lines = [_line("s1", True, True, 0), _line("s2", False, False, 1)]
    if case == "other samples":
        lines[1]["id"] = "s9"
    elif case == "other steps":
        lines[0]["num_steps"] = 3
    elif case == "bad line":
        lines[1]["correct"] = 0
    elif case == "twice":
        lines[1]["id"] = "s1"
    b = tmp_path / "b.jsonl"
    write_jsonl(b, lines)
    if case == "other setting":
        b = runs["basic", "oracle"]
    capsys.readouterr()
    assert main(["compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tvr compare: error: ") and words in err


def test_the_command_exits_2_without_a_traceback(tmp_path, runs):
    run = runs["event", "oracle"]
    (tmp_path / "empty").mkdir()
    for bad, words in ((tmp_path / "nowhere", "no such file or folder"),
                       (tmp_path / "empty", "(write it with `tvr evaluate --out`)")):  # fmt: skip
        done = subprocess.run([sys.executable, "-m", "tvr", "compare", str(run), str(bad)],
                              capture_output=True, text=True)  # fmt: skip
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert done.stderr.count("\n") == 1 and words in done.stderr


def test_it_is_also_tvr_trance_compare(runs, capsys):
    run = runs["basic", "oracle"]
    capsys.readouterr()
    assert main(["trance", "compare", str(run), str(run), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["setting"] == "basic"
