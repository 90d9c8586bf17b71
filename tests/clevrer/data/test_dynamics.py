"""The predicted-dynamics layout written from SceneFacts reads back (through the executor's
reader) to the same events, visibility and positions."""

import json

import numpy as np
import pytest

from tvr.clevrer.data.dynamics import dynamics_from_facts, write_dynamics
from tvr.clevrer.programs.dynamics import read_dynamics
from tvr.clevrer.programs.facts import Event, Motion, ObjectProps, Run, SceneFacts
from tvr.core.errors import InputError

OBJECTS = (
    ObjectProps("red", "metal", "cube"),
    ObjectProps("blue", "rubber", "sphere"),
    ObjectProps("cyan", "metal", "cylinder"),
)


def _run(visible, collisions, seed):
    visible = np.asarray(visible, dtype=bool)
    t, n = visible.shape
    rng = np.random.default_rng(seed)
    xy = np.where(visible[..., None], rng.uniform([0, 0], [480, 320], size=(t, n, 2)), 0.0)
    events = [Event("collision", f, pair) for f, pair in collisions]
    for o in range(n):
        for f in range(1, t):
            if visible[f, o] != visible[f - 1, o]:
                events.append(Event("in" if visible[f, o] else "out", f, (o,)))
    events.sort(key=lambda e: (e.frame, e.kind, e.objects))
    return Run(tuple(events), Motion(xy, np.zeros_like(xy), visible))


def _facts():
    t = 12
    vis = np.ones((t, 3), bool)
    vis[:3, 1] = False  # object 1 enters at frame 3
    vis[8:, 2] = False  # object 2 leaves at frame 8
    factual = _run(vis, [(5, (0, 1)), (6, (1, 2))], seed=0)
    without_0 = vis.copy()
    without_0[:, 0] = False
    without_1 = vis.copy()
    without_1[:, 1] = False
    without_2 = vis.copy()
    without_2[:, 2] = False
    counterfactual = {
        0: _run(without_0, [(7, (1, 2))], seed=1),
        1: _run(without_1, [], seed=2),
        2: _run(without_2, [(5, (0, 1))], seed=3),
    }
    return SceneFacts(OBJECTS, factual, counterfactual, n_shown_frames=8)


def _same_run(a, b):
    assert sorted(a.events, key=repr) == sorted(b.events, key=repr)
    np.testing.assert_array_equal(a.motion.visible, b.motion.visible)
    np.testing.assert_allclose(a.motion.xy, b.motion.xy, atol=0.01)  # grid rounding: 0.0032 px


def test_written_facts_read_back_the_same(tmp_path):
    facts = _facts()
    data = dynamics_from_facts(facts)
    path = tmp_path / "sim_00001.json"
    write_dynamics(path, data, check=True)
    assert json.loads(path.read_text()) == data
    back = read_dynamics(path, n_shown_frames=8)
    assert back.objects == OBJECTS
    _same_run(back.factual, facts.factual)
    assert set(back.counterfactual) == {0, 1, 2}
    for k, run in facts.counterfactual.items():
        _same_run(back.counterfactual[k], run)


def test_the_released_layout_details():
    data = dynamics_from_facts(_facts())
    assert data["objects"][1] == {"id": 1, "color": "blue", "material": "rubber",
                                  "shape": "sphere"}  # fmt: skip
    assert [p["what_if"] for p in data["predictions"]] == [-1, 0, 1, 2]
    factual = data["predictions"][0]
    assert factual["collisions"][0] == {"frame": 5, "objects": [
        {"color": "red", "material": "metal", "shape": "cube"},
        {"color": "blue", "material": "rubber", "shape": "sphere"}]}  # fmt: skip
    assert [len(f["objects"]) for f in factual["trajectory"]] == [2] * 3 + [3] * 5 + [2] * 4
    first = factual["trajectory"][0]["objects"][0]
    assert list(first) == ["x", "y", "color", "material", "shape"]
    px, py = _facts().factual.motion.xy[0, 0]
    assert first["x"] == pytest.approx(py * 100 / 320, abs=1e-3)  # x: the row on 100 x 150
    assert first["y"] == pytest.approx(px * 150 / 480, abs=1e-3)


def test_check_refuses_a_broken_layout(tmp_path):
    data = dynamics_from_facts(_facts())
    data["predictions"][0]["trajectory"][2]["objects"][0]["color"] = "pink"
    with pytest.raises(InputError, match=r"predictions\[0\].trajectory\[2\].objects\[0\].color"):
        write_dynamics(tmp_path / "sim.json", data, check=True)
    assert not (tmp_path / "sim.json").exists()
