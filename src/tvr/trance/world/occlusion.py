"""Which objects a camera sees: the sampler's pluggable occlusion check (rules B1 and B3).

An object is *occluded* in a view when fewer than `OCCLUSION_THRESHOLD` (150) of its pixels show
in a 320x240 image, as in the public release. The default check here is geometric: it casts one
ray per pixel centre inside each asked object's screen box, against analytic shapes (sphere,
vertical cylinder, cube as an oriented box) of every rendered object, and counts the pixels where
the asked object is the nearest hit. The rendering module measures it against Cycles' object-index
pass (docs/rendering.md).

Each camera keeps what it computed (solids, screen boxes, a target's rays, which rays each other
solid hides), so the sampler's repeated checks after one-object steps recompute only what changed.

Any callable with the signature of `OcclusionCheck.__call__` can replace it in the sampler.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from functools import lru_cache
from typing import Protocol

import numpy as np

from tvr.trance.world import vocab
from tvr.trance.world.camera import IMAGE_HEIGHT, IMAGE_WIDTH, Camera
from tvr.trance.world.simulator import COL_SHAPE, COL_SIZE, COL_X, COL_Y

OCCLUSION_THRESHOLD = 150
_SPHERE, _CUBE, _CYLINDER = (
    vocab.SHAPES.index("sphere"),
    vocab.SHAPES.index("cube"),
    vocab.SHAPES.index("cylinder"),
)


class OcclusionCheck(Protocol):
    """Visible pixel counts of objects in one view of one state."""

    def __call__(
        self,
        state: np.ndarray,
        rotations: np.ndarray,
        camera_location: tuple[float, float, float],
        targets: list[int] | None = None,
    ) -> np.ndarray:
        """(10,) int pixel counts for the target objects (others -1); invisible-area objects 0."""
        ...


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
    """Ray parameter t of the first hit with a solid (inf where the ray misses).

    The caller holds `np.errstate(divide="ignore", invalid="ignore")` (one context per check,
    not one per solid: entering it costs as much as a small hit test)."""
    shape, c, r, half, theta = solid
    o = origin - c  # (3,)
    if shape == _SPHERE:
        b = dirs @ o
        cc = o @ o - r * r
        disc = b * b - cc
        ok = disc >= 0
        s = np.sqrt(np.where(ok, disc, 0.0))
        t0 = -b - s
        return np.where(ok & (t0 > 0), t0, np.inf)
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
    inv = 1.0 / dl
    t1 = (-half - ol) * inv
    t2 = (half - ol) * inv
    # np.nanmax/np.nanmin are these reductions plus an all-NaN warning check (3x their cost)
    tmin = np.fmax.reduce(np.minimum(t1, t2), axis=1)
    tmax = np.fmin.reduce(np.maximum(t1, t2), axis=1)
    ok = (tmax >= tmin) & (tmin > 0)
    return np.where(ok, tmin, np.inf)


_CORNER_SIGNS = np.array(
    [[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], dtype=np.float64
)


def _screen_boxes(
    camera: Camera, solids: dict[int, tuple]
) -> dict[int, tuple[int, int, int, int] | None]:
    """Pixel boxes (u0, v0, u1, v1), end exclusive, that hold each object's projection."""
    if not solids:
        return {}
    keys = list(solids)
    centres = np.array([solids[k][1] for k in keys])  # (n, 3)
    extents = np.array([[solids[k][2], solids[k][2], solids[k][3]] for k in keys])  # (n, 3)
    corners = centres[:, None, :] + _CORNER_SIGNS[None, :, :] * extents[:, None, :]  # (n, 8, 3)
    uv, z = camera.project(corners)
    behind = (z <= 0).any(axis=1).tolist()
    u0s = np.maximum(0, np.floor(uv[:, :, 0].min(axis=1))).tolist()
    u1s = np.minimum(camera.width, np.ceil(uv[:, :, 0].max(axis=1)) + 1).tolist()
    v0s = np.maximum(0, np.floor(uv[:, :, 1].min(axis=1))).tolist()
    v1s = np.minimum(camera.height, np.ceil(uv[:, :, 1].max(axis=1)) + 1).tolist()
    boxes: dict[int, tuple[int, int, int, int] | None] = {}
    for n, k in enumerate(keys):
        u0, v0, u1, v1 = int(u0s[n]), int(v0s[n]), int(u1s[n]), int(v1s[n])
        boxes[k] = None if behind[n] or not (u0 < u1 and v0 < v1) else (u0, v0, u1, v1)
    return boxes


