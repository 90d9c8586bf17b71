"""Evaluation by simulation: hand-made samples with known answers, baselines, bad input."""

import json

import numpy as np
import pytest

from tests.trance.helpers import SMALL, make_sample, state, v
from tvr.core.errors import InputError
from tvr.core.jsonl import write_jsonl
from tvr.trance.data.files import write_samples
from tvr.trance.data.sample import Step
from tvr.trance.eval.baselines import predict, reversed_keeping_final
from tvr.trance.eval.evaluate import evaluate_files
from tvr.trance.eval.metrics import (
    ReferenceTable,
    details,
    evaluate_steps,
    read_predictions,
    score,
    summarize,
)
from tvr.trance.sampling.sampler import SamplerConfig, ShardSampler, out_move_options
from tvr.trance.world import vocab


@pytest.fixture
def hand_samples():
    """Three hand-made Event samples whose scores are worked out by hand below."""
    # a: object 1 steps right out of (0, 0), then object 0 steps behind into (0, 0): order matters
    a = make_sample(
        "a",
        state((-10, 0, SMALL), (0, 0, SMALL)),
        [(1, "position.right.1"), (0, "position.behind.1")],
    )
    # b: two colour steps and a move out of view
    b = make_sample(
        "b",
        state((0, 0, SMALL), (10, 10, SMALL), (15, -15, SMALL)),
        [(0, "color.red"), (1, "shape.cube"), (2, "position.behind.1")],
    )
    # c: one step
    c = make_sample("c", state((0, 0, SMALL)), [(0, "size.large")])
    return [a, b, c]


def _write(tmp_path, samples, preds):
    write_samples(tmp_path / "s.jsonl", samples)
    with (tmp_path / "p.jsonl").open("w") as f:
        for p in preds:
            f.write((p if isinstance(p, str) else json.dumps(p)) + "\n")
    return tmp_path / "s.jsonl", tmp_path / "p.jsonl"


def test_hand_written_predictions_with_known_answers(tmp_path, hand_samples):
    preds = [
        # a, wrong order: object 0 bumps into object 1 -> loose correct, not correct
        {
            "id": "a",
            "steps": [
                {"obj": 0, "value": "position.behind.1"},
                {"obj": 1, "value": "position.right.1"},
            ],
        },
        # b: colour right, shape missed, object 2 moved out by another invisible route -> distance 1
        {"id": "b", "steps": [[0, "color.red"], [2, "position.behind.2"]]},
        # c: missing -> wrong, distance = the one size step
    ]
    s, p = _write(tmp_path, hand_samples, preds)
    summary = evaluate_files(s, p, "event", tmp_path / "out")
    rows = {
        d["id"]: d
        for d in map(json.loads, (tmp_path / "out" / "detail.jsonl").read_text().splitlines())
    }
    assert rows["a"]["loose_correct"] and not rows["a"]["correct"]
    assert rows["a"]["broken_rule"] == {"rule": "overlap", "step": 1}
    assert rows["a"]["order_sensitive"]
    assert rows["b"]["distance"] == 1 and rows["b"]["norm_distance"] == pytest.approx(1 / 3)
    assert rows["c"]["prediction"] is None and rows["c"]["problem"] == "missing"
    assert rows["c"]["distance"] == 1 and not rows["c"]["correct"]
    m = summary["metrics"]
    assert m["Acc"] == 0 and m["LAcc"] == pytest.approx(1 / 3)
    assert m["AD"] == pytest.approx(2 / 3)
    assert m["AND"] == pytest.approx((0 + 1 / 3 + 1) / 3)
    assert summary["missing"] == 1
    assert summary["order_sensitive"]["count"] == 1
    assert summary["order_sensitive"]["EO"] == pytest.approx(1.0)  # (1 - 0) / 1
    assert summary["by_steps"]["2"] == {"count": 1, "AD": 0.0, "AND": 0.0, "LAcc": 1.0, "Acc": 0.0}
    assert json.loads((tmp_path / "out" / "summary.json").read_text())["metrics"] == m


def test_out_move_accepts_any_invisible_destination(hand_samples):
    b = hand_samples[1]
    right = evaluate_steps(
        b, [(0, v("color.red")), (1, v("shape.cube")), (2, v("position.behind-left.2"))]
    )
    assert right["correct"] and right["distance"] == 0
    visible = evaluate_steps(
        b, [(0, v("color.red")), (1, v("shape.cube")), (2, v("position.front.1"))]
    )
    assert visible["distance"] == 1 and not visible["loose_correct"]


def test_off_plane_is_never_correct():
    s = make_sample("edge", state((35, 0, SMALL), (0, 30, SMALL)), [(1, "position.behind.1")])
    d = evaluate_steps(s, [(1, v("position.behind.1")), (0, v("position.behind.1"))])
    assert d["broken_rule"] == {"rule": "off_plane", "step": 2}
    assert not d["correct"]


def test_basic_metrics_and_options(tmp_path):
    init = state((15, 0, SMALL))
    opts = out_move_options(init, 0)
    assert v("position.behind.1") in opts and v("position.front.1") not in opts
    sample = make_sample("o", init, [(0, "position.behind.1")])
    sample.steps = [Step(0, v("position.behind.1"), "out", opts)]
    color = make_sample("k", state((0, 0, SMALL)), [(0, "color.red")])
    preds = [
        {
            "id": "o",
            "steps": [{"obj": 0, "value": "position.behind-right.2"}],
        },  # another valid option
        {
            "id": "k",
            "steps": [{"obj": 1, "value": "color.blue"}],
        },  # wrong object and value, right attribute
    ]
    s, p = _write(tmp_path, [sample, color], preds)
    m = evaluate_files(s, p, "basic")["metrics"]
    assert m == {"ObjAcc": 0.5, "AttrAcc": 1.0, "ValAcc": 0.5, "Acc": 0.5}


