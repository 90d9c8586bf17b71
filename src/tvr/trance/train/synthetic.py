"""A tiny synthetic TRANCE-like dataset for tests: random states and steps, drawn top-down.

States and steps are drawn at random and checked with the simulator (`tvr.trance.world.simulator`): every
reference step changes something, overlaps nothing and stays on the plane, and only objects in
the visible area are transformed. Images are a fast top-down drawing of the visible area (no
renderer needed): each visible object is a patch of its colour whose outline tells the shape
(square, disc, diamond), whose extent tells the size and whose shading tells the material. In
View the final image is drawn rotated by -30, 0 or +30 degrees for L, C, R. It is in no way a
substitute for the rendered data; it exists so that the models can learn something in tests.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tvr.trance.data.batch import make_example
from tvr.trance.data.sample import Sample, Step
from tvr.trance.world import simulator as world
from tvr.trance.world import vocab
from tvr.trance.world.simulator import array_to_objects
from tvr.trance.world.vocab import VIEWS

_POSITION_VALUES = np.array(
    [i for i, name in enumerate(vocab.VALUES) if name.startswith("position.")], dtype=np.int64
)
_VIEW_ANGLE = {"L": -30.0, "C": 0.0, "R": 30.0}
_EXTENT = 26.0  # the drawing spans [-EXTENT, EXTENT] grid units around the centre
_BACKGROUND = 0.45


def random_state(rng: np.random.Generator) -> np.ndarray:
    """A random valid initial state (10, 6): 1..10 visible objects, no two overlapping."""
    while True:
        n_visible = int(rng.integers(1, vocab.NUM_OBJECTS + 1))
        state = np.zeros((vocab.NUM_OBJECTS, world.NUM_COLS), dtype=np.int64)
        ok = True
        for i in range(vocab.NUM_OBJECTS):
            state[i, world.COL_SIZE] = rng.integers(len(vocab.SIZES))
            state[i, world.COL_COLOR] = rng.integers(len(vocab.COLORS))
            state[i, world.COL_MATERIAL] = rng.integers(len(vocab.MATERIALS))
            state[i, world.COL_SHAPE] = rng.integers(len(vocab.SHAPES))
            for _ in range(200):
                if i < n_visible:
                    x, y = rng.integers(vocab.VISIBLE_MIN, vocab.VISIBLE_MAX + 1, size=2)
                else:
                    x, y = rng.integers(vocab.GRID_MIN, vocab.GRID_MAX + 1, size=2)
                    if world.is_visible(int(x), int(y)):
                        continue
                state[i, world.COL_X], state[i, world.COL_Y] = x, y
                if not world.overlaps(state[: i + 1], i):
                    break
            else:
                ok = False
                break
        if ok:
            return state[rng.permutation(vocab.NUM_OBJECTS)]


def _try_step(state: np.ndarray, obj: int, value: int) -> tuple[np.ndarray, bool]:
    r = world.apply_steps_batch(state[None], np.array([[obj]]), np.array([[value]]))
    bad = bool(r.overlap[0, 0] or r.off_plane[0, 0] or r.noop[0, 0])
    return r.final[0], not bad


def random_steps(
    rng: np.random.Generator, state: np.ndarray, n: int
) -> list[tuple[int, int]] | None:
    """n valid steps on visible objects, or None when none could be found."""
    steps: list[tuple[int, int]] = []
    cur = state
    for _ in range(n):
        visible = np.flatnonzero(
            world.area(cur[:, world.COL_X], cur[:, world.COL_Y]) == world.VISIBLE
        )
        if len(visible) == 0:
            return None
        for _ in range(100):
            obj = int(rng.choice(visible))
            value = int(rng.integers(vocab.NUM_VALUES))
            new, ok = _try_step(cur, obj, value)
            if ok:
                steps.append((obj, value))
                cur = new
                break
        else:
            return None
    return steps


def first_step_options(state: np.ndarray, obj: int, value: int) -> list[int]:
    """Accepted values of a first step: every position value landing the object on a valid
    invisible spot for an "out" move; the value alone otherwise."""
    if vocab.value_attribute(value) != "position":
        return [value]
    new, _ = _try_step(state, obj, value)
    if world.area(new[obj, world.COL_X], new[obj, world.COL_Y]) != world.INVISIBLE:
        return [value]
    k = len(_POSITION_VALUES)
    r = world.apply_steps_batch(
        np.repeat(state[None], k, axis=0), np.full((k, 1), obj), _POSITION_VALUES[:, None]
    )
    lands = (
        world.area(r.final[:, obj, world.COL_X], r.final[:, obj, world.COL_Y]) == world.INVISIBLE
    )
    ok = lands & ~r.overlap[:, 0] & ~r.off_plane[:, 0]
    return sorted(int(v) for v in _POSITION_VALUES[ok])


def draw(
    state: np.ndarray, image_size: tuple[int, int], view: str = "C", supersample: int = 2
) -> np.ndarray:
    """Top-down drawing (3, H, W) float32 in [0, 1] of the visible objects of a state."""
    h, w = image_size
    s = supersample
    angle = math.radians(_VIEW_ANGLE[view])
    rows = (np.arange(h * s) + 0.5) / (
        h * s
    ) * 2 * _EXTENT - _EXTENT  # grid x (towards camera: down)
    cols = (np.arange(w * s) + 0.5) / (w * s) * 2 * _EXTENT - _EXTENT  # grid y (right)
    gx, gy = np.meshgrid(rows, cols, indexing="ij")
    img = np.full((3, h * s, w * s), _BACKGROUND, dtype=np.float32)
    visible = world.area(state[:, world.COL_X], state[:, world.COL_Y]) == world.VISIBLE
    order = np.argsort(state[:, world.COL_X], kind="stable")  # far objects first
    for i in order:
        if not visible[i]:
            continue
        x, y = float(state[i, world.COL_X]), float(state[i, world.COL_Y])
        x, y = x * math.cos(angle) - y * math.sin(angle), x * math.sin(angle) + y * math.cos(angle)
        r = float(vocab.RADIUS_GRID[state[i, world.COL_SIZE]])
        dx, dy = gx - x, gy - y
        shape = vocab.SHAPES[state[i, world.COL_SHAPE]]
        if shape == "cube":
            d = np.maximum(np.abs(dx), np.abs(dy)) / r
        elif shape == "sphere":
            d = np.sqrt(dx * dx + dy * dy) / r
        else:
            d = (np.abs(dx) + np.abs(dy)) / (1.3 * r)
        mask = d <= 1.0
        rgb = (
            np.array(vocab.COLOR_RGB[vocab.COLORS[state[i, world.COL_COLOR]]], dtype=np.float32)
            / 255
        )
        material = vocab.MATERIALS[state[i, world.COL_MATERIAL]]
        for c in range(3):
            if material == "rubber":
                val = np.full_like(d, rgb[c])
            elif material == "metal":
                val = np.where(d <= 0.5, 0.5 * rgb[c] + 0.5, 0.7 * rgb[c])
            else:  # glass: see-through ring
                val = np.where(d <= 0.6, 0.5 * rgb[c] + 0.5 * img[c], rgb[c])
            img[c] = np.where(mask, val, img[c])
    return img.reshape(3, h, s, w, s).mean(axis=(2, 4))


@dataclass
class SyntheticRecord:
    """One drawn sample, symbolic: what both the examples and the sample file are made from."""

    id: str
    init: np.ndarray
    final: np.ndarray
    steps: list[tuple[int, int]]
    options: list[int]
    view: str | None  # the final view in View, None otherwise


def synthetic_records(n: int, setting: str = "event", seed: int = 0) -> list[SyntheticRecord]:
    """n random samples (reproducible from the seed); Basic samples have one step."""
    rng = np.random.default_rng(seed)
    out: list[SyntheticRecord] = []
    while len(out) < n:
        state = random_state(rng)
        k = 1 if setting == "basic" else int(rng.integers(1, vocab.MAX_STEPS + 1))
        steps = random_steps(rng, state, k)
        if steps is None:
            continue
        objs = np.array([[o for o, _ in steps]])
        vals = np.array([[v for _, v in steps]])
        final = world.apply_steps_batch(state[None], objs, vals).final[0]
        view = VIEWS[int(rng.integers(3))] if setting == "view" else None
        sid = f"synth-{seed}-{len(out):06d}"
        out.append(
            SyntheticRecord(sid, state, final, steps, first_step_options(state, *steps[0]), view)
        )
    return out


def make_synthetic_examples(
    n: int, setting: str = "event", image_size: tuple[int, int] = (60, 80), seed: int = 0
) -> list[dict[str, Any]]:
    """n examples of the batch contract (`tvr.trance.data.batch`), reproducible from the seed."""
    return [
        make_example(
            r.id,
            draw(r.init, image_size, "C"),
            draw(r.final, image_size, r.view or "C"),
            r.init,
            r.final,
            r.steps,
            r.options,
            r.view or "C",
        )
        for r in synthetic_records(n, setting, seed)
    ]


def _move_type(before: np.ndarray, after: np.ndarray, obj: int) -> str:
    a = world.area(before[obj, world.COL_X], before[obj, world.COL_Y])
    b = world.area(after[obj, world.COL_X], after[obj, world.COL_Y])
    if a == world.VISIBLE:
        return "inner" if b == world.VISIBLE else "out"
    return "in"


def to_sample(record: SyntheticRecord) -> Sample:
    """The record in the tvr sample format (no cameras: the images are not rendered ones)."""
    steps = []
    cur = record.init
    for i, (o, v) in enumerate(record.steps):
        new = world.apply_steps_batch(cur[None], np.array([[o]]), np.array([[v]])).final[0]
        if vocab.value_attribute(v) == "position":
            options = tuple(record.options) if i == 0 else (v,)
            steps.append(Step(o, v, _move_type(cur, new, o), options))
        else:
            steps.append(Step(o, v))
        cur = new
    rotations = [0.0] * vocab.NUM_OBJECTS
    extra = {"view": record.view} if record.view else {}
    return Sample(
        id=record.id,
        objects=array_to_objects(record.init, rotations),
        steps=steps,
        cameras={},
        lights={},
        final=array_to_objects(record.final, rotations),
        extra=extra,
    )


def write_synthetic_samples(path: str | Path, records: list[SyntheticRecord]) -> Path:
    """Write records as a samples.jsonl file (the references `tvr evaluate` reads)."""
    path = Path(path)
    with path.open("w") as f:
        for r in records:
            f.write(json.dumps(to_sample(r).to_dict()) + "\n")
    return path
