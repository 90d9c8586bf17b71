"""The optimised occlusion check gives the same counts as the original implementation, kept in
tests/trance/world/occlusion_reference.py, on random scenes seen from jittered cameras."""

from __future__ import annotations

import numpy as np

from tests.trance.world.occlusion_reference import (
    reference_fast_visible_pixel_counts,
    reference_visible_pixel_counts,
)
from tvr.trance.world import vocab
from tvr.trance.world.camera import sample_jitter
from tvr.trance.world.occlusion import fast_visible_pixel_counts, visible_pixel_counts


def _random_scene(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """10 objects, clustered so that they hide each other, some outside the visible area."""
    s = np.zeros((vocab.NUM_OBJECTS, 6), dtype=np.int16)
    s[:, 0] = rng.integers(-24, 25, vocab.NUM_OBJECTS)
    s[:, 1] = rng.integers(-24, 25, vocab.NUM_OBJECTS)
    s[:, 2] = rng.integers(0, len(vocab.SIZES), vocab.NUM_OBJECTS)
    s[:, 3] = rng.integers(0, len(vocab.COLORS), vocab.NUM_OBJECTS)
    s[:, 4] = rng.integers(0, len(vocab.MATERIALS), vocab.NUM_OBJECTS)
    s[:, 5] = rng.integers(0, len(vocab.SHAPES), vocab.NUM_OBJECTS)
    return s, rng.uniform(0.0, 360.0, vocab.NUM_OBJECTS)


def test_counts_equal_the_reference_implementation_on_random_scenes():
    rng = np.random.default_rng(11)
    decisive = 0
    for case in range(120):
        state, rotations = _random_scene(rng)
        cameras, _ = sample_jitter(rng)
        camera = tuple(cameras[["C", "L", "R"][case % 3]])
        targets = sorted(rng.choice(10, size=int(rng.integers(1, 11)), replace=False).tolist())
        fast = fast_visible_pixel_counts(state, rotations, camera, targets)
        np.testing.assert_array_equal(
            fast, reference_fast_visible_pixel_counts(state, rotations, camera, targets)
        )
        if case % 4 == 0:
            for stride in (1, 3):
                np.testing.assert_array_equal(
                    visible_pixel_counts(state, rotations, camera, None, stride=stride),
                    reference_visible_pixel_counts(state, rotations, camera, None, stride=stride),
                )
        decisive += int(((fast[targets] > 0) & (fast[targets] < 150)).sum())
    assert decisive > 10  # the scenes do produce partly hidden objects


def _moves(seed: int):
    """(state, rotations, camera, targets) as the sampler asks them: the same jittered cameras,
    one object moved, resized or reshaped per step (so most solids repeat from call to call)."""
    rng = np.random.default_rng(seed)
    state, rotations = _random_scene(rng)
    cameras, _ = sample_jitter(rng)
    for _ in range(40):
        obj = int(rng.integers(0, 10))
        col = int(rng.choice([0, 1, 2, 5]))
        if col < 2:
            state[obj, col] = np.clip(state[obj, col] + rng.integers(-4, 5), -24, 24)
        else:
            state[obj, col] = rng.integers(0, 3)
        targets = sorted(rng.choice(10, size=int(rng.integers(1, 6)), replace=False).tolist())
        for view in ("C", "L", "R"):
            yield state.copy(), rotations, tuple(cameras[view]), targets


def _assert_like_reference(seed: int) -> None:
    for state, rotations, camera, targets in _moves(seed):
        np.testing.assert_array_equal(
            fast_visible_pixel_counts(state, rotations, camera, targets),
            reference_fast_visible_pixel_counts(state, rotations, camera, targets),
        )
        np.testing.assert_array_equal(
            visible_pixel_counts(state, rotations, camera, targets),
            reference_visible_pixel_counts(state, rotations, camera, targets),
        )


def test_reused_solids_give_the_reference_counts_step_after_step():
    _assert_like_reference(5)


def test_an_emptied_memo_gives_the_same_counts(monkeypatch):
    import tvr.trance.world.occlusion as occlusion

    monkeypatch.setattr(occlusion, "_CACHE_BYTES", 0)
    monkeypatch.setattr(occlusion, "_CACHED_SOLIDS", 3)
    monkeypatch.setattr(occlusion, "_CACHED_CAMERAS", 1)
    _assert_like_reference(6)

