"""The geometric occlusion check: projection, hidden objects, and the fast check's decisions."""

import numpy as np

from tests.trance.helpers import LARGE, SMALL, state
from tvr.trance.sampling.sampler import SamplerConfig, ShardSampler
from tvr.trance.world.camera import CAMERA_BASE, Camera
from tvr.trance.world.occlusion import (
    OCCLUSION_THRESHOLD,
    fast_visible_pixel_counts,
    visible_pixel_counts,
)


def test_origin_projects_to_the_image_centre():
    uv, z = Camera(CAMERA_BASE["C"]).project(np.array([[0.0, 0.0, 0.0]]))
    assert np.allclose(uv[0], [160.0, 120.0]) and z[0] > 0


def test_a_small_object_right_behind_a_large_one_is_hidden():
    # the centre camera looks from +x: object 1 at x = -10 stands behind object 0 at x = 0
    s = state((0, 0, LARGE), (-10, 0, SMALL))
    rot = np.zeros(10)
    counts = visible_pixel_counts(s, rot, CAMERA_BASE["C"], [0, 1])
    assert counts[0] > 1000
    assert counts[1] < OCCLUSION_THRESHOLD
    # with the large one moved aside it shows
    aside = state((0, 20, LARGE), (-10, 0, SMALL))
    assert visible_pixel_counts(aside, rot, CAMERA_BASE["C"], [1])[1] >= OCCLUSION_THRESHOLD


def test_objects_out_of_view_count_zero_and_hide_nothing():
    s = state((0, 0, SMALL), (30, 0, LARGE))  # the large one stands in the invisible area, in front
    counts = visible_pixel_counts(s, np.zeros(10), CAMERA_BASE["C"])
    assert counts[1] == 0 and counts[0] >= OCCLUSION_THRESHOLD


def test_fast_check_makes_the_same_decisions():
    sampler = ShardSampler(SamplerConfig(occlusion=False), seed=9, shard=0)
    agree = total = 0
    for i in range(40):
        sample = sampler.sample(i)
        rot = np.array([o["rotation"] for o in sample.objects])
        for view in "LCR":
            exact = visible_pixel_counts(sample.initial_array, rot, sample.cameras[view])
            fast = fast_visible_pixel_counts(sample.initial_array, rot, sample.cameras[view])
            agree += int(((exact < OCCLUSION_THRESHOLD) == (fast < OCCLUSION_THRESHOLD)).sum())
            total += 10
    assert agree / total >= 0.995
