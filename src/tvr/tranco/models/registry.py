"""TrancoNet model names: an encoder and a decoder letter, `rn101-t`, `vitb32-g`, `small-t`...

The paper's spellings are accepted too (`RN101-T`, `ViT-B/32-T`, `ViT-B-16-G`). The five models
of Table 6 are `PAPER_MODELS`; every encoder works with both decoders.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from tvr.tranco.models.encoders import ENCODERS, build_image_encoder, encoder_spec
from tvr.tranco.models.trancenet import DECODERS, HeadConfig, TrancoHead, TrancoNet

#: Table 6's TrancoNets, canonical names
PAPER_MODELS = ("rn101-g", "vitb32-t", "vitb16-t", "rn101-t")
#: every encoder with every decoder
ALL_MODELS = tuple(f"{enc}-{dec}" for enc in ENCODERS for dec in DECODERS)


@dataclass(frozen=True)
class ModelSpec:
    """A parsed model name: encoder (a key of ENCODERS) and decoder ("t" or "g")."""

    encoder: str
    decoder: str

    @property
    def name(self) -> str:
        return f"{self.encoder}-{self.decoder}"

    @property
    def label(self) -> str:
        """As the paper writes it: `ViT-B/32-T`."""
        return f"{encoder_spec(self.encoder).label}-{self.decoder.upper()}"


def parse_model_name(name: str) -> ModelSpec:
    """`vitb32-t`, `ViT-B/32-T`, `vit-b-32-t` -> ModelSpec("vitb32", "t"); ValueError listing
    the known names otherwise."""
    text = name.strip().lower()
    encoder, sep, decoder = text.rpartition("-")
    encoder = re.sub(r"[-/_]", "", encoder)
    if not sep or encoder not in ENCODERS or decoder not in DECODERS:
        raise ValueError(f"unknown TrancoNet model {name!r}: one of {', '.join(ALL_MODELS)}")
    return ModelSpec(encoder, decoder)


def head_config(spec: ModelSpec, **options: float | int) -> HeadConfig:
    """The head of a model: width of its encoder's embeddings, 8 heads of 64 at 512 (4 below),
    a feed-forward width of 4 x dim (2048 at 512), and `options` (dropout, tau, max_steps)."""
    dim = encoder_spec(spec.encoder).embed_dim
    heads = 8 if dim >= 512 else 4
    return HeadConfig(dim=dim, decoder=spec.decoder, heads=heads, feedforward=4 * dim, **options)


def build_model(
    name: str,
    with_encoder: bool = True,
    clip_weights: str | None = None,
    quick_gelu: bool = True,
    **options: float | int,
) -> TrancoNet:
    """TrancoNet `name`: its head, and its image encoder unless `with_encoder` is False (a frozen
    encoder's cached features feed it); the encoder gets the weights of `clip_weights`."""
    spec = parse_model_name(name)
    head = TrancoHead(head_config(spec, **options))
    encoder = build_image_encoder(spec.encoder, clip_weights, quick_gelu) if with_encoder else None
    return TrancoNet(head, encoder)
