"""Scores of predicted steps through the one simulator (`tvr.trance.world.simulator`): Acc and rewards.

Event / View: the predicted steps are applied to the initial state; a prediction is loosely
correct when its final state is at distance 0 of the true one, and correct when, moreover, no
step overlaps or leaves the plane. Basic: the object is right and the value is one of the step's
accepted values. Rewards for REINFORCE derive from these scores.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tvr.trance.world import simulator as world
from tvr.trance.world.vocab import NUM_OBJECTS, NUM_VALUES, VALUE_ATTR

REWARDS = ("corr", "dist", "both")


@dataclass
class EventScores:
    correct: np.ndarray  # (B,) bool
    loose: np.ndarray  # (B,) bool
    distance: np.ndarray  # (B,) int
    norm_distance: np.ndarray  # (B,) float


def truncate_at_end(objs: np.ndarray, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Steps (B, L) cut at the first end token (object >= 10 or value >= 33): padding after."""
    objs = np.asarray(objs, dtype=np.int64)
    values = np.asarray(values, dtype=np.int64)
    end = (objs >= NUM_OBJECTS) | (values >= NUM_VALUES) | (objs < 0) | (values < 0)
    after = np.cumsum(end, axis=1) > 0
    return np.where(after, -1, objs), np.where(after, world.PAD_VALUE, values)


def event_scores(
    init_state: np.ndarray,
    final_state: np.ndarray,
    objs: np.ndarray,
    values: np.ndarray,
    num_steps: np.ndarray,
) -> EventScores:
    """Simulate predicted steps (B, L) (cut at the first end token) and score them."""
    objs, values = truncate_at_end(objs, values)
    result = world.apply_steps_batch(np.asarray(init_state), objs, values)
    dist = world.distance_batch(result.final, np.asarray(final_state))
    loose = dist == 0
    correct = loose & ~result.invalid.any(axis=1)
    norm = dist / np.maximum(np.asarray(num_steps, dtype=np.float64), 1.0)
    return EventScores(correct, loose, dist, norm)


@dataclass
class BasicScores:
    correct: np.ndarray  # (B,) bool: object right and value accepted
    obj: np.ndarray
    attr: np.ndarray
    value: np.ndarray


def basic_scores(
    obj_pred: np.ndarray, value_pred: np.ndarray, obj_target: np.ndarray, options: np.ndarray
) -> BasicScores:
    """Scores of single predicted steps (B,) against the reference object and accepted values."""
    obj_pred = np.asarray(obj_pred, dtype=np.int64)
    value_pred = np.clip(np.asarray(value_pred, dtype=np.int64), 0, NUM_VALUES - 1)
    obj_ok = obj_pred == np.asarray(obj_target)
    options = np.asarray(options, dtype=bool)
    value_ok = options[np.arange(len(value_pred)), value_pred]
    attrs = np.asarray(VALUE_ATTR)
    attr_ok = (options & (attrs[None, :] == attrs[value_pred][:, None])).any(axis=1)
    return BasicScores(obj_ok & value_ok, obj_ok, attr_ok, value_ok)


def reward(kind: str, scores: EventScores, offset: bool = False) -> np.ndarray:
    """REINFORCE reward per sample: "corr" (1 if correct), "dist" (minus the normalized
    distance) or "both" (their sum). With `offset` (the papers' variant) the rewards are shifted
    to be positive as in the public release: corr + 1, 2 - dist, 2 + corr - dist."""
    corr = scores.correct.astype(np.float64)
    nd = scores.norm_distance.astype(np.float64)
    if kind == "corr":
        return corr + (1.0 if offset else 0.0)
    if kind == "dist":
        return (2.0 if offset else 0.0) - nd
    if kind == "both":
        return (2.0 if offset else 0.0) + corr - nd
    raise ValueError(f"unknown reward {kind!r}: expected one of {REWARDS}")
