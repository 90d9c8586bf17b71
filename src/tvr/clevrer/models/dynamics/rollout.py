"""Rollouts of the dynamics predictor: a video's observation -> its factual future and its runs
without each object, in the official predicted-dynamics layout.

The model steps every `stride` frames on the sample grid 0, s, 2s, ... up to `end_frame` (the
simulated 7 s: frame 174). An object's history at a frame is its positions at that frame and
`history - 1` samples before; where it was not yet in view (it just entered), the missing ones
are extrapolated backwards with its first velocity.

- Factual run, observed part: each step of the shown video is predicted from the observed
  history (teacher forcing) to find the collisions of the shown frames; the trajectory is the
  observation itself, every frame.
- Factual run, future: from the last observed sample, the model rolls out on its own positions to
  `end_frame`; objects whose predicted centre leaves the frame leave the scene.
- Counterfactual run without object X: the world's runs differ only after X's first contact (no
  contact, no influence), so the run is the factual one up to the step before X's first predicted
  collision and a rollout without X from there (`counterfactual_start="first_collision"`); an X
  that never collides changes nothing. `"start"` rolls out from the first sample instead (the
  paper's "erase the vertex and roll out"). Objects the observation shows entering later are put
  into the rollout when they enter.

A collision is recorded at the sample ending the step in which the pair's predicted probability
first reaches `collision_threshold` (a pair flagged again at the next step is the same contact).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch

from tvr.clevrer.data.dynamics import DECIMALS
from tvr.clevrer.data.rounding import rounded
from tvr.clevrer.models.dynamics.observation import (
    Observation,
    attribute_features,
    inside_frame,
    to_pixels,
    to_unit,
)
from tvr.clevrer.models.dynamics.propnet import VELOCITY_SCALE, PropNet
from tvr.clevrer.programs.dynamics import image_to_grid
from tvr.clevrer.vocab import SIMULATED_FRAMES

COUNTERFACTUAL_STARTS = ("first_collision", "start")


@dataclass(frozen=True)
class RolloutOptions:
    """How a video is rolled out (see the module docstring)."""

    end_frame: int = SIMULATED_FRAMES - 1
    collision_threshold: float = 0.5
    counterfactual_start: str = "first_collision"

    def __post_init__(self) -> None:
        if self.counterfactual_start not in COUNTERFACTUAL_STARTS:
            raise ValueError(
                f"counterfactual_start: one of {COUNTERFACTUAL_STARTS}, not {self.counterfactual_start!r}"
            )


@dataclass(frozen=True)
class RunPrediction:
    """One predicted run on the sample grid.

    Args:
        frames: (S,) sample frames.
        positions: (S, N, 2) unit coordinates (meaningless where not active).
        active: (S, N) the object is in the scene and in view.
        start: the last sample taken from known states (observed, or the factual run); the
            samples after it are the model's rollout (None: the run is the factual one).
        collisions: (frame, a, b) with a < b, in frame order.
    """

    frames: np.ndarray
    positions: np.ndarray
    active: np.ndarray
    start: int | None
    collisions: tuple[tuple[int, int, int], ...]


@dataclass(frozen=True)
class VideoPrediction:
    """A video's predicted runs: the factual one and one per removed object."""

    observation: Observation
    stride: int
    factual: RunPrediction
    counterfactual: dict[int, RunPrediction] = field(default_factory=dict)


def history_at(
    positions: np.ndarray, active: np.ndarray, frame: int, obj: int, history: int, stride: int
) -> np.ndarray:
    """(history, 2) positions of `obj` at frame - (history-1)*stride, ..., frame, from per-frame
    arrays (T, N, 2) and (T, N); before the object's stretch of active frames that ends at
    `frame`, extrapolated backwards with its velocity over its first `stride` frames."""
    first = frame
    while first > 0 and active[first - 1, obj]:
        first -= 1
    ahead = min(first + stride, frame)
    v = (
        (positions[ahead, obj] - positions[first, obj]) / (ahead - first)
        if ahead > first
        else np.zeros(2)
    )
    out = np.empty((history, 2))
    for j in range(history):
        x = frame - stride * (history - 1 - j)
        out[j] = positions[x, obj] if x >= first else positions[first, obj] - v * (first - x)
    return out


def _densify(
    frames: np.ndarray, positions: np.ndarray, active: np.ndarray, n_frames: int
) -> tuple[np.ndarray, np.ndarray]:
    """Per-frame arrays from samples: linear between two active samples, inactive elsewhere."""
    n = positions.shape[1]
    pos = np.zeros((n_frames, n, 2))
    act = np.zeros((n_frames, n), dtype=bool)
    for k in range(len(frames)):
        f = int(frames[k])
        if f < n_frames:
            pos[f], act[f] = positions[k], active[k]
        if k + 1 < len(frames):
            g = int(frames[k + 1])
            both = active[k] & active[k + 1]
            for x in range(f + 1, min(g, n_frames)):
                w = (x - f) / (g - f)
                pos[x] = np.where(
                    both[:, None], positions[k] + w * (positions[k + 1] - positions[k]), pos[x]
                )
                act[x] = both
    return pos, act


