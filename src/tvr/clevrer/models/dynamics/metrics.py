"""The dynamics predictor's scores against the simulator: position error over the rollout and
collision precision/recall.

- Position error (pixels of the 480x320 frame) per rollout step k = 1, 2, ...: the distance
  between a predicted centre and the true one, over the objects the rollout has in the scene and
  the truth has in view at that sample, for the factual future ("predictive") and for the runs
  without an object ("counterfactual", counted from each rollout's start). Beside it, the same
  error of a constant-velocity extrapolation of the same history, the baseline a learned model
  must beat.
- Collisions: a predicted collision matches a true one of the same pair at most
  `tolerance` frames away (each true one matched once, nearest first). Scored apart: the shown
  frames of the factual run ("observed"), its unseen frames ("predictive"), and the whole runs
  without each object ("counterfactual").
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tvr.clevrer.models.dynamics.observation import to_pixels, to_unit
from tvr.clevrer.models.dynamics.rollout import RunPrediction, VideoPrediction
from tvr.clevrer.programs.facts import Run, SceneFacts

COLLISION_TOLERANCE = 10


def match_collisions(
    predicted: list[tuple[int, int, int]],
    truth: list[tuple[int, int, int]],
    tolerance: int = COLLISION_TOLERANCE,
) -> int:
    """How many predicted (frame, a, b) match a true one (same pair, frames within tolerance)."""
    pairs = sorted(
        (abs(pf - tf), i, j)
        for i, (pf, pa, pb) in enumerate(predicted)
        for j, (tf, ta, tb) in enumerate(truth)
        if {pa, pb} == {ta, tb} and abs(pf - tf) <= tolerance
    )
    used_p: set[int] = set()
    used_t: set[int] = set()
    for _, i, j in pairs:
        if i not in used_p and j not in used_t:
            used_p.add(i)
            used_t.add(j)
    return len(used_p)


def _true_collisions(run: Run) -> list[tuple[int, int, int]]:
    return [(e.frame, *sorted(e.objects)) for e in run.events if e.kind == "collision"]  # type: ignore[misc]


@dataclass
class _Counts:
    predicted: int = 0
    true: int = 0
    matched: int = 0

    def add(self, predicted: list, truth: list, tolerance: int) -> None:
        self.predicted += len(predicted)
        self.true += len(truth)
        self.matched += match_collisions(predicted, truth, tolerance)

    def scores(self) -> dict[str, float]:
        return {
            "precision": self.matched / self.predicted if self.predicted else 0.0,
            "recall": self.matched / self.true if self.true else 0.0,
            "predicted": float(self.predicted),
            "true": float(self.true),
        }


@dataclass
class DynamicsScores:
    """Sums over videos; `add` one video's prediction and its truth, `result` the scores."""

    tolerance: int = COLLISION_TOLERANCE
    errors: dict[str, dict[int, list[float]]] = field(
        default_factory=lambda: defaultdict(lambda: defaultdict(list))
    )
    collisions: dict[str, _Counts] = field(default_factory=lambda: defaultdict(_Counts))
    videos: int = 0

    def _positions(
        self,
        name: str,
        run: RunPrediction,
        truth: Run,
        baseline: tuple[np.ndarray, np.ndarray, np.ndarray] | None,
    ) -> None:
        if run.start is None or truth.motion is None:
            return
        true_xy = np.asarray(truth.motion.xy)
        true_vis = np.asarray(truth.motion.visible, dtype=bool)
        for k in range(run.start + 1, len(run.frames)):
            f = int(run.frames[k])
            if f >= len(true_vis):
                break
            ok = run.active[k] & true_vis[f]
            if not ok.any():
                continue
            step = k - run.start
            err = np.linalg.norm(to_pixels(run.positions[k][ok]) - true_xy[f][ok], axis=-1)
            self.errors[name][step] += err.tolist()
            if baseline is not None:
                pred = to_pixels(baseline[0] + step * baseline[1])
                ok_b = ok & baseline[2]
                self.errors[f"{name}_constant_velocity"][step] += np.linalg.norm(
                    pred[ok_b] - true_xy[f][ok_b], axis=-1
                ).tolist()

    def add(self, pred: VideoPrediction, truth: SceneFacts) -> None:
        self.videos += 1
        t_obs = pred.observation.n_frames
        fac = pred.factual
        # constant velocity from the last two observed samples
        k = fac.start
        assert k is not None
        xy = to_unit(pred.observation.xy)
        vis = np.asarray(pred.observation.visible, dtype=bool)
        f1, f0 = int(fac.frames[k]), int(fac.frames[k]) - pred.stride
        base = (xy[f1], xy[f1] - xy[f0], vis[f1] & vis[f0]) if f0 >= 0 else None
        self._positions("predictive", fac, truth.factual, base)
        true_fac = _true_collisions(truth.factual)
        pred_fac = list(fac.collisions)
        self.collisions["observed"].add(
            [c for c in pred_fac if c[0] < t_obs],
            [c for c in true_fac if c[0] < t_obs],
            self.tolerance,
        )
        end = int(fac.frames[-1])
        self.collisions["predictive"].add(
            [c for c in pred_fac if c[0] >= t_obs],
            [c for c in true_fac if t_obs <= c[0] <= end + self.tolerance],
            self.tolerance,
        )
        for r, run in pred.counterfactual.items():
            if r not in truth.counterfactual:
                continue
            true_run = truth.counterfactual[r]
            self._positions("counterfactual", run, true_run, None)
            self.collisions["counterfactual"].add(
                list(run.collisions),
                [c for c in _true_collisions(true_run) if c[0] <= end + self.tolerance],
                self.tolerance,
            )

    def result(self) -> dict[str, Any]:
        """{"videos", "position_error_px": {name: {"per_step": [...], "mean": x, "n": n}},
        "collisions": {name: {"precision", "recall", "predicted", "true"}}}."""
        pos = {}
        for name, steps in sorted(self.errors.items()):
            per = [float(np.mean(steps[s])) for s in sorted(steps)]
            every = [e for s in steps.values() for e in s]
            pos[name] = {
                "per_step": per,
                "mean": float(np.mean(every)) if every else 0.0,
                "n": len(every),
            }
        return {
            "videos": self.videos,
            "tolerance_frames": self.tolerance,
            "position_error_px": pos,
            "collisions": {k: v.scores() for k, v in sorted(self.collisions.items())},
        }
