"""The dynamics predictor's training config: data, the network, windows, schedule; saved as config.json."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tvr.core.errors import UserError
from tvr.training.run_config import RESUMABLE_RUN_FIELDS, RunConfig


@dataclass
class DynamicsConfig(RunConfig):
    """One training run of the PropNet dynamics predictor.

    Args:
        data_root: a set with dynamics/ (ground truth in the predicted-dynamics layout: every
            frame of the factual run and of each counterfactual run, and their collisions), as
            `tvr clevrer generate` writes it; training runs come from its train split,
            validation runs from its validation split.
        train_videos, val_videos: how many videos of each split (None: all).
        counterfactual: train on the counterfactual runs too (the motion without each object).
        stride: frames per model step (the official predictor: every 5th frame).
        history: the history window, in steps (the paper: 3).
        rollout: steps the model rolls out on its own predictions in training (the loss sums them).
        window_step: a training window starts every this many frames of a run.
        hidden, steps: the network's D (the paper: 512) and propagation steps L (the paper: 2).
        collision_weight: weight of the collision loss; collision_pos_weight: weight of a
            collision against a non-collision in it (collisions are rare).
        epochs, max_minutes, batch_size, lr: Adam, lr times `lr_decay` every `lr_decay_epochs`
            epochs (the paper: 1e-4, 0.3 every 3 epochs, 9 epochs of batch 2 videos).
        threads: torch CPU threads (None: torch's default).
        The other run options (seed, devices, output_dir, ...) are `RunConfig`'s.
    """

    RESUMABLE_FIELDS: ClassVar[frozenset[str]] = RESUMABLE_RUN_FIELDS | {"threads"}
    PATH_FIELDS: ClassVar[tuple[str, ...]] = ("data_root",)

    data_root: str = ""
    train_videos: int | None = None
    val_videos: int | None = 50
    counterfactual: bool = True
    stride: int = 5
    history: int = 3
    rollout: int = 3
    window_step: int = 2
    hidden: int = 128
    steps: int = 2
    collision_weight: float = 1.0
    collision_pos_weight: float = 5.0
    batch_size: int = 64
    lr: float = 1e-3
    lr_decay: float = 0.3
    lr_decay_epochs: int = 4
    threads: int | None = None
    # run options with this model's defaults
    epochs: int = 12
    precision: str = "32-true"
    output_dir: str = "runs/clevrer"

    def default_run_name(self) -> str:
        return "dynamics-propnet"

    def validate(self) -> DynamicsConfig:
        """UserError naming the first bad value."""
        if not self.data_root:
            raise UserError("data_root is required (a CLEVRER set with dynamics/)")
        for name in ("stride", "history", "rollout", "window_step", "hidden", "steps", "epochs",
                     "batch_size", "lr_decay_epochs"):  # fmt: skip
            if getattr(self, name) < 1:
                raise UserError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.history < 2:
            raise UserError(f"history must be at least 2 steps (a velocity), got {self.history}")
        for name in ("train_videos", "val_videos"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise UserError(f"{name} must be at least 1 (or None for all), got {value}")
        if self.lr <= 0 or not 0 < self.lr_decay <= 1:
            raise UserError(
                f"lr must be positive and lr_decay in (0, 1]: got {self.lr}, {self.lr_decay}"
            )
        return self
