"""SceneFacts from the official predicted-dynamics layout: units, events, velocities, validation."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from tvr.clevrer.programs.dynamics import (
    GRID_TO_PIXEL,
    facts_from_dynamics,
    grid_to_image,
    image_to_grid,
    in_out_events,
    merge_repeated_collisions,
    motion_from_samples,
    read_dynamics,
)
from tvr.clevrer.programs.executor import execute
from tvr.clevrer.programs.facts import Event
from tvr.core.errors import InputError

RED = {"color": "red", "material": "rubber", "shape": "sphere"}
BLUE = {"color": "blue", "material": "metal", "shape": "cube"}
GREEN = {"color": "green", "material": "rubber", "shape": "cylinder"}


def at(attrs: dict, x: float, y: float) -> dict:
    return {**attrs, "x": x, "y": y}


def layout() -> dict:
    """Samples every 5 frames, 0..20, on the 100x150 grid (x row, y column).

    red moves right 10 columns per sample until frame 10, then rests; blue rests until 10, then
    moves up 10 rows per sample; green is listed at 10 and 15 only. The predictor marks the
    red-blue contact at 10 and again at 15. Without blue, red keeps moving right.
    """
    red_y = [10, 20, 30, 30, 30]
    blue_x = [50, 50, 50, 40, 30]
    factual = []
    for k, f in enumerate(range(0, 25, 5)):
        objs = [at(RED, 50, red_y[k]), at(BLUE, blue_x[k], 40)]
        if f in (10, 15):
            objs.append(at(GREEN, 20, 100 + 10 * (f == 15)))
        factual.append({"frame_index": f, "objects": objs})
    without_blue = []
    for k, f in enumerate(range(0, 25, 5)):
        objs = [at(RED, 50, 10 + 10 * k)]
        if f in (10, 15):
            objs.append(at(GREEN, 20, 100))
        without_blue.append({"frame_index": f, "objects": objs})
    return {
        "objects": [{"id": 0, **RED}, {"id": 1, **BLUE}, {"id": 2, **GREEN}],
        "predictions": [
            {"what_if": -1, "trajectory": factual,
             "collisions": [{"frame": 10, "objects": [RED, BLUE]},
                            {"frame": 15, "objects": [BLUE, RED]}]},
            {"what_if": 1, "trajectory": without_blue, "collisions": []},
        ],
    }


def test_grid_units() -> None:
    # the predictor's x is the row (down) and y the column (right), on 100 x 150
    assert grid_to_image(50, 75) == (240.0, 160.0)
    assert grid_to_image(0, 150) == (480.0, 0.0)
    assert image_to_grid(*grid_to_image(12.5, 33.0)) == pytest.approx((12.5, 33.0))
    assert pytest.approx(3.2) == GRID_TO_PIXEL


def test_objects_events_and_collisions() -> None:
    facts = facts_from_dynamics(layout(), "sim.json", n_shown_frames=15)
    assert [(o.color, o.material, o.shape) for o in facts.objects] == [
        ("red", "rubber", "sphere"), ("blue", "metal", "cube"), ("green", "rubber", "cylinder")]
    assert set(facts.factual.events) == {
        Event("in", 10, (2,)), Event("out", 20, (2,)), Event("collision", 10, (0, 1))}
    assert set(facts.counterfactual) == {1}
    assert set(facts.counterfactual[1].events) == {Event("in", 10, (2,)), Event("out", 20, (2,))}
    assert facts.n_shown_frames == 15


def test_motion_by_finite_differences() -> None:
    motion = facts_from_dynamics(layout()).factual.motion
    assert motion.visible.shape == (21, 3)
    # red: 10 columns per 5 frames = 2 grid/frame = 6.4 px/frame to the right
    assert motion.velocity[0, 0] == pytest.approx((6.4, 0.0))
    assert motion.velocity[5, 0] == pytest.approx((6.4, 0.0))
    assert motion.velocity[10, 0] == pytest.approx((3.2, 0.0))  # mean of 6.4 and 0
    assert motion.velocity[15, 0] == pytest.approx((0.0, 0.0))
    assert motion.velocity[12, 0] == pytest.approx((3.2 * 0.6, 0.0))  # interpolated
    assert motion.xy[7, 0] == pytest.approx((24 * 3.2, 50 * 3.2))
    # blue moves up (image y decreasing) from 10
    assert motion.velocity[10, 1] == pytest.approx((0.0, -3.2))
    assert motion.velocity[15, 1] == pytest.approx((0.0, -6.4))
    assert motion.velocity[20, 1] == pytest.approx((0.0, -6.4))
    # green: listed at 10 and 15, held until the sample where it is gone
    assert not motion.visible[9, 2] and motion.visible[10:20, 2].all() and not motion.visible[20, 2]
    assert motion.velocity[17, 2] == pytest.approx((6.4, 0.0))
    assert motion.xy[17, 2] == pytest.approx((110 * 3.2, 20 * 3.2))


def test_executor_on_predicted_dynamics() -> None:
    facts = facts_from_dynamics(layout(), n_shown_frames=15)
    assert execute(["end", "get_frame"], facts) == "14"
    assert execute(["objects", "end", "get_frame", "filter_moving", "count"], facts) == "3"
    assert execute(["objects", "blue", "filter_color", "unique", "14", "query_direction"],
                   facts) == "up"
    assert execute(["unseen_events", "objects", "filter_out", "unique", "get_object",
                    "query_shape"], facts) == "cylinder"
    assert execute(["events", "objects", "filter_collision", "count"], facts) == "1"
    # the run reaches past the video: end is the last shown frame
    assert execute(["end", "get_frame"], facts_from_dynamics(layout(), n_shown_frames=128)) == "20"


def test_dense_ground_truth_matches_direct_motion() -> None:
    # ground truth in the layout lists every frame; reading it gives motion_from_samples' motion
    rng = np.random.default_rng(0)
    frames = list(range(12))
    grid = rng.uniform(10, 90, size=(12, 2, 2))
    present = np.ones((12, 2), dtype=bool)
    present[8:, 1] = False
    data = {
        "objects": [{"id": 0, **RED}, {"id": 1, **BLUE}],
        "predictions": [{"what_if": -1, "collisions": [], "trajectory": [
            {"frame_index": f, "objects": [
                at(attrs, *grid[f, o]) for o, attrs in enumerate((RED, BLUE)) if present[f, o]]}
            for f in frames]}],
    }
    motion = facts_from_dynamics(data).factual.motion
    image = np.stack([grid[..., 1] * 3.2, grid[..., 0] * 3.2], axis=-1)
    direct = motion_from_samples(frames, image, present)
    np.testing.assert_allclose(motion.xy, direct.xy)
    np.testing.assert_allclose(motion.velocity, direct.velocity)
    assert (motion.visible == direct.visible).all()
    # every frame: central differences inside, one-sided at the ends
    np.testing.assert_allclose(motion.velocity[3, 0], (image[4, 0] - image[2, 0]) / 2)
    np.testing.assert_allclose(motion.velocity[0, 0], image[1, 0] - image[0, 0])
    np.testing.assert_allclose(motion.velocity[7, 1], image[7, 1] - image[6, 1])


def test_in_out_events() -> None:
    visible = np.array([[1, 0], [1, 0], [0, 1], [0, 1], [1, 0]], dtype=bool)
    assert in_out_events(visible) == [
        Event("out", 2, (0,)), Event("in", 2, (1,)), Event("in", 4, (0,)), Event("out", 4, (1,))]
    assert in_out_events(visible[:1]) == []


def test_merge_repeated_collisions() -> None:
    samples = [0, 5, 10, 15, 20, 25]
    raw = [(10, 0, 1), (15, 1, 0), (20, 0, 1), (10, 0, 2), (25, 0, 2), (12, 0, 1)]
    assert merge_repeated_collisions(raw, samples) == [(10, 0, 1), (10, 0, 2), (12, 0, 1),
                                                       (25, 0, 2)]


def test_proposed_collisions() -> None:
    # red slows sharply at frame 15 next to blue; the given collisions are ignored
    red_y = [10, 20, 30, 38, 36, 34, 32]
    blue_y = [45, 45, 45, 45, 47, 49, 51]
    traj = [{"frame_index": 5 * k, "objects": [at(RED, 50, red_y[k]), at(BLUE, 50, blue_y[k])]}
            for k in range(7)]
    data = {"objects": [{"id": 0, **RED}, {"id": 1, **BLUE}],
            "predictions": [{"what_if": -1, "trajectory": traj, "collisions": []}]}
    assert facts_from_dynamics(data).factual.events == ()
    proposed = facts_from_dynamics(data, collisions="proposed")
    assert proposed.factual.events == (Event("collision", 15, (0, 1)),)
    del data["predictions"][0]["collisions"]
    assert facts_from_dynamics(data, collisions="proposed").factual.events == (
        Event("collision", 15, (0, 1)),)
    with pytest.raises(ValueError, match="collisions must be"):
        facts_from_dynamics(data, collisions="guess")


def test_collision_objects_may_be_ids() -> None:
    data = layout()
    data["predictions"][0]["collisions"] = [{"frame": 10, "objects": [0, 1]}]
    assert Event("collision", 10, (0, 1)) in facts_from_dynamics(data).factual.events


def broken(edit) -> dict:
    data = copy.deepcopy(layout())
    edit(data)
    return data


def _set(path: list, value) -> object:
    def edit(data: dict) -> None:
        target = data
        for key in path[:-1]:
            target = target[key]
        if value is KeyError:
            del target[path[-1]]
        else:
            target[path[-1]] = value
    return edit


F0 = ["predictions", 0, "trajectory", 1, "objects", 0]
BAD: list[tuple[object, str, str]] = [
    (_set(["objects"], KeyError), "objects", "missing"),
    (_set(["predictions"], {}), "predictions", "expected a list"),
    (_set(["objects", 1, "id"], 0), "objects[1].id", "used twice"),
    (_set(["objects", 1, "id"], 5), "objects[1].id", "ids must be 0..2"),
    (_set(["objects", 2], {"id": 2, **RED}), "objects[2]", "two objects are red rubber sphere"),
    (_set(["objects", 2, "color"], "pink"), "objects[2].color", "unknown color 'pink'"),
    (_set(["predictions", 1, "what_if"], -1), "predictions[1].what_if",
     "a second prediction for what_if -1"),
    (_set(["predictions", 1, "what_if"], 3), "predictions[1].what_if", "no object 3"),
    (_set(["predictions", 1, "what_if"], -2), "predictions[1].what_if", "integer >= -1"),
    (_set(["predictions", 0, "trajectory", 2, "frame_index"], 5),
     "predictions[0].trajectory[2].frame_index", "does not follow 5"),
    (_set(["predictions", 0, "trajectory", 2, "frame_index"], 7.5),
     "predictions[0].trajectory[2].frame_index", "expected an integer"),
    (_set([*F0, "x"], "left"), "predictions[0].trajectory[1].objects[0].x", "finite number"),
    (_set([*F0, "y"], float("nan")), "predictions[0].trajectory[1].objects[0].y", "finite"),
    (_set([*F0, "y"], KeyError), "predictions[0].trajectory[1].objects[0].y", "missing"),
    (_set([*F0, "shape"], "cube"), "predictions[0].trajectory[1].objects[0]",
     "no object red rubber cube"),
    (_set(["predictions", 0, "trajectory", 1, "objects", 1], at(RED, 1, 1)),
     "predictions[0].trajectory[1].objects[1]", "listed twice"),
    (_set(["predictions", 1, "trajectory", 0, "objects", 0], at(BLUE, 1, 1)),
     "predictions[1].trajectory[0].objects[0]", "listed in the run without it"),
    (_set(["predictions", 0, "collisions", 0, "objects"], [RED]),
     "predictions[0].collisions[0].objects", "2 objects, got 1"),
    (_set(["predictions", 0, "collisions", 0, "objects"], [RED, RED]),
     "predictions[0].collisions[0].objects", "cannot collide with itself"),
    (_set(["predictions", 0, "collisions", 0, "objects"], [RED, 7]),
     "predictions[0].collisions[0].objects[1]", "object id 7"),
    (_set(["predictions", 0, "collisions", 0, "frame"], -1),
     "predictions[0].collisions[0].frame", "integer >= 0"),
    (_set(["predictions", 0, "collisions"], KeyError), "predictions[0].collisions", "missing"),
    (_set(["predictions", 1, "collisions"], [{"frame": 3, "objects": [RED, BLUE]}]),
     "predictions[1].collisions[0].objects", "object 1 is not in this run"),
    (lambda data: data["predictions"].pop(0), "predictions", "no prediction with what_if -1"),
]


@pytest.mark.parametrize(("edit", "field", "message"), BAD, ids=[f for _, f, _ in BAD])
def test_errors_name_file_and_field(edit, field: str, message: str) -> None:
    data = broken(edit)
    with pytest.raises(InputError, match=message) as err:
        facts_from_dynamics(data, "dyn/sim_00007.json")
    text = str(err.value)
    assert text.startswith(f"dyn/sim_00007.json, field '{field}': ")
    assert "\n" not in text


def test_top_level_must_be_an_object() -> None:
    with pytest.raises(InputError, match="top level"):
        facts_from_dynamics([1, 2], "x.json")


def test_read_dynamics(tmp_path) -> None:
    path = tmp_path / "sim_00000.json"
    path.write_text(json.dumps(layout()))
    assert len(read_dynamics(path).factual.events) == 3
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match=r"bad\.json: not valid JSON"):
        read_dynamics(bad)
    with pytest.raises(InputError, match="no such file"):
        read_dynamics(tmp_path / "missing.json")
