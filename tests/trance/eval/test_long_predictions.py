"""Predictions with more than 4 steps: simulated step by step by default, as the released
evaluator does; refused under the strict and lenient max-steps policies."""

import json
import subprocess
import sys

import numpy as np
import pytest

from tests.trance.helpers import SMALL, make_sample, state, v
from tvr.cli import main
from tvr.core.errors import InputError, UserError
from tvr.core.jsonl import write_jsonl
from tvr.trance.data.files import write_samples
from tvr.trance.eval.baselines import predict
from tvr.trance.eval.evaluate import evaluate_files
from tvr.trance.eval.metrics import ReferenceTable, evaluate_steps, read_predictions, score
from tvr.trance.sampling.sampler import SamplerConfig, ShardSampler
from tvr.trance.world import simulator as world
from tvr.trance.world import vocab

REFERENCE = [(0, "color.red"), (1, "shape.cube"), (2, "material.rubber"), (3, "color.yellow")]


@pytest.fixture
def four():
    """A 4-step sample; object 3 stands at x = 35, one step from the edge of the plane."""
    init = state((0, 0, SMALL), (10, 10, SMALL), (-10, -10, SMALL), (35, 0, SMALL))
    return make_sample("four", init, REFERENCE)


def _steps(*extra):
    return [{"obj": o, "value": name} for o, name in [*REFERENCE, *extra]]


