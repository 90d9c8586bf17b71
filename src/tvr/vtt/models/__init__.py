"""The VTT models: TTNet (and TTNet_Base), GLACNet, their CLIP encoder, tokenizer and decoding."""

from __future__ import annotations

from collections.abc import Sequence

from tvr.vtt.models.common import VttModel
from tvr.vtt.models.config import ModelConfig


def build_model(
    config: ModelConfig,
    encoder_dim: int,
    n_topics: int,
    n_categories: int,
    vocab_ids: Sequence[int] | None = None,
) -> VttModel:
    """The model `config.model` names, reading `encoder_dim` features (the CLIP encoder's width),
    predicting `n_topics` topics and `n_categories` categories with Aux, and knowing the CLIP
    ids `vocab_ids` with `config.vocab == "train"`."""
    from tvr.vtt.models.glacnet import GLACNet
    from tvr.vtt.models.ttnet import TTNet

    builders = {"ttnet": TTNet, "ttnet-base": TTNet, "glacnet": GLACNet}
    return builders[config.model](config, encoder_dim, n_topics, n_categories, vocab_ids)
