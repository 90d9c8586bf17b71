"""The scene parser's run config (`tvr trance parser train`), saved as config.json in its run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tvr.core.errors import UserError
from tvr.training.run_config import RESUMABLE_RUN_FIELDS, RunConfig


@dataclass
class SceneParserConfig(RunConfig):
    """Everything a scene parser run depends on.

    Args:
        data: a `tvr generate` dataset folder (its small 160x120 images and samples.jsonl).
        train_split, val_split: the splits trained on and scored each epoch.
        limit: train on the first N samples of the train split (None: all); each sample gives
            four images (init.C, fin.L, fin.C, fin.R).
        width: the network's channels after its stem (`SceneParserNet`).
        min_pixels: objects showing fewer pixels (of 320x240) are neither targets nor
            penalised: the parser is not asked to find what barely shows.
        sigma: the centre Gaussian's width, in output cells (4 pixels of 160x120).
        flip: mirror half of the training images left-right (their labels with them).
        augment_look: randomise the look of the training images at this strength (0: off, 1:
            the full ranges of `tvr.trance.perception.looks.randomise_look`: light, sheen,
            colour, blur, noise), so that the parser learns to read more than one look.
        batch_size, lr, weight_decay: AdamW, cosine decay over the run.
        The run options (epochs, devices, output_dir, ...) are `RunConfig`'s.
    """

    RESUMABLE_FIELDS: ClassVar[frozenset[str]] = RESUMABLE_RUN_FIELDS
    PATH_FIELDS: ClassVar[tuple[str, ...]] = ("data",)

    data: str = ""
    train_split: str = "train"
    val_split: str = "val"
    limit: int | None = None
    width: int = 24
    min_pixels: int = 20
    sigma: float = 1.0
    flip: bool = True
    augment_look: float = 0.0
    batch_size: int = 32
    lr: float = 2e-3
    weight_decay: float = 1e-4
    # run options with this model's defaults
    epochs: int = 8
    devices: int | str = 1
    precision: str = "32-true"
    output_dir: str = "runs/trance"

    def default_run_name(self) -> str:
        return "scene-parser"

    def validate(self) -> SceneParserConfig:
        """UserError naming the first bad value."""
        if not self.data:
            raise UserError("--data is required (a `tvr generate` dataset folder)")
        for name in ("width", "epochs", "batch_size"):
            if getattr(self, name) < 1:
                raise UserError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.limit is not None and self.limit < 1:
            raise UserError(f"limit must be at least 1, got {self.limit}")
        if not 0.0 <= self.augment_look <= 2.0:
            raise UserError(f"augment_look must be within 0..2, got {self.augment_look}")
        if self.sigma <= 0 or self.lr <= 0:
            raise UserError("sigma and lr must be positive")
        return self
