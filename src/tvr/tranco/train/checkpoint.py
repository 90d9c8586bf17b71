"""Checkpoints of `tvr tranco train` read back (the run's config, the model) with one-line errors.

A checkpoint holds the run's `TrancoTrainConfig` (Lightning's `hyper_parameters["config"]`) and,
for a frozen encoder, the sha256 of its weights (`encoder_sha256`): the head's weights are in the
checkpoint, the frozen encoder is made again from the config (its CLIP weights file, or its seeded
random initialisation) and must have the same digest. An encoder trained in the loop is in the
checkpoint itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError
from tvr.training.checkpoints import model_state, read_run_checkpoint
from tvr.training.clip_towers import weights_digest
from tvr.tranco.models.registry import parse_model_name
from tvr.tranco.models.trancenet import TrancoNet
from tvr.tranco.train.config import TrancoTrainConfig
from tvr.tranco.train.features import EncoderRecipe
from tvr.tranco.train.module import build_config_model


@dataclass
class TrainedModel:
    """A trained TrancoNet, the config it trained with, and its frozen encoder's recipe."""

    model: TrancoNet
    config: TrancoTrainConfig
    recipe: EncoderRecipe | None  # None: the encoder is in `model`
    encoder_sha256: str | None


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """The checkpoint dict of a file `tvr tranco train` wrote; UserError naming it otherwise."""
    return read_run_checkpoint(path, "tvr tranco train")


def frozen_recipe(config: TrancoTrainConfig) -> EncoderRecipe:
    """The frozen encoder of a config, as the feature cache makes it."""
    encoder = parse_model_name(config.model).encoder
    return EncoderRecipe(encoder, config.clip_weights, config.quick_gelu, config.encoder_seed)


def load_trained(path: str | Path) -> TrainedModel:
    """The model of a checkpoint, on the CPU, in eval mode; for a frozen encoder, its recipe
    checked against the digest the run trained with."""
    ckpt = read_checkpoint(path)
    try:
        config = TrancoTrainConfig.from_dict(ckpt["hyper_parameters"]["config"])
    except (TypeError, ValueError) as err:
        raise UserError(f"{path}: its run config is not valid here: {err}") from None
    model = build_config_model(config, with_weights=False)
    model.load_state_dict(model_state(ckpt))
    model.eval()
    digest = ckpt["hyper_parameters"].get("encoder_sha256")
    recipe = None
    if config.frozen:
        recipe = frozen_recipe(config)
        have = weights_digest(recipe.build())
        if digest is not None and have != digest:
            raise UserError(
                f"{path}: its frozen encoder had weights sha256 {digest[:16]}..., "
                f"{recipe.weights or 'the seeded random initialisation'} now gives "
                f"{have[:16]}...: the weights file changed since training"
            )
    return TrainedModel(model, config, recipe, digest)
