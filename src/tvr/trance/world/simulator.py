"""The TRANCE simulator: the scene state, the rules, and the transition f(S, t).

This module is the only implementation of the world's rules in tvr. The sampler, the evaluator,
the RL rewards, the web app and the renderers all call it.

A state is an integer array of shape (..., 10, 6): one row per object with the columns
x, y (grid units, each in [-40, 40]), size, color, material, shape (indices into the vocab
tuples). Rotation never changes and so is not part of the state.

Rules (as in the public release's evaluator):
- A step sets one attribute of one object. A position step moves the object by
  (direction x step x 10) grid units.
- *off_plane*: after a position step the object lies outside [-40, 40] on x or y.
- *overlap*: after a position or size step the object's footprint comes closer than
  r1 + r2 + 1 grid units (centre distance strictly smaller) to any of the nine other objects,
  visible or not.
- *noop*: the step sets the value the attribute already has.
A step that breaks a rule is still applied; the next steps go on from there. Both the
single-sample functions and the batched ones (numpy, many samples at once) follow these rules;
tests check that they agree.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from tvr.trance.world import vocab

COL_X, COL_Y, COL_SIZE, COL_COLOR, COL_MATERIAL, COL_SHAPE = range(6)
NUM_COLS: Final = 6
#: state column that each attribute (in vocab.ATTRIBUTES order) is stored in; position = x
ATTR_COLUMN: Final = {
    "color": COL_COLOR,
    "material": COL_MATERIAL,
    "shape": COL_SHAPE,
    "size": COL_SIZE,
}

# numpy lookup tables over the 33 values (+1 padding entry at index 33 that does nothing)
_PAD = vocab.NUM_VALUES
_VALUE_ATTR = np.array([*vocab.VALUE_ATTR, -1], dtype=np.int16)
_VALUE_CAT = np.array([*vocab.VALUE_CATEGORY, -1], dtype=np.int16)
_VALUE_DX = np.array([*vocab.VALUE_DX, 0], dtype=np.int16)
_VALUE_DY = np.array([*vocab.VALUE_DY, 0], dtype=np.int16)
_POSITION = vocab.ATTRIBUTES.index("position")
_ATTR_COL = np.array(
    [ATTR_COLUMN.get(a, -1) for a in vocab.ATTRIBUTES] + [-1], dtype=np.int16
)  # attribute index -> state column (-1 for position)
_VALUE_COL = np.array(
    [_ATTR_COL[a] if a >= 0 else -1 for a in _VALUE_ATTR], dtype=np.int16
)  # value index -> state column it sets (-1 for position and padding)
_RADIUS = np.array(vocab.RADIUS_GRID, dtype=np.int32)

# --- areas -----------------------------------------------------------------------------------
INVISIBLE, VISIBLE, OFF_PLANE = 0, 1, 2


def area(x: np.ndarray | int, y: np.ndarray | int) -> np.ndarray:
    """VISIBLE (1), INVISIBLE (0) or OFF_PLANE (2) for grid positions (x, y); works on arrays."""
    x = np.asarray(x)
    y = np.asarray(y)
    on_plane = (
        (x >= vocab.GRID_MIN)
        & (x <= vocab.GRID_MAX)
        & (y >= vocab.GRID_MIN)
        & (y <= vocab.GRID_MAX)
    )
    visible = (
        (x >= vocab.VISIBLE_MIN)
        & (x <= vocab.VISIBLE_MAX)
        & (y >= vocab.VISIBLE_MIN)
        & (y <= vocab.VISIBLE_MAX)
    )
    return np.where(on_plane, np.where(visible, VISIBLE, INVISIBLE), OFF_PLANE).astype(np.int8)


def is_visible(x: int, y: int) -> bool:
    return (
        vocab.VISIBLE_MIN <= x <= vocab.VISIBLE_MAX and vocab.VISIBLE_MIN <= y <= vocab.VISIBLE_MAX
    )


def on_plane(x: int, y: int) -> bool:
    return vocab.GRID_MIN <= x <= vocab.GRID_MAX and vocab.GRID_MIN <= y <= vocab.GRID_MAX


def overlaps(state: np.ndarray, obj: int) -> bool:
    """Whether object `obj` comes too close to any other object of a single state (10, 6)."""
    s = state.astype(np.int32)
    dx = s[:, COL_X] - s[obj, COL_X]
    dy = s[:, COL_Y] - s[obj, COL_Y]
    limit = _RADIUS[s[:, COL_SIZE]] + _RADIUS[s[obj, COL_SIZE]] + vocab.MIN_GAP
    close = dx * dx + dy * dy < limit * limit
    close[obj] = False
    return bool(close.any())


@dataclass(frozen=True)
class StepResult:
    """What one step did: the rules it broke (the step is applied all the same)."""

    overlap: bool = False
    off_plane: bool = False
    noop: bool = False

    @property
    def valid(self) -> bool:
        """True when the step breaks none of the rules that make a sequence incorrect."""
        return not (self.overlap or self.off_plane)

    @property
    def broken_rule(self) -> str | None:
        """Name of the first rule broken that counts against correctness, if any."""
        if self.off_plane:
            return "off_plane"
        if self.overlap:
            return "overlap"
        return None


def apply_step(state: np.ndarray, obj: int, value: int) -> tuple[np.ndarray, StepResult]:
    """f(S, t) for one atomic step (object index, value index) on one state of shape (10, 6).

    Returns the new state (a copy) and which rules the step broke.
    """
    if not 0 <= obj < state.shape[0]:
        raise ValueError(f"object index {obj} outside 0..{state.shape[0] - 1}")
    if not 0 <= value < vocab.NUM_VALUES:
        raise ValueError(f"value index {value} outside 0..{vocab.NUM_VALUES - 1}")
    new = state.copy()
    attr = vocab.ATTRIBUTES[vocab.VALUE_ATTR[value]]
    if attr == "position":
        new[obj, COL_X] += vocab.VALUE_DX[value]
        new[obj, COL_Y] += vocab.VALUE_DY[value]
        off = not on_plane(int(new[obj, COL_X]), int(new[obj, COL_Y]))
        return new, StepResult(overlap=overlaps(new, obj), off_plane=off)
    col = ATTR_COLUMN[attr]
    cat = vocab.VALUE_CATEGORY[value]
    noop = int(new[obj, col]) == cat
    new[obj, col] = cat
    overlap = overlaps(new, obj) if attr == "size" else False
    return new, StepResult(overlap=overlap, noop=noop)


def apply_steps(
    state: np.ndarray, steps: list[tuple[int, int]]
) -> tuple[np.ndarray, list[StepResult]]:
    """Apply steps one after another; returns the final state and each step's result."""
    results = []
    for obj, value in steps:
        state, result = apply_step(state, obj, value)
        results.append(result)
    return state, results


