"""Scene sampling: distinct objects, where they start, entering objects aimed from outside."""

import dataclasses

import numpy as np
import pytest

from tvr.clevrer.vocab import COLORS, FPS, MATERIALS, SHAPES
from tvr.clevrer.world.camera import in_view, outside_distance
from tvr.clevrer.world.config import WorldConfig
from tvr.clevrer.world.scene import (
    attribute_combinations,
    predicted_position,
    sample_scene,
    travelled,
)

CONFIG = WorldConfig()


def scenes(n=200):
    out = [sample_scene(np.random.default_rng([7, i]), CONFIG) for i in range(n)]
    return [s for s in out if s is not None]


def test_48_combinations():
    combos = attribute_combinations()
    assert len(set(combos)) == 48 == len(COLORS) * len(MATERIALS) * len(SHAPES)


def test_no_two_identical_objects_and_counts_in_range():
    found = scenes()
    assert len(found) >= 185  # placement rarely fails (sideways exits leave less room)
    for spec in found:
        keys = [(o.color, o.material, o.shape) for o in spec.objects]
        assert len(set(keys)) == len(keys)
        assert CONFIG.n_objects[0] <= len(keys) <= CONFIG.n_objects[1]
        roles = [o.role for o in spec.objects]
        assert roles.count("entering") >= 1


def test_start_positions():
    r = CONFIG.object_radius
    for spec in scenes(100):
        starts = np.array([o.position for o in spec.objects])
        d = np.hypot(*(starts[:, None] - starts[None, :]).transpose(2, 0, 1))
        np.fill_diagonal(d, np.inf)
        assert d.min() >= CONFIG.min_separation - 1e-9
        for o in spec.objects:
            p = np.array([o.position[0], o.position[1], r])
            if o.role == "entering":
                # the whole object starts out of view, and is aimed somewhere
                assert outside_distance(p, r * np.sqrt(2)) > CONFIG.entry_margin_px - 1e-6
                assert o.target >= 0 and np.hypot(*o.velocity) > 0
                assert np.hypot(*o.velocity) <= CONFIG.max_speed + 1e-9
            else:
                assert in_view(p, margin_px=CONFIG.start_margin_px)
                assert o.launch_frame == 0
                assert (o.role == "resting") == (o.velocity == (0.0, 0.0))


def test_free_flight_prediction():
    decel = CONFIG.sliding_deceleration
    assert travelled(2.0, 1.0, decel) == pytest.approx(2.0 - decel / 2)
    # it stops after speed / decel seconds and stays there
    assert travelled(2.0, 100.0, decel) == pytest.approx(2.0**2 / (2 * decel))
    spec = sample_scene(np.random.default_rng(3), CONFIG)
    mover = next(o for o in spec.objects if o.role == "entering")
    before = predicted_position(mover, mover.launch_frame / FPS - 0.5, decel)
    assert tuple(before) == mover.position


def test_config_is_validated():
    with pytest.raises(ValueError, match="physics_hz"):
        WorldConfig(physics_hz=110)
    with pytest.raises(ValueError, match="n_entering"):
        WorldConfig(n_entering=(3, 1))
    assert dataclasses.replace(CONFIG, physics_hz=200).substeps == 8
