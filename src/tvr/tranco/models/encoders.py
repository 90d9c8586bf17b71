"""CLIP image encoders for TrancoNet through open_clip: the paper's RN101, ViT-B/32, ViT-B/16 and
two small ones of the same architectures that train on a CPU.

The towers are built and loaded by the shared `tvr.training.clip_towers` (only the image tower,
open_clip's shipped configs, weights from a local open_clip or OpenAI CLIP checkpoint, nothing
downloaded); this module keeps TRANCO's list of encoders. Without weights a tower keeps its
random initialisation (torch's current seed).

The paper's encoders (Table 10's "fixed" parameters: RN101 56.3M, ViT-B/32 87.8M, ViT-B/16 86.2M)
use QuickGELU by default, as OpenAI's CLIP weights do; `quick_gelu=False` suits LAION-trained
open_clip weights. `small` (a 2-layer ViT on 64-pixel images, 0.5M parameters) and `smallrn` (a
CLIP ResNet of one block per stage, 1.4M) are tvr's, for the testbed and the tests.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from tvr.training.clip_towers import (
    OPENAI_MEAN,
    OPENAI_STD,
    build_tower,
    load_tower_weights,
    shipped_config,
)
from tvr.training.clip_towers import weights_digest as weights_digest  # re-exported

#: the pixel statistics CLIP was trained with (OpenAI's), used for every encoder
CLIP_MEAN = OPENAI_MEAN
CLIP_STD = OPENAI_STD


@dataclass(frozen=True)
class EncoderSpec:
    """One image encoder: its name here, the open_clip config it is built from, and its input."""

    name: str
    label: str  # as the paper writes it
    open_clip_name: str | None  # a shipped open_clip model config, or None for `config`
    config: dict[str, Any] | None = None  # {"embed_dim", "vision_cfg"} when not shipped

    def model_config(self) -> dict[str, Any]:
        """The open_clip model config (`embed_dim`, `vision_cfg`)."""
        if self.config is not None:
            return copy.deepcopy(self.config)
        found = shipped_config(self.open_clip_name)
        if found is None:  # never for the pinned open_clip; a clear message if it changes
            raise RuntimeError(f"open_clip has no model config {self.open_clip_name!r}")
        return found

    @property
    def image_size(self) -> int:
        size = self.model_config()["vision_cfg"]["image_size"]
        return int(size if isinstance(size, int) else size[0])

    @property
    def embed_dim(self) -> int:
        return int(self.model_config()["embed_dim"])


ENCODERS: dict[str, EncoderSpec] = {
    "rn101": EncoderSpec("rn101", "RN101", "RN101"),
    "vitb32": EncoderSpec("vitb32", "ViT-B/32", "ViT-B-32"),
    "vitb16": EncoderSpec("vitb16", "ViT-B/16", "ViT-B-16"),
    "small": EncoderSpec(
        "small",
        "small ViT",
        None,
        {
            "embed_dim": 128,
            "vision_cfg": {
                "image_size": 64,
                "layers": 2,
                "width": 128,
                "head_width": 32,
                "patch_size": 16,
            },
        },
    ),
    "smallrn": EncoderSpec(
        "smallrn",
        "small RN",
        None,
        {
            "embed_dim": 128,
            "vision_cfg": {
                "image_size": 64,
                "layers": [1, 1, 1, 1],
                "width": 16,
                "head_width": 16,
                "patch_size": None,
            },
        },
    ),
}

#: the encoders of the paper (Table 6, 7 and 10)
PAPER_ENCODERS = ("rn101", "vitb32", "vitb16")


def encoder_spec(name: str) -> EncoderSpec:
    """The spec of encoder `name`; ValueError listing the known ones."""
    if name not in ENCODERS:
        raise ValueError(f"unknown image encoder {name!r}: one of {', '.join(ENCODERS)}")
    return ENCODERS[name]


class ImageEncoder(nn.Module):
    """A CLIP image tower: (N, 3, S, S) normalised pixels -> (N, embed_dim) embeddings."""

    def __init__(self, spec: EncoderSpec, quick_gelu: bool = True) -> None:
        super().__init__()
        config = spec.model_config()
        self.spec = spec
        self.embed_dim = int(config["embed_dim"])
        self.image_size = spec.image_size
        self.visual = build_tower(config, quick_gelu)

    def forward(self, images: torch.Tensor) -> torch.Tensor:
        return self.visual(images)


def build_image_encoder(
    name: str, weights: str | Path | None = None, quick_gelu: bool = True
) -> ImageEncoder:
    """Encoder `name`, randomly initialised (torch's current seed), or with the image-tower
    weights of the local CLIP checkpoint `weights`."""
    encoder = ImageEncoder(encoder_spec(name), quick_gelu)
    if weights is not None:
        load_clip_weights(encoder, weights)
    return encoder


def load_clip_weights(encoder: ImageEncoder, path: str | Path) -> None:
    """Load the image tower of a local CLIP checkpoint into `encoder`; UserError naming the file
    if it cannot be read or does not fit."""
    load_tower_weights(encoder.visual, path, "--clip-weights", encoder.spec.label)


def parameter_count(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())
