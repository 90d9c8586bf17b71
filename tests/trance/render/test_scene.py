"""The scene description and meshes: placement, sizes, the invisible area, the shared camera."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tvr.trance.render import meshes
from tvr.trance.render.fixtures import random_samples
from tvr.trance.render.presets import PRESETS, get_preset
from tvr.trance.render.raster import projection_matrix, view_matrix
from tvr.trance.render.scene import build_scene, sample_views
from tvr.trance.world.camera import Camera


def test_sample_views_names_and_invisible_objects_left_out(sample):
    views = sample_views(sample)
    assert [n for n, _ in views] == [
        "hand-init.C.png", "hand-fin.L.png", "hand-fin.C.png", "hand-fin.R.png",
    ]  # fmt: skip
    init, fin = views[0][1], views[2][1]
    assert [o.index for o in init.objects] == [0, 1, 2, 3, 4, 5, 6]
    assert [o.index for o in fin.objects] == [1, 2, 3, 4, 5, 6]  # object 0 moved out
    assert fin.camera == tuple(sample["cameras"]["C"])
    assert views[1][1].camera == tuple(sample["cameras"]["L"])
    key = next(light for light in init.lights if light.name == "key")
    assert key.location == tuple(sample["lights"]["key"])


@pytest.mark.parametrize("shape", ["cube", "sphere", "cylinder"])
@pytest.mark.parametrize("size,r", [("large", 0.9), ("medium", 0.6), ("small", 0.3)])
def test_objects_rest_on_the_ground_with_their_footprint(shape, size, r):
    obj = {"shape": shape, "size": size, "color": "red", "material": "metal",
           "position": [4, -6], "rotation": 45.0}  # fmt: skip
    (o,) = build_scene([obj], (9.0, 0.0, 6.0)).objects
    m = meshes.unit_mesh(shape)
    world = m.vertices @ o.matrix()[:3, :3].T + o.matrix()[:3, 3]
    assert world[:, 2].min() == pytest.approx(0.0, abs=1e-6)
    centre = np.array([4 * 0.15, -6 * 0.15])
    footprint = np.linalg.norm(world[:, :2] - centre, axis=1).max()
    height = world[:, 2].max()
    if shape == "cube":  # half diagonal r, less what the bevel rounds off: r (1 - b (1 - 1/sqrt 2))
        b = meshes.CUBE_BEVEL
        assert footprint == pytest.approx(r * (1 - b * (1 - 1 / math.sqrt(2))), rel=1e-3)
        assert height == pytest.approx(r * math.sqrt(2), rel=1e-5)
    else:
        assert footprint == pytest.approx(r, rel=1e-3)
        assert height == pytest.approx(2 * r, rel=1e-5)


@pytest.mark.parametrize("shape", ["cube", "sphere", "cylinder"])
def test_meshes_face_outwards(shape):
    m = meshes.unit_mesh(shape)
    v, f = m.vertices, m.faces
    face_n = np.cross(v[f[:, 1]] - v[f[:, 0]], v[f[:, 2]] - v[f[:, 0]])
    assert ((face_n * m.normals[f].mean(axis=1)).sum(axis=1) > 0).all()
    assert np.allclose(np.linalg.norm(m.normals, axis=1), 1.0, atol=1e-5)


def test_raster_projection_is_the_shared_camera():
    rng = np.random.default_rng(0)
    cam = Camera((9.7, -0.3, 6.1))
    points = rng.uniform(-3, 3, size=(50, 3)) * (1, 1, 0.3)
    uv, _ = cam.project(points)
    clip = (
        np.c_[points, np.ones(50)]
        @ (projection_matrix(320, 240, cam.hfov) @ view_matrix(cam.location)).T
    )
    ndc = clip[:, :2] / clip[:, 3:]
    u = (ndc[:, 0] + 1) / 2 * 320
    v = (1 - ndc[:, 1]) / 2 * 240
    assert np.allclose(np.c_[u, v], uv, atol=1e-6)


def test_fixture_samples_come_from_the_sampler():
    from tvr.trance.data.files import check_consistent
    from tvr.trance.data.sample import Sample

    samples = random_samples(3, seed=2)
    assert [s["id"] for s in samples] == ["s000000", "s000001", "s000002"]
    for d in samples:
        assert check_consistent(Sample.from_dict(d)) is None


def test_presets():
    assert get_preset("paper").samples == 512
    assert get_preset("paper").max_bounces == 4 and get_preset("paper").transparent_bounces == 8
    assert get_preset("default").denoise and 1 <= get_preset("preview").samples <= 4
    assert set(PRESETS) == {"preview", "default", "paper"}
    with pytest.raises(ValueError, match="preview"):
        get_preset("fast")
