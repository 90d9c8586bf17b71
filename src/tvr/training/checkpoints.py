"""Torch files read back with one-line errors: every `torch.load` of tvr goes through `load_torch`.

A run's checkpoint (`training.runs.fit_run`) holds the run's config in Lightning's
`hyper_parameters["config"]` beside the module's `state_dict`, whose model entries start with
"model." (the LightningModule's `model` attribute). `read_run_checkpoint` reads one as a dict,
`load_module` builds its LightningModule; a file of random bytes, a truncated file or another
kind of file is one line naming it, never an unpickling traceback.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import torch

from tvr.core.errors import UserError

T = TypeVar("T")


def load_torch(
    path: str | Path,
    what: str,
    *,
    weights_only: bool = True,
    map_location: Any = "cpu",
    label: str | None = None,
) -> Any:
    """`torch.load` of the file `path`; UserError "`label`: not `what` (reason)" (label: the
    path) when it is missing or cannot be read as a torch file (random bytes, truncated, a
    pickle of another kind). `weights_only=False` only for tvr's own checkpoints, which hold
    their run config."""
    path = Path(path)
    label = str(path) if label is None else label
    if not path.is_file():
        raise UserError(f"{label}: no such file ({what})")
    try:
        return torch.load(path, map_location=map_location, weights_only=weights_only)
    except Exception as err:  # torch.load fails in many ways (UnpicklingError, EOFError, ...)
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        if len(reason) > 120:
            reason = reason[:117] + "..."
        raise UserError(f"{label}: not {what} ({type(err).__name__}: {reason})") from None


def read_run_checkpoint(
    path: str | Path, command: str, map_location: Any = "cpu"
) -> dict[str, Any]:
    """The checkpoint dict of a file that `command` (e.g. "tvr train") wrote: a run config in its
    hyper-parameters and a state dict; UserError naming the file otherwise."""
    return _read_checkpoint(path, f"a checkpoint of `{command}`", map_location)


def _read_checkpoint(path: str | Path, what: str, map_location: Any) -> dict[str, Any]:
    path = Path(path)
    if not path.is_file():
        raise UserError(f"{path}: no such checkpoint")
    ckpt = load_torch(path, what, weights_only=False, map_location=map_location)
    hparams = ckpt.get("hyper_parameters") if isinstance(ckpt, dict) else None
    if not isinstance(hparams, dict) or "config" not in hparams or "state_dict" not in ckpt:
        raise UserError(f"{path}: not {what} (it holds no run config)")
    return ckpt


def load_module(
    module_class: type[T], path: str | Path, what: str, map_location: Any = "cpu"
) -> T:
    """The LightningModule `module_class` of the checkpoint `path`, `what` it is (e.g. "a scene
    parser checkpoint", "a checkpoint of `tvr vtt train`") (its
    hyper-parameters are the module's init arguments, as `save_hyperparameters` stored them),
    weights loaded strictly, in eval mode; UserError naming the file when it is not one."""
    ckpt = _read_checkpoint(path, what, map_location)
    try:
        module = module_class(**ckpt["hyper_parameters"])
        module.on_load_checkpoint(ckpt)  # type: ignore[attr-defined]
        module.load_state_dict(ckpt["state_dict"], strict=True)  # type: ignore[attr-defined]
    except (KeyError, TypeError, RuntimeError, ValueError, AttributeError) as err:
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise UserError(f"{path}: not {what} ({reason})") from None
    if map_location is not None and not callable(map_location) and not isinstance(map_location, dict):
        module = module.to(map_location)  # type: ignore[attr-defined]
    return module.eval()  # type: ignore[attr-defined]


def model_state(ckpt: dict[str, Any], prefix: str = "model.") -> dict[str, torch.Tensor]:
    """The model's weights of a checkpoint: its state dict's `prefix` entries, prefix removed."""
    return {k[len(prefix) :]: v for k, v in ckpt["state_dict"].items() if k.startswith(prefix)}
