"""NS-DR's dynamics predictor: a PropNet over object states, trained on simulated runs.

- `train_dynamics(DynamicsConfig) -> run_dir`: train on a set's ground-truth runs (dynamics/).
- `load_dynamics(checkpoint) -> DynamicsPredictor`.
- `predict_dynamics(predictor, observation)` -> one video's predicted dynamics in the official
  layout (factual future and the runs without each object) that
  `tvr.clevrer.programs.dynamics.read_dynamics` reads; `write_predicted_dynamics` writes a folder.
- Observations: `observation_from_tracks` (perception) or `observation_from_facts` (ground truth).
- `scene_predictor(run)`: (observed scene, scene index) -> layout, for the NS-DR chain.
- `evaluate_dynamics`: position error over the rollout and collision precision/recall.
"""

from __future__ import annotations

import importlib
from typing import Any

# imported on first use, so that reading a config (as `tvr --help` does) loads no torch
_WHERE = {
    "DynamicsConfig": "tvr.clevrer.models.dynamics.config",
    "DynamicsPredictor": "tvr.clevrer.models.dynamics.train",
    "Observation": "tvr.clevrer.models.dynamics.observation",
    "RolloutOptions": "tvr.clevrer.models.dynamics.rollout",
    "VideoPrediction": "tvr.clevrer.models.dynamics.rollout",
    "evaluate_dynamics": "tvr.clevrer.models.dynamics.train",
    "load_dynamics": "tvr.clevrer.models.dynamics.train",
    "observation_from_facts": "tvr.clevrer.models.dynamics.observation",
    "observation_from_tracks": "tvr.clevrer.models.dynamics.observation",
    "predict_dynamics": "tvr.clevrer.models.dynamics.train",
    "predict_dynamics_split": "tvr.clevrer.models.dynamics.train",
    "scene_predictor": "tvr.clevrer.models.dynamics.train",
    "train_dynamics": "tvr.clevrer.models.dynamics.train",
    "write_predicted_dynamics": "tvr.clevrer.models.dynamics.train",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_WHERE[name]), name)
