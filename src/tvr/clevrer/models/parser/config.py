"""The question parser's run config (`tvr clevrer train parser`), saved as config.json in its run."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from tvr.core.errors import UserError
from tvr.training.run_config import RunConfig


@dataclass
class ParserConfig(RunConfig):
    """Everything a parser run depends on; the defaults are the paper's (appendix B, C).

    Args:
        data: a CLEVRER set (generated, or the release) holding the question files.
        train_split, val_split: the question files trained on and scored each epoch.
        programs: train on this many programs (the paper's 1,000: n descriptive questions, n
            multiple-choice questions, 4n choices), or None for all of the training split.
        val_size: score this many held-out texts (questions and choices) each epoch, drawn with
            the seed (None: all); the run's final parse scores every one.
        embed_dim, hidden, layers, dropout: the networks (the paper: 300, 2 x 256).
        max_length: most program tokens a parse may have.
        epochs, batch_size, lr: Adam with the paper's batch 64 and lr 7e-4 (its 30,000
            iterations are about 320 epochs of the 6,000 texts of 1,000 programs).
        The run options (epochs, devices, output_dir, ...) are `RunConfig`'s.
    """

    PATH_FIELDS: ClassVar[tuple[str, ...]] = ("data",)

    data: str = ""
    train_split: str = "train"
    val_split: str = "validation"
    programs: int | None = 1000
    val_size: int | None = 2000
    embed_dim: int = 300
    hidden: int = 256
    layers: int = 2
    dropout: float = 0.0
    max_length: int = 64
    batch_size: int = 64
    lr: float = 7e-4
    # run options with this model's defaults
    epochs: int = 100
    devices: int | str = 1
    precision: str = "32-true"
    output_dir: str = "runs/clevrer"

    def default_run_name(self) -> str:
        return f"parser-{self.programs if self.programs is not None else 'all'}"

    def validate(self) -> ParserConfig:
        """UserError naming the first bad value."""
        if not self.data:
            raise UserError("--data is required (a CLEVRER set with question files)")
        for name in ("programs", "val_size"):
            value = getattr(self, name)
            if value is not None and value < 1:
                raise UserError(f"{name} must be at least 1 (or all), got {value}")
        for name in ("embed_dim", "hidden", "layers", "max_length", "epochs", "batch_size"):
            if getattr(self, name) < 1:
                raise UserError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not 0.0 <= self.dropout < 1.0:
            raise UserError(f"dropout must be in [0, 1), got {self.dropout}")
        if self.lr <= 0:
            raise UserError(f"lr must be positive, got {self.lr}")
        return self
