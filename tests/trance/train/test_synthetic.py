"""The synthetic test set: valid states, steps correct by simulation, options, drawings."""

import numpy as np

from tvr.trance.data.batch import collate
from tvr.trance.train.scoring import event_scores
from tvr.trance.train.synthetic import (
    draw,
    first_step_options,
    make_synthetic_examples,
    random_state,
    synthetic_records,
    to_sample,
)
from tvr.trance.world import simulator as world


def test_states_are_valid():
    rng = np.random.default_rng(0)
    for _ in range(20):
        s = random_state(rng)
        assert not any(world.overlaps(s, i) for i in range(10))
        assert (world.area(s[:, 0], s[:, 1]) != world.OFF_PLANE).all()
        assert (world.area(s[:, 0], s[:, 1]) == world.VISIBLE).any()


def test_reference_steps_are_correct_by_simulation():
    b = collate(make_synthetic_examples(32, "event", (24, 32), seed=5))
    s = event_scores(
        b["init_state"].numpy(),
        b["final_state"].numpy(),
        b["obj_target"].numpy(),
        b["value_target"].numpy(),
        b["num_steps"].numpy(),
    )
    assert s.correct.all()
    assert (s.distance == 0).all()


def test_reproducible():
    a = make_synthetic_examples(4, "event", (24, 32), seed=9)
    b = make_synthetic_examples(4, "event", (24, 32), seed=9)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_array_equal(x["final_image"], y["final_image"])
        assert x["id"] == y["id"]


def test_out_moves_accept_every_valid_invisible_spot():
    state = np.zeros((10, 6), dtype=np.int64)
    state[:, 0] = np.arange(10) * 8 - 36  # a row of small objects along x ...
    state[:, 1] = -36
    state[:, 2] = 2  # small
    state[0] = [20, 20, 2, 0, 0, 0]  # ... and object 0 in the visible corner
    behind2 = 14  # position.behind.2: +20 on x -> x = 40, invisible
    opts = first_step_options(state, 0, behind2)
    assert behind2 in opts and len(opts) > 1
    for v in opts:
        r = world.apply_steps_batch(state[None], np.array([[0]]), np.array([[v]]))
        assert world.area(r.final[0, 0, 0], r.final[0, 0, 1]) == world.INVISIBLE
    assert first_step_options(state, 0, 1) == [1]


def test_drawing_shows_visible_objects_only():
    state = np.zeros((10, 6), dtype=np.int64)
    state[:, 0] = 38
    state[:, 1] = np.arange(10) * 8 - 36  # all invisible
    empty = draw(state, (30, 40))
    assert np.allclose(empty, empty[0, 0, 0])
    state[0, :2] = 0  # one visible in the centre
    img = draw(state, (30, 40))
    assert not np.allclose(img, empty)
    assert img.shape == (3, 30, 40) and img.min() >= 0 and img.max() <= 1


def test_sample_format_round_trip():
    from tvr.trance.data.sample import Sample

    for rec in synthetic_records(6, "view", seed=2):
        d = to_sample(rec).to_dict()
        back = Sample.from_dict(d)
        np.testing.assert_array_equal(back.initial_array, rec.init)
        np.testing.assert_array_equal(back.final_array, rec.final)
        assert [(s.obj, s.value) for s in back.steps] == rec.steps