# --- batched simulation ---------------------------------------------------------------------------
PAD_VALUE: Final = _PAD


@dataclass
class BatchResult:
    """Result of simulating a batch: final states and per-step rule flags (B, K)."""

    final: np.ndarray  # (B, 10, 6)
    overlap: np.ndarray  # (B, K) bool
    off_plane: np.ndarray  # (B, K) bool
    noop: np.ndarray  # (B, K) bool

    @property
    def invalid(self) -> np.ndarray:
        """(B, K) steps that break a rule counting against correctness."""
        return self.overlap | self.off_plane


def apply_steps_batch(states: np.ndarray, objs: np.ndarray, values: np.ndarray) -> BatchResult:
    """Simulate many step sequences at once.

    states: (B, 10, 6) initial states; objs, values: (B, K) int arrays. Padding steps carry
    value `PAD_VALUE` (33) or a negative value/object and change nothing.
    """
    states = np.asarray(states)
    objs = np.asarray(objs, dtype=np.int64)
    values = np.asarray(values, dtype=np.int64)
    if objs.shape != values.shape or objs.ndim != 2 or objs.shape[0] != states.shape[0]:
        raise ValueError("objs and values must both be (B, K) with B = len(states)")
    bsz, ksteps = objs.shape
    nobj = states.shape[1]
    s = states.astype(np.int32, copy=True)
    # contiguous copies of the columns the rules read, kept in step with `s`
    xs = np.ascontiguousarray(s[:, :, COL_X])
    ys = np.ascontiguousarray(s[:, :, COL_Y])
    radius = np.ascontiguousarray(_RADIUS[s[:, :, COL_SIZE]])
    pad = (values < 0) | (values >= _PAD) | (objs < 0) | (objs >= nobj)
    vals = np.where(pad, _PAD, values)
    obs = np.where(pad, 0, objs)
    overlap = np.zeros((bsz, ksteps), dtype=bool)
    off = np.zeros((bsz, ksteps), dtype=bool)
    noop = np.zeros((bsz, ksteps), dtype=bool)
    for k in range(ksteps):
        v = vals[:, k]
        o = obs[:, k]
        active = ~pad[:, k]
        col = _VALUE_COL[v]
        is_pos = active & (_VALUE_ATTR[v] == _POSITION)
        is_cat = active & (col >= 0)
        # categorical steps: set the column, note no-ops
        r = np.flatnonzero(is_cat)
        if len(r):
            c = col[r]
            oc = o[r]
            new = _VALUE_CAT[v[r]]
            noop[r, k] = s[r, oc, c] == new
            s[r, oc, c] = new
            sized = c == COL_SIZE
            radius[r[sized], oc[sized]] = _RADIUS[new[sized]]
        # position steps: move, note leaving the plane
        r = np.flatnonzero(is_pos)
        if len(r):
            oc = o[r]
            x = xs[r, oc] + _VALUE_DX[v[r]]
            y = ys[r, oc] + _VALUE_DY[v[r]]
            xs[r, oc] = x
            ys[r, oc] = y
            off[r, k] = (
                (x < vocab.GRID_MIN)
                | (x > vocab.GRID_MAX)
                | (y < vocab.GRID_MIN)
                | (y > vocab.GRID_MAX)
            )
        # overlap after position and size steps, against the nine other objects
        r = np.flatnonzero(is_pos | (is_cat & (col == COL_SIZE)))
        if len(r):
            oc = o[r]
            px, py, pr = xs[r], ys[r], radius[r]  # (n, 10)
            idx = np.arange(len(r))
            dx = px - px[idx, oc][:, None]
            dy = py - py[idx, oc][:, None]
            limit = pr + pr[idx, oc][:, None] + vocab.MIN_GAP
            close = dx * dx + dy * dy < limit * limit
            close[idx, oc] = False
            overlap[r, k] = close.any(axis=1)
    s[:, :, COL_X] = xs
    s[:, :, COL_Y] = ys
    return BatchResult(final=s.astype(states.dtype), overlap=overlap, off_plane=off, noop=noop)


