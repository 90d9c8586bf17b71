"""Frame scenes from a run's arrays: CLEVR's look, poses from quaternions, clear errors."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tvr.clevrer.render.scene import COLOR_RGB, LIGHTS, FrameScenes, half_extents
from tvr.clevrer.vocab import COLORS
from tvr.clevrer.world.camera import CAMERA
from tvr.render.scene import quaternion_matrix


def _one(shape="cube", quat=(0.0, 0.0, 0.0, 1.0), t=1):
    return FrameScenes(
        [{"color": "cyan", "material": "metal", "shape": shape}],
        np.tile([[[0.5, -0.5, 0.3]]], (t, 1, 1)),
        np.tile([[list(quat)]], (t, 1, 1)),
    )


def test_clevr_look_values():
    assert set(COLOR_RGB) == set(COLORS)
    assert COLOR_RGB["blue"] == (42, 75, 215)
    # CLEVR's base_scene.blend: key 78.5 W, fill 23.6 W, back 39.3 W
    assert [round(LIGHTS[n][1], 1) for n in ("key", "fill", "back")] == [78.5, 23.6, 39.3]
    desc = _one().frame(0)
    assert desc.width == 480 and desc.height == 320
    assert desc.camera == CAMERA.location and desc.floor_lines() == []
    assert [li.name for li in desc.lights] == ["key", "fill", "back", "sun"]


def test_quaternion_gives_the_rotation():
    a = math.radians(30.0)
    r = quaternion_matrix((0.0, 0.0, math.sin(a / 2), math.cos(a / 2)))
    assert np.allclose(
        r, [[math.cos(a), -math.sin(a), 0], [math.sin(a), math.cos(a), 0], [0, 0, 1]]
    )
    tilt = quaternion_matrix((math.sin(a / 2), 0.0, 0.0, math.cos(a / 2)))
    assert np.allclose(tilt @ [0, 0, 1], [0, -math.sin(a), math.cos(a)])
    assert np.allclose(quaternion_matrix((0, 0, 0, 2.0)), np.eye(3))  # normalised first


def test_model_matrix_scales_and_places():
    desc = _one("cube", (0.0, 0.0, math.sin(0.25), math.cos(0.25))).frame(0)
    o = desc.objects[0]
    m = o.matrix()
    assert np.allclose(m[:3, 3], [0.5, -0.5, 0.3])
    half = half_extents("cube")[0]
    assert np.allclose(np.linalg.norm(m[:3, :3], axis=0), [half] * 3)
    assert o.rgb == pytest.approx((41 / 255, 208 / 255, 208 / 255))


def test_bad_arrays_and_attributes_are_named():
    with pytest.raises(ValueError, match=r"location: expected \(T, 1, 3\)"):
        FrameScenes([{"color": "red", "material": "metal", "shape": "cube"}],
                    np.zeros((2, 2, 3)), np.zeros((2, 2, 4)))  # fmt: skip
    with pytest.raises(ValueError, match="orientation: expected"):
        FrameScenes([{"color": "red", "material": "metal", "shape": "cube"}],
                    np.zeros((2, 1, 3)), np.zeros((2, 1, 3)))  # fmt: skip
    with pytest.raises(ValueError, match="unknown colour"):
        FrameScenes([{"color": "pink", "material": "metal", "shape": "cube"}],
                    np.zeros((1, 1, 3)), np.zeros((1, 1, 4)))  # fmt: skip
    nan = FrameScenes([{"color": "red", "material": "metal", "shape": "cube"}],
                      np.full((1, 1, 3), np.nan), np.zeros((1, 1, 4)))  # fmt: skip
    with pytest.raises(ValueError, match="frame 0: object 0 is present"):
        nan.frame(0)


def test_absent_objects_are_left_out_even_with_nan_rows():
    scenes = FrameScenes(
        [{"color": "red", "material": "metal", "shape": "cube"},
         {"color": "gray", "material": "rubber", "shape": "sphere"}],
        np.array([[[0.0, 0.0, 0.25], [np.nan] * 3]]),
        np.array([[[0.0, 0.0, 0.0, 1.0], [np.nan] * 4]]),
        present=np.array([True, False]),
    )  # fmt: skip
    assert [o.index for o in scenes.frame(0).objects] == [0]
