"""SceneFacts from the official predicted-dynamics layout (a dynamics model's output, or ground truth).

The layout (what the official dynamics predictor writes and the released executor reads):
`{objects: [{id, color, material, shape}], predictions: [{what_if: -1 | id, trajectory:
[{frame_index, objects: [{color, material, shape, x, y}]}], collisions: [{frame, objects: [a,
b]}]}]}`. Trajectory objects and collision objects are named by their attributes (no two objects
of a video share all three); a collision object may also be given as its id. `x` is the object
centre's row and `y` its column on the predictor's GRID_HEIGHT x GRID_WIDTH = 100 x 150 grid (x
down, y right; its eval.py scales the 320x480 mask centroid by 100/320 and 150/480), so
`grid_to_image` multiplies both by 3.2 and swaps them into the 480x320 frame's (x right, y down).
The official predictor samples every 5th frame and rolls out past the video; ground truth in this
layout lists every frame and the exact collisions, and reads through the same path.

How facts are derived (`motion_from_samples`, `in_out_events`, the shared rules of both paths):
- Presence: an object is visible at frame f when it is listed at the latest sample at or before f
  (sample and hold); before the first sample nothing is visible. T = last frame_index + 1.
- In and out: `in` at each frame where an object becomes visible (not at frame 0), `out` at each
  frame where it stops being visible; the released executor does the same on its samples.
- Velocity by finite differences in image pixels per frame: at a sample, the mean of the backward
  and forward differences to the neighbouring samples where the object is listed, each divided by
  its real frame gap (the released executor divides by 5 whatever the gap); 0 if it has neither.
  Between two samples listing the object, position and velocity are interpolated linearly; else
  held.
- Collisions: as given (`collisions="given"`, the field is required). A pair listed again at the
  next sample is the same contact and is kept once, at its first frame (the predictor marks a
  contact at every sample it lasts; the released executor keeps each as a separate collision).
  With `collisions="proposed"` the field is ignored and collisions are found from the motion as
  the released executor's no-event mode does: a visible object's speed change peaks above
  DV_THRESHOLD (and below DV_MAX) at a sample, the nearest visible object is within
  DIST_THRESHOLD, and each pair collides at most once.
- Counterfactual runs (`what_if` = id) keep the video's ids; the removed object must not be listed.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from tvr.clevrer.programs.facts import Event, Motion, ObjectProps, Run, SceneFacts
from tvr.clevrer.vocab import (
    COLORS,
    FRAME_HEIGHT,
    FRAME_WIDTH,
    MATERIALS,
    SHAPES,
    SHOWN_FRAMES,
)
from tvr.core.errors import InputError

# the official dynamics predictor's position grid (temporal_reasoning/eval.py: --H 100 --W 150)
GRID_HEIGHT = 100
GRID_WIDTH = 150
# the released executor's collision proposals (simulation.py, grid units) in 480x320 pixels
GRID_TO_PIXEL = FRAME_WIDTH / GRID_WIDTH  # 3.2, the same as FRAME_HEIGHT / GRID_HEIGHT
DV_THRESHOLD = 0.1 * GRID_TO_PIXEL
DV_MAX = 5.0 * GRID_TO_PIXEL
DIST_THRESHOLD = 20.0 * GRID_TO_PIXEL


def grid_to_image(x: float, y: float) -> tuple[float, float]:
    """The layout's (x row, y column) on the 100x150 grid -> image (x right, y down) pixels."""
    return y * FRAME_WIDTH / GRID_WIDTH, x * FRAME_HEIGHT / GRID_HEIGHT


def image_to_grid(px: float, py: float) -> tuple[float, float]:
    """Image (x right, y down) pixels -> the layout's (x row, y column) on the 100x150 grid."""
    return py * GRID_HEIGHT / FRAME_HEIGHT, px * GRID_WIDTH / FRAME_WIDTH