def distance_batch(pred: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Attribute-level distance between predicted and true final states, (B, 10, 6) each.

    Counts the (object, attribute) pairs that differ. Two positions are equal when they are the
    same grid point, or when both lie in the invisible area (an object moved out may be anywhere
    out). A position off the plane never counts as equal.
    """
    pred = np.asarray(pred)
    target = np.asarray(target)
    cat_diff = (pred[..., COL_SIZE:] != target[..., COL_SIZE:]).sum(axis=(-1, -2))
    pa = area(pred[..., COL_X], pred[..., COL_Y])
    ta = area(target[..., COL_X], target[..., COL_Y])
    same = (pred[..., COL_X] == target[..., COL_X]) & (pred[..., COL_Y] == target[..., COL_Y])
    pos_equal = ((ta == VISIBLE) & same) | ((ta == INVISIBLE) & (pa == INVISIBLE))
    return cat_diff + (~pos_equal).sum(axis=-1)


def distance(pred: np.ndarray, target: np.ndarray) -> int:
    """Attribute-level distance between two single states (10, 6); see `distance_batch`."""
    return int(distance_batch(pred[None], target[None])[0])


def order_sensitive(state: np.ndarray, steps: list[tuple[int, int]]) -> bool:
    """Whether some order of the steps breaks a rule (overlap or leaving the plane).

    Tries every permutation of the steps at once with the batched simulator.
    """
    if len(steps) < 2:
        return False
    perms = np.array(list(itertools.permutations(range(len(steps)))), dtype=np.int64)
    objs = np.array([s[0] for s in steps], dtype=np.int64)[perms]
    values = np.array([s[1] for s in steps], dtype=np.int64)[perms]
    states = np.broadcast_to(state, (len(perms), *state.shape))
    return bool(apply_steps_batch(states, objs, values).invalid.any())


_GEOMETRIC = np.array(
    [vocab.value_attribute(v) in ("position", "size") for v in range(vocab.NUM_VALUES)] + [False]
)


def order_sensitive_batch(init: np.ndarray, objs: np.ndarray, values: np.ndarray) -> np.ndarray:
    """(N,) whether some order of each reference sequence breaks a rule.

    Only position and size steps can break a rule, and colour, material and shape steps change
    neither positions nor sizes, so the orders that matter are the orders of the position and
    size steps among themselves: those are all simulated, for samples with two or more of them.
    """
    n = len(init)
    out = np.zeros(n, dtype=bool)
    geometric = _GEOMETRIC[values]  # (N, K)
    count = geometric.sum(axis=1)
    # move each row's geometric steps to the front, keeping their order
    order = np.argsort(~geometric, axis=1, kind="stable")
    g_objs = np.take_along_axis(objs, order, axis=1)
    g_values = np.take_along_axis(values, order, axis=1)
    for k in range(2, vocab.MAX_STEPS + 1):
        rows = np.flatnonzero(count == k)
        if len(rows) == 0:
            continue
        perms = np.array(list(itertools.permutations(range(k))), dtype=np.int64)  # (P, k)
        p = len(perms)
        o = g_objs[rows][:, :k][:, perms].reshape(-1, k)  # (rows*P, k)
        v = g_values[rows][:, :k][:, perms].reshape(-1, k)
        states = np.repeat(init[rows], p, axis=0)
        invalid = apply_steps_batch(states, o, v).invalid.any(axis=1).reshape(len(rows), p)
        out[rows] = invalid.any(axis=1)
    return out


# --- object dicts <-> state arrays ---------------------------------------------------------------
_SIZE = {n: i for i, n in enumerate(vocab.SIZES)}
_COLOR = {n: i for i, n in enumerate(vocab.COLORS)}
_MATERIAL = {n: i for i, n in enumerate(vocab.MATERIALS)}
_SHAPE = {n: i for i, n in enumerate(vocab.SHAPES)}


def objects_to_array(objects: list[dict[str, Any]]) -> np.ndarray:
    """The simulator's state array (10, 6) int16 of a list of object dicts."""
    rows = [None] * 6
    rows[COL_X] = [o["position"][0] for o in objects]
    rows[COL_Y] = [o["position"][1] for o in objects]
    rows[COL_SIZE] = [_SIZE[o["size"]] for o in objects]
    rows[COL_COLOR] = [_COLOR[o["color"]] for o in objects]
    rows[COL_MATERIAL] = [_MATERIAL[o["material"]] for o in objects]
    rows[COL_SHAPE] = [_SHAPE[o["shape"]] for o in objects]
    return np.array(rows, dtype=np.int16).T.copy()


def array_to_objects(arr: np.ndarray, rotations: list[float]) -> list[dict[str, Any]]:
    """Object dicts of a state array, with the given rotations (degrees)."""
    return [
        {
            "shape": vocab.SHAPES[int(row[COL_SHAPE])],
            "size": vocab.SIZES[int(row[COL_SIZE])],
            "color": vocab.COLORS[int(row[COL_COLOR])],
            "material": vocab.MATERIALS[int(row[COL_MATERIAL])],
            "position": [int(row[COL_X]), int(row[COL_Y])],
            "rotation": float(rot),
        }
        for row, rot in zip(arr, rotations, strict=True)
    ]


# --- steps that undo themselves ---------------------------------------------------------------------
def attribute_unchanged(initial: np.ndarray, state: np.ndarray, obj: int, value: int) -> bool:
    """Whether object `obj` has in `state` the same value as in `initial` for the attribute that
    `value` sets (both coordinates for a position)."""
    col = int(_VALUE_COL[value])
    if col < 0:  # a position
        return bool((state[obj, [COL_X, COL_Y]] == initial[obj, [COL_X, COL_Y]]).all())
    return bool(state[obj, col] == initial[obj, col])


def unchanged_transformed(
    initial: np.ndarray, final: np.ndarray, steps: list[tuple[int, int]]
) -> list[tuple[int, str]]:
    """The (object, attribute) pairs that some step transforms but that end as they started: a
    reference with any is degenerate (e.g. right.2 then left.2; cylinder -> sphere -> cylinder)."""
    out: list[tuple[int, str]] = []
    for obj, value in steps:
        key = (obj, vocab.value_attribute(value))
        if key not in out and attribute_unchanged(initial, final, obj, value):
            out.append(key)
    return out


# --- which attributes differ (the cells the distance counts) ----------------------------------------
#: the attributes of `attribute_differences`' columns: the position, then the categorical columns
DIFF_ATTRIBUTES: Final = ("position", "size", "color", "material", "shape")


def attribute_differences_batch(pred: np.ndarray, target: np.ndarray) -> np.ndarray:
    """(B, 10, 5) bool: the (object, attribute) pairs that `distance_batch` counts as different,
    columns in DIFF_ATTRIBUTES order; two positions in the invisible area are equal, a position
    off the plane never is. Its sum over the last two axes is `distance_batch`."""
    pred = np.asarray(pred)
    target = np.asarray(target)
    pa = area(pred[..., COL_X], pred[..., COL_Y])
    ta = area(target[..., COL_X], target[..., COL_Y])
    same = (pred[..., COL_X] == target[..., COL_X]) & (pred[..., COL_Y] == target[..., COL_Y])
    pos_equal = ((ta == VISIBLE) & same) | ((ta == INVISIBLE) & (pa == INVISIBLE))
    cat_diff = pred[..., COL_SIZE:] != target[..., COL_SIZE:]
    return np.concatenate([~pos_equal[..., None], cat_diff], axis=-1)


def attribute_differences(pred: np.ndarray, target: np.ndarray) -> np.ndarray:
    """(10, 5) bool for two single states (10, 6); see `attribute_differences_batch`."""
    return attribute_differences_batch(np.asarray(pred)[None], np.asarray(target)[None])[0]
