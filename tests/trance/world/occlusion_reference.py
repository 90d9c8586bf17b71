"""The occlusion check as it was before it was optimised, kept verbatim as the reference that
`tvr.trance.world.occlusion` must reproduce count for count (tests/trance/test_occlusion.py)."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from tvr.trance.world import vocab
from tvr.trance.world.camera import IMAGE_HEIGHT, IMAGE_WIDTH, Camera
from tvr.trance.world.occlusion import OCCLUSION_THRESHOLD
from tvr.trance.world.simulator import COL_SHAPE, COL_SIZE, COL_X, COL_Y

_SPHERE, _CUBE, _CYLINDER = (
    vocab.SHAPES.index("sphere"),
    vocab.SHAPES.index("cube"),
    vocab.SHAPES.index("cylinder"),
)


def _solid(
    state: np.ndarray, rotations: np.ndarray, i: int
) -> tuple[int, np.ndarray, float, float, float]:
    """(shape, centre xyz, radius r, half height, rotation radians) of object i in scene units."""
    shape = int(state[i, COL_SHAPE])
    r = vocab.RADIUS_SCENE[int(state[i, COL_SIZE])]
    x = float(state[i, COL_X]) * vocab.GRID_UNIT
    y = float(state[i, COL_Y]) * vocab.GRID_UNIT
    half = r / math.sqrt(2.0) if shape == _CUBE else r
    return shape, np.array([x, y, half]), r, half, math.radians(float(rotations[i]))


def _hit(origin: np.ndarray, dirs: np.ndarray, solid: tuple) -> np.ndarray:
    """Ray parameter t of the first hit with a solid (inf where the ray misses)."""
    shape, c, r, half, theta = solid
    o = origin - c  # (3,)
    n = dirs.shape[0]
    t = np.full(n, np.inf)
    if shape == _SPHERE:
        b = dirs @ o
        cc = o @ o - r * r
        disc = b * b - cc
        ok = disc >= 0
        s = np.sqrt(np.where(ok, disc, 0.0))
        t0 = -b - s
        t = np.where(ok & (t0 > 0), t0, np.inf)
        return t
    if shape == _CYLINDER:
        dx, dy, dz = dirs[:, 0], dirs[:, 1], dirs[:, 2]
        a = dx * dx + dy * dy
        b = o[0] * dx + o[1] * dy
        cc = o[0] ** 2 + o[1] ** 2 - r * r
        disc = b * b - a * cc
        ok = (disc >= 0) & (a > 1e-12)
        s = np.sqrt(np.where(ok, disc, 0.0))
        ts = (-b - s) / np.where(a > 1e-12, a, 1.0)
        zs = o[2] + ts * dz
        side = ok & (ts > 0) & (np.abs(zs) <= half)
        t = np.where(side, ts, np.inf)
        # top cap (the bottom one faces the ground and is never seen from above)
        with np.errstate(divide="ignore", invalid="ignore"):
            tc = (half - o[2]) / dz
        px = o[0] + tc * dx
        py = o[1] + tc * dy
        cap = (tc > 0) & (px * px + py * py <= r * r)
        return np.where(cap & (tc < t), tc, t)
    # cube: an oriented box rotated by theta about z, half extents (half, half, half)
    ct, st = math.cos(theta), math.sin(theta)
    rot = np.array([[ct, st, 0.0], [-st, ct, 0.0], [0.0, 0.0, 1.0]])  # world -> box frame
    ol = rot @ o
    dl = dirs @ rot.T
    with np.errstate(divide="ignore", invalid="ignore"):
        inv = 1.0 / dl
        t1 = (-half - ol) * inv
        t2 = (half - ol) * inv
    tmin = np.nanmax(np.minimum(t1, t2), axis=1)
    tmax = np.nanmin(np.maximum(t1, t2), axis=1)
    ok = (tmax >= tmin) & (tmin > 0)
    return np.where(ok, tmin, np.inf)


def _screen_boxes(
    camera: Camera, solids: dict[int, tuple]
) -> dict[int, tuple[int, int, int, int] | None]:
    """Pixel boxes (u0, v0, u1, v1), end exclusive, that hold each object's projection."""
    if not solids:
        return {}
    keys = list(solids)
    signs = np.array(
        [[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=np.float64
    )
    centres = np.array([solids[k][1] for k in keys])  # (n, 3)
    extents = np.array([[solids[k][2], solids[k][2], solids[k][3]] for k in keys])  # (n, 3)
    corners = centres[:, None, :] + signs[None, :, :] * extents[:, None, :]  # (n, 8, 3)
    uv, z = camera.project(corners)
    boxes: dict[int, tuple[int, int, int, int] | None] = {}
    for n, k in enumerate(keys):
        if (z[n] <= 0).any():
            boxes[k] = None
            continue
        u0 = max(0, math.floor(uv[n, :, 0].min()))
        u1 = min(camera.width, math.ceil(uv[n, :, 0].max()) + 1)
        v0 = max(0, math.floor(uv[n, :, 1].min()))
        v1 = min(camera.height, math.ceil(uv[n, :, 1].max()) + 1)
        boxes[k] = (u0, v0, u1, v1) if u0 < u1 and v0 < v1 else None
    return boxes


@lru_cache(maxsize=64)
def _camera(location: tuple[float, float, float], width: int, height: int) -> Camera:
    return Camera(location, width=width, height=height)


def reference_visible_pixel_counts(
    state: np.ndarray,
    rotations: np.ndarray,
    camera_location: tuple[float, float, float],
    targets: list[int] | None = None,
    width: int = IMAGE_WIDTH,
    height: int = IMAGE_HEIGHT,
    stride: int = 1,
) -> np.ndarray:
    """Pixels of each target object that show in the view (ray cast, one ray per pixel centre).

    Objects outside the visible area are not rendered: they count 0 and hide nothing. Entries of
    objects not in `targets` are -1. With `stride` > 1 only every stride-th pixel on each axis is
    cast and the count is scaled up: an estimate, stride^2 times cheaper.
    """
    n = state.shape[0]
    targets = list(range(n)) if targets is None else list(targets)
    camera = _camera(tuple(float(c) for c in camera_location), width, height)
    scale = width / IMAGE_WIDTH  # the threshold is defined at 320x240
    rendered = [
        i
        for i in range(n)
        if vocab.VISIBLE_MIN <= state[i, COL_X] <= vocab.VISIBLE_MAX
        and vocab.VISIBLE_MIN <= state[i, COL_Y] <= vocab.VISIBLE_MAX
    ]
    solids = {i: _solid(state, rotations, i) for i in rendered}
    boxes = _screen_boxes(camera, solids)
    origin = np.asarray(camera_location, dtype=np.float64)
    counts = np.full(n, -1, dtype=np.int64)
    for i in targets:
        if i not in solids or boxes[i] is None:
            counts[i] = 0
            continue
        u0, v0, u1, v1 = boxes[i]
        uu, vv = np.meshgrid(np.arange(u0, u1, stride) + 0.5, np.arange(v0, v1, stride) + 0.5)
        dirs = camera.rays(uu.ravel(), vv.ravel())
        t_me = _hit(origin, dirs, solids[i])
        mine = np.isfinite(t_me)
        if not mine.any():
            counts[i] = 0
            continue
        dirs, t_me = dirs[mine], t_me[mine]
        front = np.ones(len(t_me), dtype=bool)
        for j in rendered:
            b = boxes[j]
            if j == i or b is None or b[0] >= u1 or b[2] <= u0 or b[1] >= v1 or b[3] <= v0:
                continue
            front &= ~(_hit(origin, dirs, solids[j]) < t_me)
        counts[i] = round(float(front.sum()) * stride * stride / (scale * scale))
    return counts


def reference_fast_visible_pixel_counts(
    state: np.ndarray,
    rotations: np.ndarray,
    camera_location: tuple[float, float, float],
    targets: list[int] | None = None,
    threshold: int = OCCLUSION_THRESHOLD,
    margin: float = 0.5,
) -> np.ndarray:
    """The sampler's default check: exact counts near the threshold, estimates elsewhere.

    Counts on a grid of every third pixel first (9 times fewer rays); the targets whose estimate lies within
    `margin` x threshold of the threshold are counted again at full resolution. Decisions
    (count < threshold) match `visible_pixel_counts` unless an estimate errs by more than the
    margin; tests and docs/rendering.md measure the agreement.
    """
    counts = reference_visible_pixel_counts(state, rotations, camera_location, targets, stride=3)
    n = state.shape[0]
    targets = list(range(n)) if targets is None else list(targets)
    close = [i for i in targets if abs(counts[i] - threshold) <= margin * threshold]
    if close:
        exact = reference_visible_pixel_counts(state, rotations, camera_location, close)
        counts[close] = exact[close]
    return counts