@pytest.fixture(scope="module")
def generated():
    sampler = ShardSampler(SamplerConfig(), seed=11, shard=0)
    return [sampler.sample(i) for i in range(250)]


@pytest.mark.parametrize("setting", ["basic", "event", "view"])
def test_oracle_scores_perfectly(generated, setting):
    ref = ReferenceTable.from_samples(generated, setting)
    records = predict("oracle", generated, setting)
    pred = _table(ref, records)
    summary = summarize(ref, pred, score(ref, pred))
    m = summary["metrics"]
    if setting == "basic":
        assert m == {"ObjAcc": 1.0, "AttrAcc": 1.0, "ValAcc": 1.0, "Acc": 1.0}
    else:
        assert m["Acc"] == m["LAcc"] == 1.0 and m["AD"] == 0.0 and m["AND"] == 0.0
    if setting == "view":
        assert len(ref.ids) == 3 * len(generated)
        assert set(summary["by_view"]) == {"L", "C", "R"}


def _table(ref, records):
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "p.jsonl"
        write_jsonl(path, records)
        return read_predictions(path, ref)


def test_reversed_order_lowers_acc_not_lacc_on_order_sensitive_samples(generated):
    ref = ReferenceTable.from_samples(generated, "event")
    assert 0.02 < ref.order_sensitive.mean() < 0.15
    pred = _table(ref, predict("reversed", generated, "event"))
    s = score(ref, pred)
    subset = ref.order_sensitive
    assert s.loose_correct[subset].all()
    assert s.correct[subset].mean() < 1.0
    assert s.correct[~subset].all(), "outside the subset every order is fine"
    summary = summarize(ref, pred, s)
    assert summary["order_sensitive"]["EO"] > 0


def test_reversed_keeps_repeated_attribute_steps_in_order():
    steps = [(0, v("color.red")), (1, v("position.front.1")), (0, v("color.blue"))]
    assert reversed_keeping_final(steps) == [
        (0, v("color.red")),
        (1, v("position.front.1")),
        (0, v("color.blue")),
    ]
    steps = [(0, v("color.red")), (1, v("position.front.1")), (2, v("shape.cube"))]
    assert reversed_keeping_final(steps) == steps[::-1]


def test_random_baseline_scores_low(generated):
    ref = ReferenceTable.from_samples(generated, "event")
    pred = _table(ref, predict("random", generated, "event", seed=1))
    m = summarize(ref, pred, score(ref, pred))["metrics"]
    assert m["Acc"] < 0.05 and m["AD"] > 1.0


def test_view_breakdown_and_detail_records(generated):
    ref = ReferenceTable.from_samples(generated[:20], "view", views=("L", "R"))
    pred = _table(ref, [r for r in predict("oracle", generated[:20], "view") if r["view"] != "C"])
    rows = details(ref, pred, score(ref, pred))
    assert {r["view"] for r in rows} == {"L", "R"} and len(rows) == 40


# --- bad input --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "line,field,message",
    [
        ("{not json", None, "not valid JSON"),
        ('{"id": "zzz", "steps": []}', "id", "unknown sample"),
        (
            '{"id": "a", "steps": [{"obj": 10, "value": "color.red"}]}',
            "steps[0].obj",
            "object index",
        ),
        (
            '{"id": "a", "steps": [{"obj": 1, "value": "colour.red"}]}',
            "steps[0].value",
            "unknown value",
        ),
        (
            '{"id": "a", "steps": [[1, "color.red"], [1, "color.red"], [1, "color.red"], [1, "color.red"], [1, "color.red"]]}',
            "steps",
            "at most 4",
        ),
        ('{"id": "a", "steps": "color.red"}', "steps", "expected a list"),
        ('["a"]', None, "expected a JSON object"),
    ],
)
def test_bad_prediction_lines_are_located(tmp_path, hand_samples, line, field, message):
    good = json.dumps({"id": "c", "steps": [{"obj": 0, "value": "size.large"}]})
    s, p = _write(tmp_path, hand_samples, [good, line])
    with pytest.raises(InputError) as err:  # strict: more than 4 steps is a bad line too
        evaluate_files(s, p, "event", max_steps_policy="strict")
    assert err.value.line == 2 and err.value.field == field and message in err.value.reason
    assert str(p) in str(err.value)
    # lenient: the bad line is counted, the sample it names (if any) is wrong, the rest scored
    summary = evaluate_files(s, p, "event", lenient=True, max_steps_policy="strict")
    assert summary["invalid"] == 1 and summary["metrics"]["Acc"] == pytest.approx(1 / 3)


def test_duplicate_predictions_and_view_field(tmp_path, hand_samples):
    line = json.dumps({"id": "c", "steps": [{"obj": 0, "value": "size.large"}]})
    s, p = _write(tmp_path, hand_samples, [line, line])
    with pytest.raises(InputError, match="second prediction"):
        evaluate_files(s, p, "event")
    with pytest.raises(InputError, match="view"):
        evaluate_files(s, p, "view")


def test_basic_allows_one_step(tmp_path, hand_samples):
    line = json.dumps({"id": "c", "steps": [[0, "size.large"], [0, "size.small"]]})
    s, p = _write(tmp_path, hand_samples, [line])
    with pytest.raises(InputError, match="at most 1"):
        evaluate_files(s, p, "basic")


def test_value_index_names_round_trip():
    for i, name in enumerate(vocab.VALUES):
        assert vocab.parse_value(name) == i
    with pytest.raises(KeyError):
        vocab.parse_value("position.up.1")
    assert np.array_equal(
        np.asarray(vocab.VALUE_DX)[[v("position.behind.2"), v("position.front-left.1")]], [20, -10]
    )
