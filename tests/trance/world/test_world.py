"""Rules of the simulator, one by one, and the batched simulator against the single one."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.trance.helpers import LARGE, MEDIUM, SMALL, state, v
from tvr.trance.world import simulator as world
from tvr.trance.world import vocab
from tvr.trance.world.simulator import COL_COLOR, COL_SIZE, COL_X, COL_Y


def test_value_order_is_the_release_order():
    assert len(vocab.VALUES) == 33
    assert vocab.VALUES[:8] == tuple(f"color.{c}" for c in vocab.COLORS)
    assert vocab.VALUES[8:11] == ("material.rubber", "material.metal", "material.glass")
    assert vocab.VALUES[11:15] == (
        "position.front.1",
        "position.front.2",
        "position.behind.1",
        "position.behind.2",
    )
    assert vocab.VALUES[25:27] == ("position.behind-right.1", "position.behind-right.2")
    assert vocab.VALUES[27:] == (
        "shape.cube",
        "shape.sphere",
        "shape.cylinder",
        "size.large",
        "size.medium",
        "size.small",
    )


@pytest.mark.parametrize("direction,vec", sorted(vocab.DIRECTION_VECTORS.items()))
@pytest.mark.parametrize("step", [1, 2])
def test_each_direction_and_step_moves_by_the_release_vector(direction, vec, step):
    s = state((0, 0, SMALL))
    new, result = world.apply_step(s, 0, v(f"position.{direction}.{step}"))
    assert (new[0, COL_X], new[0, COL_Y]) == (vec[0] * 10 * step, vec[1] * 10 * step)
    assert result.valid and not result.noop
    assert (s[0, COL_X], s[0, COL_Y]) == (0, 0), "the input state is not modified"


def test_behind_points_to_positive_x_and_right_to_positive_y():
    assert vocab.DIRECTION_VECTORS["behind"] == (1, 0)
    assert vocab.DIRECTION_VECTORS["right"] == (0, 1)
    assert vocab.DIRECTION_VECTORS["front-left"] == (-1, -1)


@pytest.mark.parametrize(
    "a,b,overlap",
    [
        ((0, 0, SMALL), (5, 0, SMALL), False),  # 2 + 2 + 1 = 5: exactly at the boundary
        ((0, 0, SMALL), (4, 0, SMALL), True),
        ((0, 0, LARGE), (5, 12, LARGE), False),  # distance 13 = 6 + 6 + 1
        ((0, 0, LARGE), (5, 11, LARGE), True),  # distance 12.08 < 13
        ((0, 0, MEDIUM), (0, 11, LARGE), False),  # 4 + 6 + 1 = 11
        ((0, 0, MEDIUM), (0, 10, LARGE), True),
    ],
)
def test_overlap_at_the_exact_boundary(a, b, overlap):
    # object 0 starts 10 units in front of a and steps behind into place
    s = state((a[0] - 10, a[1], a[2]), b)
    _, result = world.apply_step(s, 0, v("position.behind.1"))
    assert result.overlap is overlap


def test_invisible_objects_also_block():
    s = state((20, 0, SMALL), (30, 0, SMALL))  # object 1 stands in the invisible area
    assert world.area(30, 0) == world.INVISIBLE
    _, result = world.apply_step(s, 0, v("position.behind.1"))
    assert result.overlap


def test_growing_can_overlap_and_shrinking_cannot():
    s = state((0, 0, SMALL), (9, 0, SMALL))
    _, grow = world.apply_step(s, 0, v("size.large"))  # 6 + 2 + 1 = 9 = the distance: no overlap
    assert not grow.overlap
    s2 = state((0, 0, SMALL), (8, 0, SMALL))
    new, grow2 = world.apply_step(s2, 0, v("size.large"))
    assert grow2.overlap and new[0, COL_SIZE] == LARGE
    _, shrink = world.apply_step(new, 0, v("size.small"))
    assert not shrink.overlap


def test_moves_in_and_out_and_off_the_plane():
    s = state((15, 0, SMALL))
    out, r = world.apply_step(s, 0, v("position.behind.1"))
    assert world.area(out[0, COL_X], out[0, COL_Y]) == world.INVISIBLE and r.valid
    back, r = world.apply_step(out, 0, v("position.front.1"))
    assert world.area(back[0, COL_X], back[0, COL_Y]) == world.VISIBLE and r.valid
    edge = state((35, 0, SMALL))
    off, r = world.apply_step(edge, 0, v("position.behind.1"))
    assert r.off_plane and r.broken_rule == "off_plane"
    assert off[0, COL_X] == 45, "a step that breaks a rule is still applied"


@pytest.mark.parametrize("attr", ["color", "material", "shape", "size"])
def test_setting_the_same_value_is_a_noop(attr):
    s = state((0, 0, SMALL))
    current = vocab.CATEGORIES[attr][int(s[0, world.ATTR_COLUMN[attr]])]
    _, r = world.apply_step(s, 0, v(f"{attr}.{current}"))
    assert r.noop and r.valid
    other = next(x for x in vocab.CATEGORIES[attr] if x != current)
    new, r = world.apply_step(s, 0, v(f"{attr}.{other}"))
    assert not r.noop and new[0, world.ATTR_COLUMN[attr]] == vocab.CATEGORIES[attr].index(other)


def test_bad_indices_raise():
    s = state()
    with pytest.raises(ValueError):
        world.apply_step(s, 10, 0)
    with pytest.raises(ValueError):
        world.apply_step(s, 0, 33)


def test_distance_rules():
    a = state((0, 0, SMALL), (30, 30, SMALL))
    b = a.copy()
    assert world.distance(a, b) == 0
    b[1, COL_X], b[1, COL_Y] = -30, 30  # both invisible: equal
    assert world.distance(b, a) == 0
    b[0, COL_X] = 10  # visible, moved: one pair differs
    b[0, COL_COLOR] = (a[0, COL_COLOR] + 1) % 8  # and a colour: two
    assert world.distance(b, a) == 2
    c = a.copy()
    c[1, COL_X] = 50  # off the plane never equals, even against an invisible target
    assert world.distance(c, a) == 1


# --- batched and single simulators agree ---------------------------------------------------------
@st.composite
def scenes_and_steps(draw):
    xs = draw(st.lists(st.integers(-40, 40), min_size=10, max_size=10))
    ys = draw(st.lists(st.integers(-40, 40), min_size=10, max_size=10))
    sizes = draw(st.lists(st.integers(0, 2), min_size=10, max_size=10))
    colors = draw(st.lists(st.integers(0, 7), min_size=10, max_size=10))
    s = np.zeros((10, 6), dtype=np.int16)
    s[:, 0], s[:, 1], s[:, 2], s[:, 3] = xs, ys, sizes, colors
    s[:, 4] = draw(st.lists(st.integers(0, 2), min_size=10, max_size=10))
    s[:, 5] = draw(st.lists(st.integers(0, 2), min_size=10, max_size=10))
    steps = draw(st.lists(st.tuples(st.integers(0, 9), st.integers(0, 32)), min_size=0, max_size=4))
    return s, steps


@settings(max_examples=300, deadline=None)
@given(st.lists(scenes_and_steps(), min_size=1, max_size=8))
def test_batched_and_single_simulators_agree(cases):
    k = 4
    states = np.stack([c[0] for c in cases])
    objs = np.full((len(cases), k), -1)
    values = np.full((len(cases), k), world.PAD_VALUE)
    for i, (_, steps) in enumerate(cases):
        for j, (o, val) in enumerate(steps):
            objs[i, j], values[i, j] = o, val
    batch = world.apply_steps_batch(states, objs, values)
    for i, (s, steps) in enumerate(cases):
        final, results = world.apply_steps(s, steps)
        assert np.array_equal(batch.final[i], final)
        for j, r in enumerate(results):
            assert batch.overlap[i, j] == r.overlap
            assert batch.off_plane[i, j] == r.off_plane
            assert batch.noop[i, j] == r.noop
        assert not batch.invalid[i, len(steps) :].any(), "padding steps do nothing"
    other = np.roll(batch.final, 1, axis=0)
    d = world.distance_batch(batch.final, other)
    for i in range(len(cases)):
        assert d[i] == world.distance(batch.final[i], other[i])


def test_order_sensitive_detects_a_blocked_order():
    # object 1 must leave the spot before object 0 moves in
    s = state((0, 0, SMALL), (10, 0, SMALL))
    steps = [(1, v("position.right.1")), (0, v("position.behind.1"))]
    assert world.order_sensitive(s, steps)
    _, results = world.apply_steps(s, steps)
    assert all(r.valid for r in results)
    assert not world.order_sensitive(s, [(0, v("color.red")), (1, v("shape.cube"))])
