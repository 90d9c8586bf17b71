"""CLIP image towers through open_clip for every benchmark: built offline, weights from a local file.

Only the image tower of a CLIP model is built (open_clip's own tower builder, on one of its
shipped model configs or on a config given here), so no text tower is made for nothing. A tower
is randomly initialised (from `seed` when one is given, the same weights every time), or it
takes the image-tower entries of a local checkpoint (`load_tower_weights`: an open_clip or
OpenAI CLIP file, `.pt`/`.bin`/`.safetensors`, TorchScript included). Nothing here downloads
anything. The benchmarks keep their own lists of encoders (TRANCO's `small`, VTT's `tvr-tiny`)
and pass their configs in.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import logging
import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from torch import nn

from tvr.core.errors import UserError
from tvr.core.extras import missing_extra

#: the pixel statistics of OpenAI's CLIP, open_clip's default for every architecture
OPENAI_MEAN = (0.48145466, 0.4578275, 0.40821073)
OPENAI_STD = (0.26862954, 0.26130258, 0.27577711)


def _open_clip() -> Any:
    try:
        import open_clip
    except ImportError as err:
        raise missing_extra(err, "CLIP encoders") from None
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return open_clip


def shipped_config(name: str) -> dict[str, Any] | None:
    """open_clip's model config `name` (`embed_dim`, `vision_cfg`, ...), or None if it ships none."""
    found = _open_clip().get_model_config(name)
    return copy.deepcopy(found) if found is not None else None


@contextmanager
def _quiet_open_clip() -> Iterator[None]:
    """open_clip without its 'initialized randomly' notes (random init is meant here)."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)


def build_tower(
    config: Mapping[str, Any], quick_gelu: bool | None = None, seed: int | None = None
) -> nn.Module:
    """The image tower of the CLIP model `config` (`embed_dim`, `vision_cfg`), randomly
    initialised: from `seed` when given (torch's global generator is left as it was), else from
    torch's current seed. `quick_gelu` None takes the config's own (`quick_gelu`, default off)."""
    from open_clip.model import _build_vision_tower

    _open_clip()
    gelu = bool(config.get("quick_gelu", False)) if quick_gelu is None else quick_gelu
    vision = copy.deepcopy(dict(config["vision_cfg"]))
    with _quiet_open_clip():
        if seed is None:
            return _build_vision_tower(int(config["embed_dim"]), vision, gelu)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(seed)
            return _build_vision_tower(int(config["embed_dim"]), vision, gelu)


def tower_image_size(tower: nn.Module) -> int:
    """The square input side of a tower."""
    size = tower.image_size
    return int(size[0] if isinstance(size, tuple | list) else size)


def check_weights_file(path: str | Path, option: str) -> Path:
    """`path` as a Path if it is a file; else UserError naming `option` (never downloaded)."""
    if not Path(path).is_file():
        raise UserError(f"{option} {path}: no such file (weights are only read from a local "
                        "file, never downloaded)")  # fmt: skip
    return Path(path)


def load_tower_weights(tower: nn.Module, path: str | Path, option: str, label: str) -> None:
    """Load the image tower of a local CLIP checkpoint (the `visual.*` entries of a whole CLIP
    model, or a bare tower's state dict) into `tower`, strictly; UserError naming `option` and
    the file if it cannot be read or is not the tower of encoder `label`."""
    from open_clip.factory import load_state_dict

    path = check_weights_file(path, option)
    try:
        state = load_state_dict(str(path), weights_only=False)
    except Exception as err:  # torch.load and safetensors fail in many ways on other files
        reason = (str(err).strip().splitlines() or [type(err).__name__])[0]
        raise UserError(f"{option} {path}: not a CLIP checkpoint ({reason})") from None
    if any(k.startswith("visual.") for k in state):
        state = {k.removeprefix("visual."): v for k, v in state.items() if k.startswith("visual.")}
    try:
        tower.load_state_dict(state, strict=True)
    except RuntimeError as err:
        first = str(err).strip().splitlines()
        raise UserError(
            f"{option} {path}: not the image tower of {label} "
            f"({first[1].strip() if len(first) > 1 else first[0]})"
        ) from None


def weights_digest(module: nn.Module) -> str:
    """sha256 of a module's state: every entry's name, dtype, shape and bytes, in order. Two
    modules give the same digest exactly when their weights are the same."""
    h = hashlib.sha256()
    for name, tensor in module.state_dict().items():
        t = tensor.detach().cpu().contiguous()
        h.update(f"{name}:{t.dtype}:{tuple(t.shape)};".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
    return h.hexdigest()


@functools.cache
def _sha256_of(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 22), b""):
            digest.update(block)
    return digest.hexdigest()


def file_sha256(path: str | Path) -> str:
    """SHA-256 of a file's bytes (memoised per path, size and modification time)."""
    st = Path(path).stat()
    return _sha256_of(str(Path(path).resolve()), st.st_size, st.st_mtime_ns)
