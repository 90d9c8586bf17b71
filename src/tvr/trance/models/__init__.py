"""TranceNet models (needs the `train` extra: torch, torchvision): encoders, decoders, heads.

`build_model(name, setting)` is the way in; see `tvr.trance.models.registry` for the names.
"""

from tvr.trance.models.decoders import DECODER_FORMS
from tvr.trance.models.encoders import DUDA_FORMS
from tvr.trance.models.registry import (
    ALL_MODELS,
    LEGACY_FORMS,
    PAPER_MODELS,
    build_model,
    count_parameters,
    parse_model_name,
)
from tvr.trance.models.trancenet import IGNORE, OBJ_END, VALUE_END, BasicNet, Decoded, TranceNet
from tvr.trance.world.vocab import SETTINGS

__all__ = [
    "ALL_MODELS",
    "DECODER_FORMS",
    "DUDA_FORMS",
    "IGNORE",
    "LEGACY_FORMS",
    "OBJ_END",
    "PAPER_MODELS",
    "SETTINGS",
    "VALUE_END",
    "BasicNet",
    "Decoded",
    "TranceNet",
    "build_model",
    "count_parameters",
    "parse_model_name",
]
