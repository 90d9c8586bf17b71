"""`tvr tranco evaluate` and `tvr tranco baseline` end to end; bad input gives one line, exit 2."""

import json
import subprocess
import sys

import pytest

from tvr.cli import main


def _samples(tmp_path, candidates=True):
    records = [
        {"id": "s1", "clips": ["a", "b"], "candidates": ["a", "b", "c", "d", "e", "f", "g"]},
        {"id": "s2", "clips": ["c", "d", "e"], "candidates": ["c", "d", "e", "a", "b", "x", "y"]},
        {"id": "s3", "clips": ["f", "g"], "candidates": ["f", "g", "a", "b", "c", "d", "z"]},
    ]
    if not candidates:
        for r in records:
            del r["candidates"]
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _predictions(tmp_path, *records):
    path = tmp_path / "predictions.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_evaluate_writes_summary_detail_and_the_table(tmp_path, capsys):
    samples = _samples(tmp_path)
    # s1 exact; s2: one shared clip (e) among two predicted steps, a repeat and an unknown clip;
    # s3: missing
    predictions = _predictions(tmp_path, {"id": "s1", "clips": ["a", "b"]},
                               {"id": "s2", "clips": ["e", "e", "q"]})  # fmt: skip
    out = tmp_path / "eval"
    assert main(["tranco", "evaluate", "--data", str(samples), "--predictions",
                 str(predictions), "--out", str(out)]) == 0  # fmt: skip
    text = capsys.readouterr().out
    assert "tiny candidates (@100 in the paper): ours 7 per sample" in text
    lines = text.splitlines()
    ours = next(line for line in lines if line.startswith("ours: predictions.jsonl"))
    # eq2: R = mean(2/2, 1/3, 0), P = mean(2/2, 1/3, 0/2), KTD = mean(0, 1, 1),
    # SD = mean(0, 0, 2), NSD = mean(0, 0, 1), EMR = mean(1, 0, 0)
    assert ours.split()[2:] == ["0.4444", "0.4444", "0.6667", "0.6667", "0.3333", "0.3333"]
    assert any(line.startswith("Random") and "0.0316" in line and "Table 6" in line
               for line in lines)  # fmt: skip
    assert any("from scratch" in line and "0.1210" in line for line in lines)
    assert "missing 1 (scored as empty)" in text and "repeated steps 1" in text
    assert "clips outside the candidates 1" in text

    summary = json.loads((out / "summary.json").read_text())
    assert summary["setting"] == "tiny" and summary["missing"] == 1
    prose = summary["conventions"]["prose"]["metrics"]
    assert prose["R"] == pytest.approx((1 + 1 / 3 + 0) / 3)  # found 1 of 3 in s2
    assert prose["KTD"] == pytest.approx((0 + 0 + 1) / 3)  # one shared clip scores 0
    assert summary["ktd_single_clip"] == {"zero": pytest.approx(1 / 3), "one": pytest.approx(2 / 3)}
    assert summary["conventions"]["eq2"]["by_length"]["2"]["samples"] == 2
    assert summary["published"]["table6"][0]["model"] == "Random"
    detail = [json.loads(line) for line in (out / "detail.jsonl").read_text().splitlines()]
    assert [d["id"] for d in detail] == ["s1", "s2", "s3"]
    assert detail[1] | {"eq2": None, "prose": None} == {
        "id": "s2", "length": 3, "predicted": 3, "hits": 1, "discordant": 0, "exact": False,
        "repeated_steps": 1, "unknown_clips": 1, "missing": False, "eq2": None, "prose": None,
    }  # fmt: skip
    assert detail[2]["missing"] and detail[2]["eq2"]["SD"] == 2.0
    table = (out / "table.md").read_text()
    assert table.startswith("```\nTRANCO, tiny candidates") and "Table 6" in table


def test_the_prose_table_and_the_full_setting(tmp_path, capsys):
    samples = _samples(tmp_path, candidates=False)
    predictions = _predictions(tmp_path, {"id": "s1", "clips": ["a", "x"]})
    assert main(["tranco", "evaluate", "--data", str(samples), "--predictions",
                 str(predictions), "--convention", "prose"]) == 0  # fmt: skip
    text = capsys.readouterr().out
    assert "full candidates: ours 7 per sample, the paper's 4918; convention prose" in text
    assert "the paper's numbers follow convention eq2" in text
    # "x" is not a clip of the file, so it lies outside the full set
    assert "clips outside the candidates 1" in text


def test_the_random_baseline_writes_predictions_that_evaluate(tmp_path, capsys):
    samples = _samples(tmp_path)
    out = tmp_path / "random.jsonl"
    assert main(["tranco", "baseline", "random", "--data", str(samples),
                 "--seed", "2", "--out", str(out)]) == 0  # fmt: skip
    assert "wrote 3 predictions of the random baseline (tiny candidates)" in capsys.readouterr().out
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["s1", "s2", "s3"]
    assert all(2 <= len(r["clips"]) <= 7 for r in rows)
    assert main(["tranco", "evaluate", "--data", str(samples), "--predictions", str(out),
                 "--json"]) == 0  # fmt: skip
    summary = json.loads(capsys.readouterr().out)
    assert summary["unknown_clips"] == 0 and summary["repeated_steps"] == 0


@pytest.mark.parametrize(
    ("prediction", "message"),
    [
        ('{"id": "s1", "clips": ["a", 2]}\n', "line 1, field 'clips[1]': expected a clip id"),
        ('{"id": "nope", "clips": []}\n', "line 1, field 'id': no sample 'nope'"),
        ('{"id": "s1", "clips": ["a"]}\n{"id": "s1"\n', "line 2: not valid JSON"),
    ],
)
def test_bad_input_is_one_line_without_a_traceback(tmp_path, prediction, message):
    samples = _samples(tmp_path)
    predictions = tmp_path / "predictions.jsonl"
    predictions.write_text(prediction)
    done = subprocess.run(
        [sys.executable, "-m", "tvr", "tranco", "evaluate", "--data", str(samples),
         "--predictions", str(predictions)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"tvr tranco evaluate: error: {predictions}, ")
    assert message in done.stderr


def test_option_errors(tmp_path, capsys):
    samples = _samples(tmp_path, candidates=False)
    assert main(["tranco", "baseline", "random", "--data", str(samples),
                 "--candidates", "tiny", "--out", str(tmp_path / "r.jsonl")]) == 2  # fmt: skip
    assert "lists no candidates" in capsys.readouterr().err
    assert main(["tranco", "baseline", "random", "--data", str(samples),
                 "--min-steps", "5", "--max-steps", "3", "--out", str(tmp_path / "r.jsonl")]) == 2  # fmt: skip
    assert "--min-steps 5 is above --max-steps 3" in capsys.readouterr().err
    assert main(["tranco", "evaluate", "--data", str(tmp_path / "none.jsonl"),
                 "--predictions", str(samples)]) == 2  # fmt: skip
    assert "none.jsonl: no such file" in capsys.readouterr().err


def test_stats_of_a_samples_file_counts_it_as_one_split(tmp_path, capsys):
    """Issue 42: `tranco stats --data FILE` reads a samples file as every other stats does
    (issue 28 had it say that a dataset is a folder)."""
    samples = _samples(tmp_path)
    assert main(["tranco", "stats", "--data", str(samples)]) == 0
    out = capsys.readouterr().out
    assert f"{samples}: one samples file, counted as the test split" in out


