"""Checkpoints of `tvr train` read back (their run's config, the model weights) with one-line errors.

A checkpoint holds the run's `TrainConfig` (Lightning's `hyper_parameters["config"]`) beside the
weights, so a fine-tune or a prediction can rebuild the very model it holds: the model name, the
setting, the image size and the forms of its parts (`ARCHITECTURE`) fix its weights' shapes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tvr.core.errors import UserError
from tvr.training.checkpoints import model_state as model_state  # re-exported
from tvr.training.checkpoints import read_run_checkpoint
from tvr.trance.train.config import TrainConfig

#: the config fields that decide which model the weights belong to
ARCHITECTURE = ("model", "setting", "image_size", "decoder_form", "duda_form")


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """The checkpoint dict of a file `tvr train` wrote; UserError naming the file otherwise."""
    return read_run_checkpoint(path, "tvr train")


def checkpoint_config(ckpt: dict[str, Any], path: str | Path) -> TrainConfig:
    """The config of the run that wrote checkpoint `ckpt` (read from `path`), as it trained."""
    try:
        return TrainConfig.from_saved(ckpt["hyper_parameters"]["config"])
    except (TypeError, ValueError) as err:
        raise UserError(f"{path}: its run config is not valid here: {err}") from None


def _shown(name: str, value: Any) -> str:
    if name == "image_size":
        return f"{value[1]}x{value[0]}"  # WIDTHxHEIGHT, as the options take it
    return str(value)


def check_architecture(config: TrainConfig, saved: TrainConfig, path: str | Path) -> None:
    """UserError naming each ARCHITECTURE field in which `config` differs from the run that
    wrote the checkpoint at `path` (its weights would not fit the model)."""
    wanted, have = config.to_dict(), saved.to_dict()
    differ = [
        f"{name} {_shown(name, have[name])} (this run asks for {_shown(name, wanted[name])})"
        for name in ARCHITECTURE
        if wanted[name] != have[name]
    ]
    if differ:
        raise UserError(
            f"{path} holds a model of another shape: {'; '.join(differ)}; leave out --model, "
            "--setting and --image-size to take them from the checkpoint"
        )
