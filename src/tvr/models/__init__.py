"""TranceNet models (needs the `train` extra: torch, torchvision): encoders, decoders, heads.

`build_model(name, setting)` is the way in; see `tvr.models.registry` for the names.
"""

from tvr.models.registry import (
    ALL_MODELS,
    PAPER_MODELS,
    SETTINGS,
    build_model,
    count_parameters,
    parse_model_name,
)
from tvr.models.trancenet import IGNORE, OBJ_END, VALUE_END, BasicNet, Decoded, TranceNet

__all__ = [
    "ALL_MODELS",
    "IGNORE",
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
