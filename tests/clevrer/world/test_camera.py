"""The CLEVRER camera: what is in view, how far outside a sphere lies."""

import numpy as np

from tvr.clevrer.world.camera import CAMERA, in_view, outside_distance, project


def test_origin_is_in_view_near_the_image_centre():
    xy = project(np.array([0.0, 0.0, 0.0]))
    assert in_view(np.array([0.0, 0.0, 0.0]))
    assert abs(xy[0] - 240) < 1 and abs(xy[1] - 160) < 1


def test_points_behind_the_camera_or_nan_are_not_in_view():
    behind = 2 * np.asarray(CAMERA.location) - 0.0  # the camera looks at the origin, away from here
    assert not in_view(behind)
    assert not in_view(np.array([np.nan, 0.0, 0.0]))
    assert outside_distance(behind, 0.5) == np.inf


def test_margin_shrinks_the_view():
    p = np.array([[0.0, 0.0, 0.0]])
    assert in_view(p, margin_px=100)[0]
    assert not in_view(p, margin_px=170)[0]  # 160 px from the top and bottom borders


def test_outside_distance_is_positive_only_when_the_whole_sphere_is_out():
    right_edge = CAMERA.rays(np.array(480.0), np.array(160.0))
    c = np.asarray(CAMERA.location)
    on_floor = c + right_edge * (-c[2] / right_edge[2])  # the floor point at the right border
    assert abs(outside_distance(on_floor, 0.0)) < 1e-6
    assert outside_distance(on_floor, 0.5) < 0  # half of it still in the image
    far_right = on_floor + np.array([3.0, 3.0, 0.0])  # further right in the image
    assert outside_distance(far_right, 0.5) > 0
    assert not in_view(far_right)