def motion_from_samples(
    frames: Sequence[int], xy: np.ndarray, present: np.ndarray
) -> Motion:
    """Per-frame Motion from samples: frames (S,) increasing, xy (S,N,2) image px, present (S,N).

    Frames 0..frames[-1]; see the module docstring for presence, velocity and interpolation.
    """
    frames_a = np.asarray(frames, dtype=int)
    xy = np.asarray(xy, dtype=float)
    present = np.asarray(present, dtype=bool)
    n_samples, n_objects = present.shape
    if n_samples == 0:
        empty = np.zeros((0, n_objects, 2))
        return Motion(xy=empty, velocity=empty.copy(), visible=np.zeros((0, n_objects), bool))
    if np.any(np.diff(frames_a) <= 0) or frames_a[0] < 0:
        raise ValueError("sample frames must be increasing and >= 0")
    # velocity at the samples: mean of the one-sided differences to listed neighbours
    gaps = np.diff(frames_a).astype(float)[:, None, None]
    step = np.nan_to_num(np.diff(xy, axis=0)) / gaps  # (S-1, N, 2): sample k -> k+1
    pair = present[:-1] & present[1:]  # (S-1, N)
    total = np.zeros_like(xy)
    count = np.zeros(present.shape)
    total[1:] += np.where(pair[..., None], step, 0.0)  # backward differences
    count[1:] += pair
    total[:-1] += np.where(pair[..., None], step, 0.0)  # forward differences
    count[:-1] += pair
    vel = total / np.maximum(count, 1)[..., None]
    vel[~present] = 0.0
    # every frame: the latest sample at or before it, interpolated towards the next one
    n_frames = int(frames_a[-1]) + 1
    f = np.arange(n_frames)
    k = np.searchsorted(frames_a, f, side="right") - 1  # -1 before the first sample
    before = k < 0
    k = np.maximum(k, 0)
    k1 = np.minimum(k + 1, n_samples - 1)
    span = np.maximum(frames_a[k1] - frames_a[k], 1)
    t = ((f - frames_a[k]) / span)[:, None, None]
    visible = present[k] & ~before[:, None]
    both = (present[k] & present[k1] & (k1 > k)[:, None])[..., None]
    out_xy = np.where(both, xy[k] + t * (xy[k1] - xy[k]), xy[k])
    out_vel = np.where(both, vel[k] + t * (vel[k1] - vel[k]), vel[k])
    out_xy[~visible] = 0.0
    out_vel[~visible] = 0.0
    return Motion(xy=out_xy, velocity=out_vel, visible=visible)


def in_out_events(visible: np.ndarray) -> list[Event]:
    """`in` where an object becomes visible (after frame 0) and `out` where it stops being."""
    visible = np.asarray(visible, dtype=bool)
    events: list[Event] = []
    if visible.shape[0] < 2:
        return events
    change = visible[1:].astype(np.int8) - visible[:-1].astype(np.int8)
    for f, n in zip(*np.nonzero(change), strict=True):
        kind = "in" if change[f, n] > 0 else "out"
        events.append(Event(kind, int(f) + 1, (int(n),)))
    return events


def merge_repeated_collisions(
    collisions: Sequence[tuple[int, int, int]], sample_frames: Sequence[int]
) -> list[tuple[int, int, int]]:
    """Collisions (frame, a, b): a pair listed again at the next sample is kept once (first)."""
    index = {int(f): k for k, f in enumerate(sample_frames)}
    last_at: dict[frozenset[int], int] = {}
    kept: list[tuple[int, int, int]] = []
    for frame, a, b in sorted(collisions):
        pair = frozenset((a, b))
        k = index.get(frame)
        prev = last_at.get(pair)
        if k is not None:
            last_at[pair] = k
        if k is not None and prev is not None and prev in (k - 1, k):
            continue
        kept.append((frame, a, b))
    return kept


def propose_collisions(
    frames: Sequence[int], xy: np.ndarray, present: np.ndarray, motion: Motion
) -> list[tuple[int, int, int]]:
    """Collisions (frame, a, b) found from the motion alone (the released no-event mode)."""
    frames_a = np.asarray(frames, dtype=int)
    n_objects = present.shape[1]
    vel = motion.velocity[frames_a]  # the samples' velocities
    found: list[tuple[int, int, int]] = []
    pairs: set[frozenset[int]] = set()
    for o in range(n_objects):
        ks = np.nonzero(present[:, o])[0]
        if len(ks) < 3:
            continue
        dv = np.zeros(len(ks))
        dv[1:] = np.linalg.norm(np.diff(vel[ks, o], axis=0), axis=-1)
        for j in range(1, len(ks) - 1):
            if not (dv[j] > dv[j - 1] and dv[j] > dv[j + 1] and DV_THRESHOLD < dv[j] < DV_MAX):
                continue
            k = ks[j]
            others = [p for p in range(n_objects) if p != o and present[k, p]]
            if not others:
                continue
            dist = [float(np.linalg.norm(xy[k, p] - xy[k, o])) for p in others]
            partner = others[int(np.argmin(dist))]
            pair = frozenset((o, partner))
            if min(dist) < DIST_THRESHOLD and pair not in pairs:
                pairs.add(pair)
                found.append((int(frames_a[k]), o, partner))
    return found