@lru_cache(maxsize=64)
def _camera(location: tuple[float, float, float], width: int, height: int) -> Camera:
    return Camera(location, width=width, height=height)


# A solid is keyed by what it is made of: (shape, size, x, y, rotation) as the state holds them.
_SolidKey = tuple
_CACHE_BYTES = 16 * 2**20  # per camera; a camera's memo is emptied when it grows past this
_CACHED_CAMERAS = 6
_CACHED_SOLIDS = 4096


class _CameraMemo:
    """Everything one camera has computed, reused by every later call with the same camera.

    The sampler checks the same jittered cameras again after every step of a sample, and a step
    changes one object: the screen boxes of the others, the rays and hit depths of a target, and
    which of its rays each other solid hides are all the same as in the last call. They are
    recomputed only for solids never seen by this camera (the same arithmetic on the same
    inputs, so the counts are those of a computation from scratch)."""

    def __init__(self, location: tuple[float, float, float], width: int, height: int):
        self.camera = _camera(location, width, height)
        self.origin = np.asarray(location, dtype=np.float64)
        self.scale = width / IMAGE_WIDTH  # the threshold is defined at 320x240
        self.right, self.up, self.forward = self.camera.basis
        self.solids: dict[_SolidKey, tuple] = {}
        self.boxes: dict[_SolidKey, tuple[int, int, int, int] | None] = {}
        self.targets: dict[tuple, tuple[np.ndarray, np.ndarray] | None] = {}
        self.unhidden: dict[tuple, np.ndarray] = {}
        self.counts: dict[tuple, int] = {}
        self.nbytes = 0

    def add_solids(self, keys: list[_SolidKey]) -> None:
        """Solids and screen boxes of the keys not seen yet."""
        if self.nbytes > _CACHE_BYTES or len(self.boxes) + len(self.counts) > _CACHED_SOLIDS:
            for memo in (self.solids, self.boxes, self.targets, self.unhidden, self.counts):
                memo.clear()
            self.nbytes = 0
        new = {k: _solid_of_key(k) for k in dict.fromkeys(keys) if k not in self.boxes}
        if new:
            self.solids.update(new)
            self.boxes.update(_screen_boxes(self.camera, new))

    def rays(self, u0: int, v0: int, u1: int, v1: int, stride: int) -> np.ndarray:
        """Unit rays through the pixel centres of a box, row by row (as `Camera.rays` gives
        them for a meshgrid of the box: the same arithmetic per ray, so the same bits)."""
        camera = self.camera
        f = camera.focal_px
        x = (np.arange(u0, u1, stride) + 0.5 - camera.width / 2.0) / f
        y = (camera.height / 2.0 - (np.arange(v0, v1, stride) + 0.5)) / f
        d = (x[None, :, None] * self.right + y[:, None, None] * self.up + self.forward).reshape(
            -1, 3
        )
        return d / np.sqrt((d * d).sum(axis=-1, keepdims=True))

    def target(self, key: _SolidKey, stride: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(rays, hit depths) of the box's rays that hit the solid; None when none do."""
        memo = (stride, key)
        if memo not in self.targets:
            u0, v0, u1, v1 = self.boxes[key]
            dirs = self.rays(u0, v0, u1, v1, stride)
            t_me = _hit(self.origin, dirs, self.solids[key])
            mine = np.isfinite(t_me)
            hit = (dirs[mine], t_me[mine]) if mine.any() else None
            self.targets[memo] = hit
            self.nbytes += 0 if hit is None else hit[0].nbytes + hit[1].nbytes
        return self.targets[memo]

    def count(self, key: _SolidKey, occluders: list[_SolidKey], stride: int) -> int:
        """Pixels of the solid `key` that none of `occluders` hides (scaled to 320x240)."""
        if self.boxes[key] is None:
            return 0
        hit = self.target(key, stride)
        if hit is None:
            return 0
        dirs, t_me = hit
        u0, v0, u1, v1 = self.boxes[key]
        boxes = self.boxes
        overlapping = tuple(
            sorted(
                other
                for other in occluders
                if (b := boxes[other]) is not None
                and b[0] < u1
                and b[2] > u0
                and b[1] < v1
                and b[3] > v0
            )
        )
        done = self.counts.get((stride, key, overlapping))
        if done is not None:
            return done
        front = np.ones(len(t_me), dtype=bool)
        for other in overlapping:
            memo = (stride, key, other)
            unhidden = self.unhidden.get(memo)
            if unhidden is None:
                unhidden = ~(_hit(self.origin, dirs, self.solids[other]) < t_me)
                self.unhidden[memo] = unhidden
                self.nbytes += unhidden.nbytes
            front &= unhidden
        done = round(float(front.sum()) * stride * stride / (self.scale * self.scale))
        self.counts[(stride, key, overlapping)] = done
        return done


_MEMOS: OrderedDict[tuple, _CameraMemo] = OrderedDict()


def _camera_memo(location: tuple[float, float, float], width: int, height: int) -> _CameraMemo:
    """The memo of a camera (the last `_CACHED_CAMERAS` cameras are kept)."""
    k = (location, width, height)
    memo = _MEMOS.get(k)
    if memo is None:
        memo = _MEMOS[k] = _CameraMemo(location, width, height)
        while len(_MEMOS) > _CACHED_CAMERAS:
            _MEMOS.popitem(last=False)
    else:
        _MEMOS.move_to_end(k)
    return memo


def _solid_of_key(key: _SolidKey) -> tuple[int, np.ndarray, float, float, float]:
    """`_solid` from a key (shape, size, x, y, rotation)."""
    shape, size, x, y, rotation = key
    state = np.zeros((1, 6))
    state[0, COL_SHAPE], state[0, COL_SIZE], state[0, COL_X], state[0, COL_Y] = shape, size, x, y
    return _solid(state, np.array([rotation], dtype=np.float64), 0)


class _View:
    """One view of one state: the keys of its rendered solids, counted through the camera memo."""

    def __init__(
        self,
        state: np.ndarray,
        rotations: np.ndarray,
        camera_location: tuple[float, float, float],
        width: int,
        height: int,
    ):
        location = tuple(float(c) for c in camera_location)
        self.memo = _camera_memo(location, width, height)
        rows = state[:, [COL_SHAPE, COL_SIZE, COL_X, COL_Y]].tolist()
        rots = np.asarray(rotations, dtype=np.float64).tolist()
        lo, hi = vocab.VISIBLE_MIN, vocab.VISIBLE_MAX
        self.keys = {
            i: (int(shape), int(size), x, y, rots[i])
            for i, (shape, size, x, y) in enumerate(rows)
            if lo <= x <= hi and lo <= y <= hi
        }
        self.memo.add_solids(list(self.keys.values()))

    def count(self, i: int, stride: int) -> int:
        """Pixels of object i that show (scaled to 320x240; estimated when stride > 1)."""
        key = self.keys.get(i)
        if key is None:
            return 0
        occluders = [k for j, k in self.keys.items() if j != i]
        return self.memo.count(key, occluders, stride)


def visible_pixel_counts(
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
    view = _View(state, rotations, camera_location, width, height)
    counts = np.full(n, -1, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in targets:
            counts[i] = view.count(i, stride)
    return counts


def fast_visible_pixel_counts(
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
    n = state.shape[0]
    targets = list(range(n)) if targets is None else list(targets)
    view = _View(state, rotations, camera_location, IMAGE_WIDTH, IMAGE_HEIGHT)
    counts = np.full(n, -1, dtype=np.int64)
    with np.errstate(divide="ignore", invalid="ignore"):
        for i in targets:
            estimate = view.count(i, 3)
            if abs(estimate - threshold) <= margin * threshold:
                estimate = view.count(i, 1)
            counts[i] = estimate
    return counts


def fast_visible_pixel_counts_of_objects(
    objects: list[dict], camera_location: tuple[float, float, float], lights: object = None
) -> np.ndarray:
    """`fast_visible_pixel_counts` (the sampler's default) for a list of object dicts; only its
    decisions (< 150 or not) are exact, the counts far from the threshold are estimates."""
    from tvr.trance.world.simulator import objects_to_array

    rotations = np.array([float(o.get("rotation", 0.0)) for o in objects])
    return fast_visible_pixel_counts(objects_to_array(objects), rotations, camera_location)
