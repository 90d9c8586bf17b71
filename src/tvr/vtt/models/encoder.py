"""The CLIP image encoder of TTNet and GLACNet* (open_clip), its preprocessing and its identity.

`name` is an open_clip architecture ("ViT-L-14" as the paper, "ViT-B-32", "RN101", ...) or
"tvr-tiny", a two-layer 64-pixel ViT of the same code for CPU runs and tests. Weights come only
from a local file (`weights`, an open_clip or OpenAI CLIP checkpoint); without one the encoder is
randomly initialised from `seed`, the same weights every time (never downloaded); the shared
`tvr.training.clip_towers` builds only the image tower and loads it. `identity()`
names the encoder and its weights (the file's SHA-256, or the seed and torch version of a random
one): the feature cache keys on it, so features of other weights are never read.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from tvr.core.errors import UserError
from tvr.core.notices import warn_random_weights
from tvr.training.clip_towers import (
    OPENAI_MEAN,
    OPENAI_STD,
    build_tower,
    check_weights_file,
    load_tower_weights,
    shipped_config,
    tower_image_size,
)
from tvr.training.clip_towers import file_sha256 as file_sha256  # re-exported

#: small architectures of tvr (open_clip's ViT code, other sizes), for CPU runs and tests
TINY_ARCHITECTURES: dict[str, dict[str, Any]] = {
    "tvr-tiny": {
        "base": "ViT-B-32",
        "embed_dim": 64,
        "vision_cfg": {"image_size": 64, "layers": 2, "width": 64, "patch_size": 16,
                       "head_width": 32},
        "text_cfg": {"context_length": 8, "vocab_size": 64, "width": 32, "heads": 2, "layers": 1},
    },
    # the same tower on 128-pixel images (64 patches): small objects of the testbed stay visible
    "tvr-tiny-128": {
        "base": "ViT-B-32",
        "embed_dim": 64,
        "vision_cfg": {"image_size": 128, "layers": 2, "width": 64, "patch_size": 16,
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
        self.image_size = tower_image_size(self.visual)
        self.output_dim = int(self.visual.output_dim)
        self.mean = OPENAI_MEAN
        self.std = OPENAI_STD

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.visual(images)

    def transform(self) -> Any:
        """open_clip's evaluation transform for this encoder (resize the short side, bicubic,
        centre crop, normalise): PIL image -> (3, S, S) tensor."""
        import open_clip

        return open_clip.image_transform(
            self.image_size, is_train=False, mean=self.mean, std=self.std,
            resize_mode="shortest", interpolation="bicubic",
        )  # fmt: skip


def architecture_config(name: str) -> dict[str, Any]:
    """The open_clip model config of encoder `name`; UserError naming the choices if unknown."""
    tiny = TINY_ARCHITECTURES.get(name)
    config = tiny if tiny is not None else shipped_config(name)
    if config is None:
        raise UserError(f"unknown image encoder {name!r}: an open_clip architecture "
                        f"(e.g. ViT-L-14, ViT-B-32, RN101) or one of {sorted(TINY_ARCHITECTURES)}")  # fmt: skip
    return config


def _build_visual(spec: EncoderSpec) -> nn.Module:
    config = architecture_config(spec.name)
    if spec.weights is not None:
        check_weights(spec.weights)
    visual = build_tower(config, seed=spec.seed)
    if spec.weights is not None:
        load_tower_weights(visual, spec.weights, "--encoder-weights", spec.name)
    return visual


#: the option of `tvr vtt train` and `tvr vtt baseline` that gives the encoder's weights
WEIGHTS_OPTION = "--encoder-weights"


def warn_if_random(spec: EncoderSpec, trained: bool = False, option: str = WEIGHTS_OPTION) -> bool:
    """One warning line on stderr if `spec` has no weights file (its weights are random, from
    its seed); `trained`: the encoder is trained in the run, starting from them; `option`: how
    to give weights. True if warned."""
    if spec.weights is not None:
        return False
    architecture_config(spec.name)  # an unknown name is an error, not a warning first
    what = f"the image encoder {spec.name}" + (" (trained in this run)" if trained else "")
    warn_random_weights(what, option, spec.seed)
    return True


def check_weights(weights: str) -> str:
    """`weights` if it is a file; else UserError (weights are never downloaded)."""
    check_weights_file(weights, "--encoder-weights")
    return weights