def _files(tmp_path, sample, lines):
    write_samples(tmp_path / "s.jsonl", [sample])
    (tmp_path / "p.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    return tmp_path / "s.jsonl", tmp_path / "p.jsonl"


def _detail(out):
    return json.loads((out / "detail.jsonl").read_text())


def test_no_op_fifth_step_is_correct_by_default(tmp_path, four):
    noop = (3, "color.yellow")  # the fourth step again: changes nothing
    s, p = _files(tmp_path, four, [{"id": "four", "steps": _steps(noop)}])
    summary = evaluate_files(s, p, "event", tmp_path / "out")
    assert summary["metrics"]["Acc"] == 1.0 and summary["metrics"]["AD"] == 0.0
    assert summary["long_predictions"] == 1 and summary["invalid"] == 0
    assert summary["max_steps_policy"] == "simulate"
    d = _detail(tmp_path / "out")
    assert d["correct"] and d["distance"] == 0 and len(d["prediction"]) == 5
    assert json.loads((tmp_path / "out" / "config.json").read_text())["max_steps_policy"] == (
        "simulate"
    )
    # the web app's scoring (and the viewer's) applies every step too
    pairs = [(o, v(name)) for o, name in [*REFERENCE, noop]]
    assert evaluate_steps(four, pairs)["correct"]
    assert evaluate_steps(four, pairs, "view")["correct"]
    assert not evaluate_steps(four, [*pairs, (0, v("color.blue"))])["loose_correct"]


def test_steps_after_the_fourth_count(tmp_path, four):
    lines = [{"id": "four", "steps": _steps((0, "color.blue"))}]
    s, p = _files(tmp_path, four, lines)
    evaluate_files(s, p, "event", tmp_path / "a")
    d = _detail(tmp_path / "a")
    assert d["distance"] == 1 and not d["loose_correct"] and d["norm_distance"] == 0.25
    # off the plane at step 5, back at step 6: the final state is right, a rule was broken
    lines = [{"id": "four", "steps": _steps((3, "position.behind.1"), (3, "position.front.1"))}]
    s, p = _files(tmp_path, four, lines)
    evaluate_files(s, p, "event", tmp_path / "b")
    d = _detail(tmp_path / "b")
    assert d["loose_correct"] and not d["correct"]
    assert d["broken_rule"] == {"rule": "off_plane", "step": 5}


def test_strict_policy_stops_at_the_line(tmp_path, four):
    good = {"id": "four", "steps": _steps()}
    s, p = _files(tmp_path, four, [good])
    (tmp_path / "p.jsonl").write_text(
        json.dumps(good) + "\n" + json.dumps({"id": "four", "steps": _steps((0, "color.red"))})
    )
    with pytest.raises(InputError) as err:
        evaluate_files(s, p, "event", max_steps_policy="strict")
    assert err.value.line == 2 and err.value.field == "steps"
    assert str(err.value).startswith(f"{p}, line 2, field 'steps': 5 steps")
    assert "at most 4" in err.value.reason and "\n" not in str(err.value)
    with pytest.raises(UserError, match="max-steps policy must be one of"):
        evaluate_files(s, p, "event", max_steps_policy="truncate")


def test_lenient_policy_counts_long_lines_wrong(tmp_path, four):
    other = make_sample("one", state((0, 0, SMALL)), [(0, "color.red")])
    write_samples(tmp_path / "s.jsonl", [four, other])
    p = tmp_path / "p.jsonl"
    long = {"id": "four", "steps": _steps((3, "color.yellow"))}
    p.write_text(json.dumps(long) + "\n" + json.dumps({"id": "one", "steps": [[0, "color.red"]]}))
    summary = evaluate_files(tmp_path / "s.jsonl", p, "event", max_steps_policy="lenient")
    assert summary["long_predictions"] == 1 and summary["invalid"] == 1
    assert summary["metrics"]["Acc"] == 0.5 and "at most 4" in summary["problems"][0]
    # other bad lines still stop it (--lenient is what makes them wrong instead)
    p.write_text(json.dumps(long) + "\n" + json.dumps({"id": "one", "steps": [[0, "color.rd"]]}))
    with pytest.raises(InputError, match="unknown value"):
        evaluate_files(tmp_path / "s.jsonl", p, "event", max_steps_policy="lenient")


def test_basic_scores_one_step_under_every_policy(tmp_path):
    one = make_sample("one", state((0, 0, SMALL)), [(0, "color.red")])
    s, p = _files(tmp_path, one, [{"id": "one", "steps": [[0, "color.red"], [0, "color.red"]]}])
    for policy in ("simulate", "strict"):
        with pytest.raises(InputError, match="basic allows at most 1"):
            evaluate_files(s, p, "basic", max_steps_policy=policy)
    summary = evaluate_files(s, p, "basic", max_steps_policy="lenient")
    assert summary["long_predictions"] == 1 and summary["metrics"]["Acc"] == 0.0


@pytest.fixture(scope="module")
def generated():
    sampler = ShardSampler(SamplerConfig(occlusion=False), seed=3, shard=0)
    return [sampler.sample(i) for i in range(120)]


def test_long_predictions_score_as_step_by_step_simulation(tmp_path, generated):
    """Every row's distance, first broken rule and correctness equal those of applying its
    steps one by one with the single-state simulator (lengths 1 to 40 and one of 2,000)."""
    rng = np.random.default_rng(0)
    records = predict("oracle", generated, "event")
    for i, r in enumerate(records):
        n = 2000 if i == 1 else int(rng.integers(1, 37))
        if i % 16 == 1:  # an object's final colour again and again: no-ops, still right
            o = int(rng.integers(vocab.NUM_OBJECTS))
            r["steps"] += [{"obj": o, "value": f"color.{generated[i].final[o]['color']}"}] * n
        elif i % 4:
            objs = rng.integers(vocab.NUM_OBJECTS, size=n).tolist()
            values = rng.integers(vocab.NUM_VALUES, size=n).tolist()
            r["steps"] += [
                {"obj": o, "value": vocab.VALUES[x]} for o, x in zip(objs, values, strict=True)
            ]
    path = tmp_path / "p.jsonl"
    write_jsonl(path, records)
    ref = ReferenceTable.from_samples(generated, "event")
    for fast in (True, False):
        pred = read_predictions(path, ref, fast=fast)
        assert pred.long_lines == sum(len(r["steps"]) > 4 for r in records) > 80
        s = score(ref, pred)
        for row, r in enumerate(records):
            steps = [(x["obj"], vocab.VALUE_INDEX[x["value"]]) for x in r["steps"]]
            final, results = world.apply_steps(ref.init[row].astype(np.int32), steps)
            broken = [k for k, res in enumerate(results) if not res.valid]
            assert s.distance[row] == world.distance(final, ref.final[row]), row
            assert s.first_broken_step[row] == (broken[0] if broken else -1), row
            if broken:
                rule = results[broken[0]].broken_rule
                assert s.first_broken_rule[row] == (1 if rule == "off_plane" else 2), row
            assert s.correct[row] == (s.distance[row] == 0 and not broken), row
    assert s.correct[1::16].all(), "a no-op tail leaves the oracle's answer right"
    assert not s.correct[3::4].all()


def test_cli_policies(tmp_path, four, capsys):
    s, p = _files(tmp_path, four, [{"id": "four", "steps": _steps((3, "color.yellow"))}])
    base = ["evaluate", "--data", str(s), "--predictions", str(p)]
    assert main([*base, "--out", str(tmp_path / "out")]) == 0
    assert "predictions with more than 4 steps: 1" in capsys.readouterr().out
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["long_predictions"] == 1 and summary["metrics"]["Acc"] == 1.0
    # strict: one line naming file, line and field, exit status 2
    proc = subprocess.run(
        [sys.executable, "-m", "tvr", *base, "--max-steps-policy", "strict"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"{p}, line 1, field 'steps': 5 steps" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    # strict with --lenient: the old behaviour, scored as wrong and counted
    assert (
        main([*base, "--max-steps-policy", "strict", "--lenient", "--out", str(tmp_path / "l")])
        == 0
    )
    summary = json.loads((tmp_path / "l" / "summary.json").read_text())
    assert summary["invalid"] == 1 and summary["metrics"]["Acc"] == 0.0
    assert "bad lines, scored as wrong" in capsys.readouterr().out