class Roller:
    """Runs a trained `PropNet` on one video's graph, one step at a time."""

    def __init__(self, model: PropNet, objects: tuple, stride: int, threshold: float) -> None:
        self.model = model.eval()
        self.device = next(model.parameters()).device
        self.attributes = torch.as_tensor(attribute_features(objects), device=self.device)[None]
        self.history = model.history
        self.stride = stride
        self.threshold = threshold

    @torch.no_grad()
    def step(
        self, window: np.ndarray, active: np.ndarray, colliding: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray]:
        """Next positions (N, 2) and collision probabilities (N, N) from a window (H, N, 2)."""
        pos = torch.as_tensor(window, dtype=torch.float32, device=self.device)[None]
        act = torch.as_tensor(active, device=self.device)[None]
        col = torch.as_tensor(colliding, dtype=torch.float32, device=self.device)[None]
        delta, logits = self.model(pos, self.attributes, act, col)
        nxt = pos[0, -1] + delta[0] / VELOCITY_SCALE
        probs = torch.sigmoid(logits[0])
        n = active.shape[0]
        mask = active[:, None] & active[None, :] & ~np.eye(n, dtype=bool)
        return nxt.cpu().numpy().astype(np.float64), probs.cpu().numpy() * mask

    def roll(
        self,
        window: np.ndarray,
        active: np.ndarray,
        colliding: np.ndarray,
        frames: np.ndarray,
        enter: Callable[[int, np.ndarray, np.ndarray], dict[int, np.ndarray]],
    ) -> tuple[np.ndarray, np.ndarray, list[tuple[int, int, int]]]:
        """Roll out over `frames` (the samples after the window's last one): positions (S, N, 2),
        active (S, N) and collisions. `enter(k, active, gone)` gives the histories of objects
        entering at sample k."""
        window = window.copy()
        active = active.copy()
        gone = np.zeros_like(active)
        flagged = colliding >= self.threshold
        out_pos = np.zeros((len(frames), *window.shape[1:]))
        out_act = np.zeros((len(frames), active.shape[0]), dtype=bool)
        found: list[tuple[int, int, int]] = []
        for k, f in enumerate(frames.tolist()):
            nxt, probs = self.step(window, active, colliding)
            now = probs >= self.threshold
            for a, b in zip(*np.nonzero(np.triu(now & ~flagged, 1)), strict=True):
                found.append((int(f), int(a), int(b)))
            flagged, colliding = now, probs
            window = np.concatenate([window[1:], nxt[None]], axis=0)
            left = active & ~inside_frame(nxt)
            gone |= left
            active = active & ~left
            for i, hist in enter(k, active, gone).items():
                window[:, i] = hist
                active[i] = True
                colliding[i, :] = colliding[:, i] = 0.0
                flagged[i, :] = flagged[:, i] = False
            out_pos[k] = window[-1]
            out_act[k] = active
        return out_pos, out_act, found


def _no_entry(k: int, active: np.ndarray, gone: np.ndarray) -> dict[int, np.ndarray]:
    return {}