# ---------------------------------------------------------------- validation


def _fail(source: str, field: str, message: str) -> InputError:
    return InputError(source, None, field, message)


def _get(obj: Any, key: str, source: str, field: str) -> Any:
    if not isinstance(obj, Mapping):
        raise _fail(source, field or "(top level)", f"expected an object, got {type(obj).__name__}")
    if key not in obj:
        raise _fail(source, f"{field}.{key}" if field else key, "missing")
    return obj[key]


def _list(value: Any, source: str, field: str) -> list:
    if not isinstance(value, list):
        raise _fail(source, field, f"expected a list, got {type(value).__name__}")
    return value


def _int(value: Any, source: str, field: str, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _fail(source, field, f"expected an integer, got {value!r}")
    if minimum is not None and value < minimum:
        raise _fail(source, field, f"expected an integer >= {minimum}, got {value}")
    return value


def _number(value: Any, source: str, field: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _fail(source, field, f"expected a finite number, got {value!r}")
    return float(value)


def _attrs(obj: Any, source: str, field: str) -> tuple[str, str, str]:
    out = []
    for key, allowed in (("color", COLORS), ("material", MATERIALS), ("shape", SHAPES)):
        value = _get(obj, key, source, field)
        if value not in allowed:
            raise _fail(source, f"{field}.{key}", f"unknown {key} {value!r}")
        out.append(value)
    return out[0], out[1], out[2]


def _object_id(
    obj: Any, by_attrs: Mapping[tuple[str, str, str], int], n: int, source: str, field: str
) -> int:
    if isinstance(obj, int) and not isinstance(obj, bool):
        if not 0 <= obj < n:
            raise _fail(source, field, f"object id {obj} is not one of 0..{n - 1}")
        return obj
    key = _attrs(obj, source, field)
    if key not in by_attrs:
        raise _fail(source, field, f"no object {' '.join(key)} in 'objects'")
    return by_attrs[key]


def _fast_object(
    obj: Any, by_attrs: Mapping[tuple[str, str, str], int]
) -> tuple[int | None, float, float]:
    """(id, x, y) of a plainly valid trajectory object, else (None, 0, 0) to validate slowly."""
    if type(obj) is not dict:
        return None, 0.0, 0.0
    o = by_attrs.get((obj.get("color"), obj.get("material"), obj.get("shape")))  # type: ignore[arg-type]
    x, y = obj.get("x"), obj.get("y")
    if o is None or type(x) not in (float, int) or type(y) not in (float, int):
        return None, 0.0, 0.0
    if not (math.isfinite(x) and math.isfinite(y)):
        return None, 0.0, 0.0
    return o, float(x), float(y)


def _read_run(
    pred: Any, where: str, by_attrs: Mapping[tuple[str, str, str], int], n: int,
    removed: int | None, collisions: str, source: str,
) -> Run:
    traj = _list(_get(pred, "trajectory", source, where), source, f"{where}.trajectory")
    frames: list[int] = []
    grid = np.zeros((len(traj), n, 2))
    present = np.zeros((len(traj), n), dtype=bool)
    for k, step in enumerate(traj):
        sf = f"{where}.trajectory[{k}]"
        frame = _int(_get(step, "frame_index", source, sf), source, f"{sf}.frame_index", 0)
        if frames and frame <= frames[-1]:
            raise _fail(source, f"{sf}.frame_index", f"frame {frame} does not follow {frames[-1]}")
        frames.append(frame)
        objs = _list(_get(step, "objects", source, sf), source, f"{sf}.objects")
        for j, obj in enumerate(objs):
            o, gx, gy = _fast_object(obj, by_attrs)
            if o is None:  # not plainly valid: find what is wrong, with its field
                of = f"{sf}.objects[{j}]"
                key = _attrs(obj, source, of)
                if key not in by_attrs:
                    raise _fail(source, of, f"no object {' '.join(key)} in 'objects'")
                o = by_attrs[key]
                gx = _number(_get(obj, "x", source, of), source, f"{of}.x")
                gy = _number(_get(obj, "y", source, of), source, f"{of}.y")
            if o == removed or present[k, o]:
                of = f"{sf}.objects[{j}]"
                if o == removed:
                    raise _fail(source, of, f"object {o} is listed in the run without it")
                name = " ".join(_attrs(obj, source, of))
                raise _fail(source, of, f"object {name} is listed twice in this frame")
            present[k, o] = True
            grid[k, o] = (gx, gy)
    xy = np.stack(grid_to_image(grid[..., 0], grid[..., 1]), axis=-1)
    motion = motion_from_samples(frames, xy, present)
    if collisions == "given":
        raw = _list(_get(pred, "collisions", source, where), source, f"{where}.collisions")
        found: list[tuple[int, int, int]] = []
        for c, col in enumerate(raw):
            cf = f"{where}.collisions[{c}]"
            frame = _int(_get(col, "frame", source, cf), source, f"{cf}.frame", 0)
            pair = _list(_get(col, "objects", source, cf), source, f"{cf}.objects")
            if len(pair) != 2:
                raise _fail(source, f"{cf}.objects", f"a collision has 2 objects, got {len(pair)}")
            a = _object_id(pair[0], by_attrs, n, source, f"{cf}.objects[0]")
            b = _object_id(pair[1], by_attrs, n, source, f"{cf}.objects[1]")
            if a == b:
                raise _fail(source, f"{cf}.objects", "an object cannot collide with itself")
            if removed in (a, b):
                raise _fail(source, f"{cf}.objects", f"object {removed} is not in this run")
            found.append((frame, a, b))
        found = merge_repeated_collisions(found, frames)
    else:
        found = propose_collisions(frames, xy, present, motion)
    events = in_out_events(motion.visible)
    events.extend(Event("collision", f, (a, b)) for f, a, b in found)
    events.sort(key=lambda e: (e.frame, e.kind, e.objects))
    return Run(events=tuple(events), motion=motion)


def facts_from_dynamics(
    data: Any, source: str = "<dynamics>", *, n_shown_frames: int = SHOWN_FRAMES,
    collisions: str = "given",
) -> SceneFacts:
    """SceneFacts from one video's predicted-dynamics layout (already parsed JSON).

    Args:
        data: the layout `{objects, predictions}`.
        source: a name for error messages (the file's path).
        n_shown_frames: frames shown in the video; later events are unseen.
        collisions: "given" (the predictions' collisions) or "proposed" (found from the motion).
    Raises:
        InputError naming the source and the field.
    """
    if collisions not in ("given", "proposed"):
        raise ValueError(f"collisions must be 'given' or 'proposed', not {collisions!r}")
    objs = _list(_get(data, "objects", source, ""), source, "objects")
    n = len(objs)
    props: dict[int, ObjectProps] = {}
    by_attrs: dict[tuple[str, str, str], int] = {}
    for i, obj in enumerate(objs):
        of = f"objects[{i}]"
        oid = _int(_get(obj, "id", source, of), source, f"{of}.id", 0)
        if oid >= n:
            raise _fail(source, f"{of}.id", f"ids must be 0..{n - 1}, got {oid}")
        if oid in props:
            raise _fail(source, f"{of}.id", f"id {oid} is used twice")
        key = _attrs(obj, source, of)
        if key in by_attrs:
            raise _fail(source, of, f"two objects are {' '.join(key)}")
        by_attrs[key] = oid
        props[oid] = ObjectProps(color=key[0], material=key[1], shape=key[2])
    preds = _list(_get(data, "predictions", source, ""), source, "predictions")
    factual: Run | None = None
    counterfactual: dict[int, Run] = {}
    for p, pred in enumerate(preds):
        where = f"predictions[{p}]"
        what_if = _int(_get(pred, "what_if", source, where), source, f"{where}.what_if", -1)
        if what_if >= n:
            raise _fail(source, f"{where}.what_if", f"no object {what_if} (ids 0..{n - 1})")
        if (what_if == -1 and factual is not None) or what_if in counterfactual:
            raise _fail(source, f"{where}.what_if", f"a second prediction for what_if {what_if}")
        removed = None if what_if == -1 else what_if
        run = _read_run(pred, where, by_attrs, n, removed, collisions, source)
        if removed is None:
            factual = run
        else:
            counterfactual[removed] = run
    if factual is None:
        raise _fail(source, "predictions", "no prediction with what_if -1 (the factual run)")
    return SceneFacts(
        objects=tuple(props[i] for i in range(n)),
        factual=factual,
        counterfactual=counterfactual,
        n_shown_frames=n_shown_frames,
    )


def read_dynamics(
    path: str | Path, *, n_shown_frames: int = SHOWN_FRAMES, collisions: str = "given"
) -> SceneFacts:
    """SceneFacts from a predicted-dynamics JSON file (e.g. the predictor's sim_XXXXX.json)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(path, None, None, "no such file") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as err:
        raise InputError(path, None, None, f"not valid JSON ({err})") from None
    return facts_from_dynamics(
        data, str(path), n_shown_frames=n_shown_frames, collisions=collisions)
