"""The raster frame's shortcuts change nothing: the mask from the colour pass equals the mask
pass, the shadow map cleared only where the last frame drew equals one cleared whole, and the
floor's shadow regions hold every floor pixel whose shadow filter can see an object."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tvr.clevrer.render.scene import OBJECT_RADIUS, FrameScenes
from tvr.clevrer.render.video import frame_scenes
from tvr.render.frames import _model_matrices


def _jumping_run() -> FrameScenes:
    """Two frames: a cube and a sphere, both far from where they were the frame before."""
    objects = [
        {"color": "red", "material": "rubber", "shape": "cube"},
        {"color": "cyan", "material": "metal", "shape": "sphere"},
    ]
    cube_z = OBJECT_RADIUS / math.sqrt(2.0)
    loc = np.array(
        [
            [[-2.0, -1.5, cube_z], [1.0, 1.0, OBJECT_RADIUS]],
            [[2.0, 1.5, cube_z], [-1.5, 0.5, OBJECT_RADIUS]],
        ]
    )
    quat = np.tile([0.0, 0.0, 0.0, 1.0], (2, 2, 1))
    return FrameScenes(objects, loc, quat)


def test_mask_of_the_colour_pass_equals_the_mask_pass(run, raster):
    objects, trace = run
    scenes = frame_scenes(objects, trace)
    engine = raster._r
    for t in (0, 4):
        desc = scenes.frame(t)
        img, ids = raster.render(desc)
        _, mask_only = raster.render(desc, image=False)
        assert np.array_equal(ids, mask_only)
        assert (ids >= 0).sum() > 1000
        with engine.ctx:
            colour_only, _ = engine._render_rgb(desc)  # the engine's shader, no index output
        assert np.array_equal(img, colour_only)


def _shadow_map(engine) -> bytes:
    with engine.ctx:
        return engine._shadow_tex["opaque"].read()


def test_partly_cleared_shadow_map_equals_a_whole_clear(raster):
    scenes = _jumping_run()
    engine = raster._r
    raster.render(scenes.frame(0))
    img, ids = raster.render(scenes.frame(1))  # clears only where frame 0 drew
    partial = _shadow_map(engine)
    assert engine._shadow_dirty  # the texels frame 1 drew, to clear next time
    engine._shadow_dirty = None  # the next frame clears the whole map
    img_whole, ids_whole = raster.render(scenes.frame(1))
    assert partial == _shadow_map(engine)
    assert np.array_equal(img, img_whole) and np.array_equal(ids, ids_whole)
    depth = np.frombuffer(partial, dtype=np.float32)
    assert 0 < (depth < 1.0).sum() < depth.size // 100  # both objects, nothing left of frame 0


def _floor_points(engine, desc) -> np.ndarray:
    """(H, W, 2): where each pixel centre's ray meets the floor z = 0."""
    h, w = desc.height, desc.width
    inv = np.linalg.inv(engine.viewproj(desc))
    u, v = np.meshgrid((np.arange(w) + 0.5) / w * 2 - 1, 1 - (np.arange(h) + 0.5) / h * 2)
    ndc = np.stack([u, v, np.zeros_like(u), np.ones_like(u)], axis=-1)
    near = ndc.copy()
    near[..., 2] = -1.0
    a, b = near @ inv.T, ndc @ inv.T
    a, b = a[..., :3] / a[..., 3:], b[..., :3] / b[..., 3:]
    s = a[..., 2] / (a[..., 2] - b[..., 2])
    return (a + (b - a) * s[..., None])[..., :2]


def _inside_convex(points: np.ndarray, polygon: np.ndarray) -> np.ndarray:
    """Points (N, 2) inside or on a convex polygon (R, 2) of either orientation."""
    edge = np.roll(polygon, -1, axis=0) - polygon
    rel = points[:, None, :] - polygon[None]
    cross = edge[None, :, 0] * rel[..., 1] - edge[None, :, 1] * rel[..., 0]
    return (cross >= -1e-12).all(axis=1) | (cross <= 1e-12).all(axis=1)


@pytest.mark.parametrize("t", [0, 5])
def test_shadow_regions_hold_every_floor_pixel_the_filter_can_darken(run, raster, t):
    objects, trace = run
    desc = frame_scenes(objects, trace).frame(t)
    engine = raster._r
    _, ids = raster.render(desc)  # the shadow map of this frame
    size = engine.shadow_size
    occupied = np.frombuffer(_shadow_map(engine), dtype=np.float32).reshape(size, size) < 1.0
    # a tap reads the texel it falls in: within the taps' reach plus half a texel's diagonal
    reach = engine._tap_reach * size + math.sqrt(0.5)
    floor = _floor_points(engine, desc)[ids < 0]
    q = np.concatenate([floor, np.zeros((len(floor), 1)), np.ones((len(floor), 1))], 1)
    q = q @ engine._shadow_mat.T
    uv = q[:, :2] / q[:, 3:] * size  # texel units
    span = math.ceil(reach) + 1
    ys, xs = np.nonzero(occupied)
    candidate = np.flatnonzero(
        (uv[:, 0] > xs.min() - span) & (uv[:, 0] < xs.max() + 1 + span)
        & (uv[:, 1] > ys.min() - span) & (uv[:, 1] < ys.max() + 1 + span)
    )  # fmt: skip
    near = np.zeros(len(uv), bool)
    base = np.floor(uv[candidate]).astype(int)
    for dx in range(-span, span + 1):
        for dy in range(-span, span + 1):
            tx, ty = base[:, 0] + dx, base[:, 1] + dy
            ok = (tx >= 0) & (tx < size) & (ty >= 0) & (ty < size)
            hit = np.zeros(len(base), bool)
            hit[ok] = occupied[ty[ok], tx[ok]]
            dist = np.hypot(uv[candidate, 0] - (tx + 0.5), uv[candidate, 1] - (ty + 0.5))
            near[candidate] |= hit & (dist <= reach)
    assert near.sum() > 500  # the objects' shadows and penumbrae show on the floor
    inside = np.zeros(len(uv), bool)
    for polygon in engine._shadow_polygons(desc, _model_matrices(desc)):
        inside |= _inside_convex(floor, polygon)
    drawn = engine._shadow_regions(desc, _model_matrices(desc)).reshape(len(desc.objects), -1, 3)
    assert np.allclose(drawn[..., 2], 0.0) and drawn.shape[1] % 3 == 0  # triangles on the floor
    assert not (near & ~inside).any(), f"{(near & ~inside).sum()} floor pixels left out"
    assert inside.sum() < 3 * near.sum()  # and the regions stay tight
