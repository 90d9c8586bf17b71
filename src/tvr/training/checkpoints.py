"""Lightning checkpoints of a training run read back with one-line errors: the dict, the weights.

A run's checkpoint (`training.runs.fit_run`) holds the run's config in Lightning's
`hyper_parameters["config"]` beside the module's `state_dict`, whose model entries start with
"model." (the LightningModule's `model` attribute).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from tvr.core.errors import UserError


def read_run_checkpoint(path: str | Path, command: str) -> dict[str, Any]:
    """The checkpoint dict of a file that `command` (e.g. "tvr train") wrote: a run config in its
    hyper-parameters and a state dict; UserError naming the file otherwise."""
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such checkpoint")
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=False)
    except Exception as err:  # torch.load fails in many ways on a file that is no checkpoint
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise UserError(f"{path}: not a checkpoint of `{command}` ({reason})") from None
    hparams = ckpt.get("hyper_parameters") if isinstance(ckpt, dict) else None
    if not isinstance(hparams, dict) or "config" not in hparams or "state_dict" not in ckpt:
        raise UserError(f"{path}: not a checkpoint of `{command}` (it holds no run config)")
    return ckpt


def model_state(ckpt: dict[str, Any], prefix: str = "model.") -> dict[str, torch.Tensor]:
    """The model's weights of a checkpoint: its state dict's `prefix` entries, prefix removed."""
    return {k[len(prefix) :]: v for k, v in ckpt["state_dict"].items() if k.startswith(prefix)}
