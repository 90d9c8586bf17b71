"""`train_dynamics(config) -> run_dir`, loading a trained predictor, and predicting videos.

A run folder holds config.json, metrics.csv (per epoch: losses, the validation windows' pixel
error per step and collision precision/recall), checkpoints/best.ckpt (lowest validation pixel
error: the validation loss rises with the collision cross-entropy while the rollouts still
improve, docs/clevrer.md) and last.ckpt, and dynamics_eval.json: the best checkpoint rolled out
on the validation videos from their ground-truth observation (`metrics.DynamicsScores`). A rerun
resumes from last.ckpt.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from lightning.pytorch.callbacks import Callback

from tvr.clevrer.data.dynamics import write_dynamics
from tvr.clevrer.data.layout import sim_filename
from tvr.clevrer.models.dynamics.config import DynamicsConfig
from tvr.clevrer.models.dynamics.metrics import DynamicsScores
from tvr.clevrer.models.dynamics.module import DynamicsModule, WindowData, load_runs
from tvr.clevrer.models.dynamics.observation import Observation, observation_from_facts
from tvr.clevrer.models.dynamics.propnet import PropNet
from tvr.clevrer.models.dynamics.rollout import (
    RolloutOptions,
    VideoPrediction,
    predict_video,
    prediction_layout,
)
from tvr.clevrer.programs.facts import SceneFacts
from tvr.core.jsonl import write_json
from tvr.training.runs import fit_config, load_run_module, open_run

EVAL_FILE = "dynamics_eval.json"


@dataclass(frozen=True)
class DynamicsPredictor:
    """A trained PropNet with the frame stride it was trained at."""

    model: PropNet
    stride: int

    def predict(
        self, observation: Observation, options: RolloutOptions | None = None
    ) -> VideoPrediction:
        return predict_video(self.model, observation, self.stride, options)


def load_dynamics(checkpoint: str | Path, map_location: str = "cpu") -> DynamicsPredictor:
    """The predictor of a checkpoint (a run folder: its best.ckpt), in eval mode."""
    module = load_run_module(DynamicsModule, checkpoint, "dynamics", map_location)
    return DynamicsPredictor(module.model, module.config.stride)


def predict_dynamics(
    predictor: DynamicsPredictor, observation: Observation, options: RolloutOptions | None = None
) -> dict[str, Any]:
    """One video's predicted dynamics in the official layout (what `tvr clevrer execute` and
    `tvr.clevrer.programs.dynamics.read_dynamics` read)."""
    return prediction_layout(predictor.predict(observation, options))


def scene_predictor(
    checkpoint: str | Path, options: RolloutOptions | None = None
) -> Callable[[Any, int], dict[str, Any]]:
    """(observed scene, scene index) -> its predicted dynamics in the official layout, for the
    NS-DR chain; the observed scene is anything with `objects`, `xy` (T, N, 2) pixels and
    `visible` (T, N) over frames 0..T-1 (an `Observation`, tracks, ground truth)."""
    predictor = load_dynamics(checkpoint)

    def predict(observed: Any, scene_index: int) -> dict[str, Any]:
        obs = Observation(
            tuple(observed.objects),
            np.nan_to_num(np.asarray(observed.xy, dtype=np.float64)),
            np.asarray(observed.visible, dtype=bool),
        )
        return predict_dynamics(predictor, obs, options)

    return predict


def write_predicted_dynamics(
    predictor: DynamicsPredictor,
    observations: Mapping[int, Observation],
    out_dir: str | Path,
    options: RolloutOptions | None = None,
) -> list[Path]:
    """Predict each video's dynamics and write out_dir/sim_XXXXX.json (checked by the reader)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for index, obs in sorted(observations.items()):
        path = out / sim_filename(index)
        write_dynamics(path, predict_dynamics(predictor, obs, options), check=True)
        written.append(path)
    return written


def evaluate_dynamics(
    predictor: DynamicsPredictor,
    truth: Mapping[int, SceneFacts],
    options: RolloutOptions | None = None,
) -> dict[str, Any]:
    """Scores of rollouts from each video's ground-truth observation against its simulated runs."""
    scores = DynamicsScores()
    for facts in truth.values():
        scores.add(predictor.predict(observation_from_facts(facts), options), facts)
    return scores.result()


def train_dynamics(
    config: DynamicsConfig,
    callbacks: Sequence[Callback] = (),
    progress_bar: bool = False,
    epoch_lines: bool = True,
) -> Path:
    """Train (or resume) the dynamics predictor of `config`; returns its run folder."""
    run_dir = open_run(config)
    if config.threads:
        torch.set_num_threads(config.threads)
    data = WindowData(config)
    data.setup()
    result = fit_config(
        config, lambda: DynamicsModule(config.to_dict()), data, callbacks, progress_bar,
        epoch_lines, batch_size=lambda batch: int(batch["active"].shape[0]),
        monitor="val/err_px", mode="min", monitor_label="val pixel error", gradient_clip_val=1.0,
    )  # fmt: skip
    if result.trainer.is_global_zero:
        scores = evaluate_dynamics(load_dynamics(result.best), data.val_facts)
        write_json(run_dir / EVAL_FILE, {"checkpoint": result.best.name, **scores})
    return run_dir


def predict_dynamics_split(
    run_dir: str | Path,
    checkpoint: str | Path,
    data_root: str | Path,
    split: str,
    videos: int | None = None,
    name: str | None = None,
) -> tuple[Path, dict[str, Any]]:
    """Roll a run's checkpoint out on each of `split`'s videos (the first `videos` or all) from
    its ground-truth observation: writes RUN/predictions/NAME/sim_XXXXX.json (the official
    layout) and RUN/eval/NAME/dynamics_eval.json (scores against the simulated runs; NAME
    defaults to `split`); returns the scores' path and the scores."""
    name = name or split
    _, truth = load_runs(str(data_root), split, videos, counterfactual=False)
    predictor = load_dynamics(checkpoint)
    predictions = Path(run_dir) / "predictions" / name
    predictions.mkdir(parents=True, exist_ok=True)
    scores = DynamicsScores()
    for index, facts in sorted(truth.items()):
        prediction = predictor.predict(observation_from_facts(facts))
        scores.add(prediction, facts)
        write_dynamics(predictions / sim_filename(index), prediction_layout(prediction), check=True)
    path = Path(run_dir) / "eval" / name / EVAL_FILE
    result = scores.result()
    write_json(path, {"checkpoint": Path(checkpoint).name, "split": split, **result})
    return path, result
