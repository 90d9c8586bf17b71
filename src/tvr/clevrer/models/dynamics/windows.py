"""Training windows of the dynamics predictor, cut from runs with known motion and collisions.

A `RunArrays` is one run of a video (the factual one or one without an object) as arrays over
its frames: unit positions, in-view flags, the collisions starting at each frame (as running
counts, so that "did a and b collide in frames (f, g]" is one subtraction). A window is a run and
a start frame f0: the model sees the `history` samples f0, f0 + s, ... (s = `stride`) and
predicts the `rollout` samples after them. The objects in the graph are those in view at every
history sample; an object's position counts in the loss at the samples where it is in view, and
every pair of objects in the graph has a collision label per predicted step. Windows whose
history shows no object are left out.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import torch
from torch.utils.data import Dataset

from tvr.clevrer.models.dynamics.observation import attribute_features, to_unit
from tvr.clevrer.programs.facts import Run, SceneFacts


@dataclass(frozen=True)
class RunArrays:
    """One run: positions (T, N, 2) unit, visible (T, N), collision counts (T + 1, N, N) (entry f:
    collisions starting before frame f), attributes (N, ATTRIBUTE_DIM), present (N,)."""

    positions: np.ndarray
    visible: np.ndarray
    collision_counts: np.ndarray
    attributes: np.ndarray
    present: np.ndarray

    @property
    def n_frames(self) -> int:
        return int(self.visible.shape[0])


def run_arrays(facts: SceneFacts, run: Run, removed: int | None = None) -> RunArrays:
    """The arrays of one run of a video."""
    if run.motion is None:
        raise ValueError("the run has no motion")
    visible = np.asarray(run.motion.visible, dtype=bool)
    t, n = visible.shape
    starts = np.zeros((t + 1, n, n), dtype=np.int16)
    for e in run.events:
        if e.kind == "collision" and e.frame < t:
            a, b = e.objects
            starts[e.frame + 1, a, b] += 1
            starts[e.frame + 1, b, a] += 1
    present = np.ones(n, dtype=bool)
    if removed is not None:
        present[removed] = False
    return RunArrays(
        positions=to_unit(np.nan_to_num(run.motion.xy)).astype(np.float32),
        visible=visible & present,
        collision_counts=np.cumsum(starts, axis=0, dtype=np.int16),
        attributes=attribute_features(facts.objects),
        present=present,
    )


def video_runs(facts: SceneFacts, counterfactual: bool = True) -> list[RunArrays]:
    """The factual run (and the counterfactual ones) of a video."""
    runs = [run_arrays(facts, facts.factual)]
    if counterfactual:
        runs += [run_arrays(facts, r, removed=k) for k, r in sorted(facts.counterfactual.items())]
    return runs


class WindowDataset(Dataset):
    """Every window of `runs` (see the module docstring) as a dict of tensors."""

    def __init__(
        self, runs: Sequence[RunArrays], stride: int, history: int, rollout: int, window_step: int
    ) -> None:
        self.runs = list(runs)
        self.stride, self.history, self.rollout = stride, history, rollout
        span = stride * (history + rollout - 1)
        index = []
        for r, run in enumerate(self.runs):
            for f0 in range(0, run.n_frames - span, window_step):
                hist = run.visible[f0 : f0 + stride * history : stride]
                if hist.all(axis=0).any():
                    index.append((r, f0))
        self.index = index

    def __len__(self) -> int:
        return len(self.index)

    def __getitem__(self, i: int) -> dict[str, torch.Tensor]:
        r, f0 = self.index[i]
        run = self.runs[r]
        frames = f0 + self.stride * np.arange(self.history + self.rollout)
        vis = run.visible[frames]
        active = vis[: self.history].all(axis=0)
        counts = run.collision_counts
        # collisions over each step's frames (f_{j-1}, f_j]: starts at frames f_{j-1}+1 .. f_j
        hit = (counts[frames + 1] - counts[np.maximum(frames - self.stride + 1, 0)]) > 0
        return {
            "positions": torch.from_numpy(run.positions[frames]),
            "visible": torch.from_numpy(vis),
            "collisions": torch.from_numpy(hit),
            "attributes": torch.from_numpy(run.attributes),
            "active": torch.from_numpy(active),
        }


def collate_windows(items: Iterable[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """Windows padded to the batch's largest object count (padding is never active)."""
    items = list(items)
    n = max(int(it["active"].shape[0]) for it in items)
    out: dict[str, list[torch.Tensor]] = {k: [] for k in items[0]}
    for it in items:
        pad = n - int(it["active"].shape[0])
        out["positions"].append(torch.nn.functional.pad(it["positions"], (0, 0, 0, pad)))
        out["visible"].append(torch.nn.functional.pad(it["visible"], (0, pad)))
        out["collisions"].append(torch.nn.functional.pad(it["collisions"], (0, pad, 0, pad)))
        out["attributes"].append(torch.nn.functional.pad(it["attributes"], (0, 0, 0, pad)))
        out["active"].append(torch.nn.functional.pad(it["active"], (0, pad)))
    return {k: torch.stack(v) for k, v in out.items()}
