"""The CLIP image encoder of TTNet and GLACNet* (open_clip), its preprocessing and its identity.

`name` is an open_clip architecture ("ViT-L-14" as the paper, "ViT-B-32", "RN101", ...) or
"tvr-tiny", a two-layer 64-pixel ViT of the same code for CPU runs and tests. Weights come only
from a local file (`weights`, an open_clip or OpenAI CLIP checkpoint); without one the encoder is
randomly initialised from `seed`, the same weights every time (never downloaded). `identity()`
names the encoder and its weights (the file's SHA-256, or the seed and torch version of a random
one): the feature cache keys on it, so features of other weights are never read.
"""

from __future__ import annotations

import functools
import hashlib
import os
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from tvr.core.errors import UserError

#: small architectures of tvr (open_clip's ViT code, other sizes), for CPU runs and tests
TINY_ARCHITECTURES: dict[str, dict[str, Any]] = {
    "tvr-tiny": {
        "base": "ViT-B-32",
        "embed_dim": 64,
        "vision_cfg": {"image_size": 64, "layers": 2, "width": 64, "patch_size": 16,
                       "head_width": 32},
        "text_cfg": {"context_length": 8, "vocab_size": 64, "width": 32, "heads": 2, "layers": 1},
    },
}  # fmt: skip
#: changes when the preprocessing below changes (part of the cache key)
PREPROCESS_VERSION = 1


@dataclass(frozen=True)
class EncoderSpec:
    """Which CLIP image encoder: architecture, local weights (None: random from `seed`)."""

    name: str = "ViT-L-14"
    weights: str | None = None
    seed: int = 0

    def identity(self) -> dict[str, Any]:
        """What the encoder's features depend on, as JSON (the feature cache's key)."""
        out: dict[str, Any] = {"encoder": self.name, "preprocess": PREPROCESS_VERSION}
        if self.weights is None:
            out["weights"] = {"random_init_seed": self.seed, "torch": str(torch.__version__)}
        else:
            out["weights"] = {"sha256": file_sha256(check_weights(self.weights))}
        return out


class ClipImageEncoder(nn.Module):
    """CLIP's image tower: (M, 3, S, S) normalised images -> (M, output_dim) features."""

    def __init__(self, spec: EncoderSpec) -> None:
        super().__init__()
        self.spec = spec
        self.visual = _build_visual(spec)
        size = self.visual.image_size
        self.image_size = int(size[0] if isinstance(size, tuple | list) else size)
        self.output_dim = int(self.visual.output_dim)
        cfg = self.visual.preprocess_cfg
        self.mean = tuple(cfg["mean"])
        self.std = tuple(cfg["std"])

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.visual(images)

    def transform(self) -> Any:
        """open_clip's evaluation transform for this encoder (resize the short side, centre
        crop, normalise): PIL image -> (3, S, S) tensor."""
        import open_clip

        cfg = self.visual.preprocess_cfg
        return open_clip.image_transform(
            self.image_size, is_train=False, mean=self.mean, std=self.std,
            resize_mode=cfg.get("resize_mode", "shortest"),
            interpolation=cfg.get("interpolation", "bicubic"),
        )  # fmt: skip


def _build_visual(spec: EncoderSpec) -> nn.Module:
    try:
        import open_clip
    except ImportError:
        raise UserError("the VTT models need open_clip (pip install 'tvr[clip]')") from None
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    tiny = TINY_ARCHITECTURES.get(spec.name)
    if tiny is None and spec.name not in open_clip.list_models():
        raise UserError(f"unknown image encoder {spec.name!r}: an open_clip architecture "
                        f"(e.g. ViT-L-14, ViT-B-32, RN101) or one of {sorted(TINY_ARCHITECTURES)}")  # fmt: skip
    if spec.weights is not None:
        check_weights(spec.weights)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(spec.seed)
        if tiny is not None:
            kwargs = {k: v for k, v in tiny.items() if k != "base"}
            model = _quiet(open_clip.create_model, tiny["base"], pretrained=None, **kwargs)
        else:
            model = _quiet(open_clip.create_model, spec.name, pretrained=None)
    if spec.weights is not None:
        _load_weights(model, Path(spec.weights))
    return model.visual


def check_weights(weights: str) -> str:
    """`weights` if it is a file; else UserError (weights are never downloaded)."""
    if not Path(weights).is_file():
        raise UserError(f"--encoder-weights {weights}: no such file (weights are only read "
                        "from a local file, never downloaded)")  # fmt: skip
    return weights


def _load_weights(model: nn.Module, path: Path) -> None:
    """An open_clip or OpenAI CLIP checkpoint into `model` (strict), one line if it does not fit."""
    from open_clip.factory import load_checkpoint

    try:
        load_checkpoint(model, str(path))
    except (RuntimeError, KeyError, ValueError, OSError, EOFError, pickle.UnpicklingError) as err:
        first = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise UserError(f"--encoder-weights {path}: not CLIP weights of this architecture "
                        f"({first})") from None  # fmt: skip


def _quiet(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Call open_clip without its 'initialized randomly' warning (random init is meant here)."""
    import logging

    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        return fn(*args, **kwargs)
    finally:
        root.setLevel(level)


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
