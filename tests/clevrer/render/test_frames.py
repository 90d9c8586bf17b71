"""The fixed-view raster frames: the same picture as the engine's full render, objects where the
world's camera projects them, masks that agree with the geometry, repeatable."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tvr.clevrer.render.scene import OBJECT_RADIUS, FrameScenes
from tvr.clevrer.render.video import frame_scenes
from tvr.clevrer.world.camera import CAMERA


def test_fast_frame_equals_the_engines_full_render(run, raster):
    objects, trace = run
    scenes = frame_scenes(objects, trace)
    engine = raster._r  # a tvr.render.frames.FrameRenderer, a RasterRenderer underneath
    for t in (0, 5):
        desc = scenes.frame(t)
        img, ids = raster.render(desc)
        with engine.ctx:
            full = engine.render_image(desc)
            full_ids = engine.render_mask(desc)
        diff = np.abs(img.astype(int) - full.astype(int))
        assert diff.max() <= 2, diff.max()  # only the two sRGB encodings' rounding differs
        assert np.array_equal(ids, full_ids)


@pytest.mark.parametrize(("shape", "x", "y"), [("sphere", 0.0, 0.0), ("cube", 1.2, -0.8),
                                              ("cylinder", -1.0, 1.5)])  # fmt: skip
def test_object_appears_where_the_camera_projects_it(raster, shape, x, y):
    z = OBJECT_RADIUS / math.sqrt(2.0) if shape == "cube" else OBJECT_RADIUS
    loc = np.array([[[x, y, z]]])
    quat = np.array([[[0.0, 0.0, 0.0, 1.0]]])
    scenes = FrameScenes([{"color": "red", "material": "rubber", "shape": shape}], loc, quat)
    _, ids = raster.render(scenes.frame(0))
    vs, us = np.nonzero(ids == 0)
    assert len(us) > 300
    (u, v), _ = CAMERA.project(loc[0, 0])
    # the mask's centroid sits near the projected centre (a solid's silhouette centroid is not
    # exactly the projected centre under perspective: within 2 px at this distance)
    assert abs((us + 0.5).mean() - u) < 2.0 and abs((vs + 0.5).mean() - v) < 2.0
    if shape == "sphere":
        # a sphere's silhouette: about the disk of the projected radius
        d = np.linalg.norm(np.asarray(CAMERA.location) - loc[0, 0])
        r_px = CAMERA.focal_px * OBJECT_RADIUS / math.sqrt(d * d - OBJECT_RADIUS**2)
        assert len(us) == pytest.approx(math.pi * r_px * r_px, rel=0.06)


def test_orientation_turns_the_cube(raster):
    loc = np.array([[[0.0, 0.0, OBJECT_RADIUS / math.sqrt(2.0)]]] * 2)
    a = math.radians(45.0)
    quat = np.array([[[0.0, 0.0, 0.0, 1.0]], [[0.0, 0.0, math.sin(a / 2), math.cos(a / 2)]]])
    scenes = FrameScenes([{"color": "blue", "material": "metal", "shape": "cube"}], loc, quat)
    m0 = raster.render(scenes.frame(0), image=False)[1] == 0
    m1 = raster.render(scenes.frame(1), image=False)[1] == 0
    assert (m0 ^ m1).sum() > 50  # a quarter turn about z changes the silhouette


def test_renders_repeat_exactly(run, raster):
    objects, trace = run
    scenes = frame_scenes(objects, trace)
    a = raster.render(scenes.frame(3))
    raster.render(scenes.frame(1))
    b = raster.render(scenes.frame(3))
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


def test_materials_look_like_their_colours(run, raster):
    objects, trace = run
    img, ids = raster.render(frame_scenes(objects, trace).frame(0))
    red = img[ids == 0].astype(float).mean(axis=0)
    blue = img[ids == 1].astype(float).mean(axis=0)
    green = img[ids == 2].astype(float).mean(axis=0)
    assert red[0] > red[1] + 30 and red[0] > red[2] + 30
    assert blue[2] > blue[0] + 20
    assert green[1] > green[0] + 15 and green[1] > green[2] + 15
    floor = img[ids < 0].astype(float).mean(axis=0)
    assert 90 < floor.mean() < 170 and np.ptp(floor) < 15  # a grey floor


def test_glass_is_refused(raster):
    from tvr.render.scene import SceneObject

    scenes = FrameScenes(
        [{"color": "red", "material": "rubber", "shape": "cube"}],
        np.zeros((1, 1, 3)),
        np.array([[[0.0, 0.0, 0.0, 1.0]]]),
    )
    desc = scenes.frame(0)
    glass = SceneObject(0, "cube", "glass", "red", (1.0, 0.0, 0.0), (0, 0, 0.3), (0.3,) * 3, 0, 0.3)
    from dataclasses import replace

    with pytest.raises(ValueError, match="no glass"):
        raster.render(replace(desc, objects=(glass,)))