def predict_video(
    model: PropNet, observation: Observation, stride: int, options: RolloutOptions | None = None
) -> VideoPrediction:
    """The factual and every counterfactual run of a video (see the module docstring)."""
    options = options or RolloutOptions()
    roller = Roller(model, observation.objects, stride, options.collision_threshold)
    h = model.history
    n = len(observation.objects)
    obs_pos = to_unit(observation.xy)
    obs_act = np.asarray(observation.visible, dtype=bool)
    t_obs = observation.n_frames
    frames = np.arange(0, options.end_frame + 1, stride)
    last = int(np.searchsorted(frames, t_obs - 1, side="right")) - 1  # last observed sample

    def observed_window(k: int, objs: np.ndarray) -> np.ndarray:
        window = np.zeros((h, n, 2))
        for i in np.flatnonzero(objs):
            window[:, i] = history_at(obs_pos, obs_act, int(frames[k]), int(i), h, stride)
        return window

    # the shown frames: collisions from one step at a time on the observed history
    collisions: list[tuple[int, int, int]] = []
    colliding = np.zeros((n, n))
    flagged = np.zeros((n, n), dtype=bool)
    for k in range(last):
        act = obs_act[frames[k]]
        _, probs = roller.step(observed_window(k, act), act, colliding)
        now = probs >= options.collision_threshold
        for a, b in zip(*np.nonzero(np.triu(now & ~flagged, 1)), strict=True):
            collisions.append((int(frames[k + 1]), int(a), int(b)))
        flagged, colliding = now, probs
    # the future
    act = obs_act[frames[last]]
    fut_pos, fut_act, fut_col = roller.roll(
        observed_window(last, act), act, colliding, frames[last + 1 :], _no_entry
    )
    positions = np.zeros((len(frames), n, 2))
    active = np.zeros((len(frames), n), dtype=bool)
    positions[: last + 1] = obs_pos[frames[: last + 1]]
    active[: last + 1] = obs_act[frames[: last + 1]]
    positions[last + 1 :], active[last + 1 :] = fut_pos, fut_act
    factual = RunPrediction(frames, positions, active, last, tuple(sorted(collisions + fut_col)))

    # the runs without each object
    known_pos, known_act = _densify(frames, positions, active, int(frames[-1]) + 1)
    m = min(t_obs, len(known_pos))
    known_pos[:m], known_act[:m] = obs_pos[:m], obs_act[:m]

    counterfactual = {}
    for r in range(n):
        first = [f for f, a, b in factual.collisions if r in (a, b)]
        if options.counterfactual_start == "start":
            k0 = 0
        elif not first:
            keep = active.copy()
            keep[:, r] = False
            counterfactual[r] = RunPrediction(
                frames,
                positions,
                keep,
                None,
                tuple(c for c in factual.collisions if r not in c[1:]),
            )
            continue
        else:
            k0 = max(int(np.searchsorted(frames, first[0])) - 1, 0)
        start_act = known_act[frames[k0]].copy()
        start_act[r] = False
        window = np.zeros((h, n, 2))
        for i in np.flatnonzero(start_act):
            window[:, i] = history_at(known_pos, known_act, int(frames[k0]), int(i), h, stride)
        seen_before = known_act[: frames[k0] + 1].any(axis=0)
        col0 = np.zeros((n, n))
        for f, a, b in factual.collisions:
            if f == frames[k0] and r not in (a, b):
                col0[a, b] = col0[b, a] = 1.0

        def enter(
            k: int,
            act: np.ndarray,
            gone: np.ndarray,
            k0: int = k0,
            r: int = r,
            seen_before: np.ndarray = seen_before,
        ) -> dict[int, np.ndarray]:
            f = int(frames[k0 + 1 + k])
            if f >= t_obs:
                return {}
            new = obs_act[f] & ~act & ~gone & ~seen_before
            new[r] = False
            return {
                int(i): history_at(obs_pos, obs_act, f, int(i), h, stride)
                for i in np.flatnonzero(new)
            }

        cf_pos, cf_act, cf_col = roller.roll(window, start_act, col0, frames[k0 + 1 :], enter)
        pos = positions.copy()
        act = active.copy()
        act[:, r] = False
        pos[k0 + 1 :], act[k0 + 1 :] = cf_pos, cf_act
        before = [c for c in factual.collisions if c[0] <= frames[k0] and r not in c[1:]]
        counterfactual[r] = RunPrediction(frames, pos, act, k0, tuple(sorted(before + cf_col)))
    return VideoPrediction(observation, stride, factual, counterfactual)


def _attrs(p: Any) -> dict[str, str]:
    return {"color": p.color, "material": p.material, "shape": p.shape}


def _entries(
    frames: list[int], unit: np.ndarray, active: np.ndarray, attrs: list[dict[str, str]]
) -> list[dict[str, Any]]:
    px = to_pixels(unit)
    gx, gy = image_to_grid(px[..., 0], px[..., 1])
    rows, cols = rounded(gx, DECIMALS), rounded(gy, DECIMALS)
    return [
        {"frame_index": int(f),
         "objects": [{"x": rows[k][o], "y": cols[k][o], **attrs[o]} for o in range(len(attrs)) if active[k, o]]}
        for k, f in enumerate(frames)
    ]  # fmt: skip


def _run_layout(
    pred: VideoPrediction, run: RunPrediction, what_if: int, attrs: list[dict[str, str]]
) -> dict[str, Any]:
    obs = pred.observation
    t_obs = obs.n_frames
    removed = what_if if what_if >= 0 else None
    # known part: the observation, every frame, up to the run's start (all of it for the
    # factual run and for a copy of it)
    if what_if == -1 or run.start is None:
        known_end = t_obs - 1
    else:
        known_end = min(int(run.frames[run.start]), t_obs - 1)
    vis = np.asarray(obs.visible[: known_end + 1], dtype=bool).copy()
    if removed is not None:
        vis[:, removed] = False
    entries = _entries(list(range(known_end + 1)), to_unit(obs.xy[: known_end + 1]), vis, attrs)
    later = [k for k in range(len(run.frames)) if run.frames[k] > known_end]
    act = run.active[later].copy()
    if removed is not None:
        act[:, removed] = False
    entries += _entries([int(run.frames[k]) for k in later], run.positions[later], act, attrs)
    collisions = [{"frame": f, "objects": [attrs[a], attrs[b]]} for f, a, b in run.collisions]
    return {"what_if": what_if, "trajectory": entries, "collisions": collisions}


def prediction_layout(pred: VideoPrediction) -> dict[str, Any]:
    """The official predicted-dynamics layout of a video's prediction (factual run first, then
    the runs without each object by id), readable by `tvr.clevrer.programs.dynamics`."""
    objects = pred.observation.objects
    attrs = [_attrs(p) for p in objects]
    return {
        "objects": [{"id": i, **a} for i, a in enumerate(attrs)],
        "predictions": [_run_layout(pred, pred.factual, -1, attrs)]
        + [
            _run_layout(pred, pred.counterfactual[k], k, attrs) for k in sorted(pred.counterfactual)
        ],
    }
