"""TrancoNet: CLIP image encoders through open_clip, the state encoder, the T and G decoders."""

from tvr.tranco.models.registry import ALL_MODELS, PAPER_MODELS, build_model, parse_model_name

__all__ = ["ALL_MODELS", "PAPER_MODELS", "build_model", "parse_model_name"]
