"""The configuration of a VTT training run: one typed dataclass, saved as config.json in the run.

Defaults are the paper's (appendix E.1 and the released configuration): AdamW, lr 1e-4 reached
by a linear warm-up over 2,000 steps and then decreasing linearly to 0, weight decay 1e-3, batch
32, 50 epochs, the best checkpoint by validation CIDEr-D of greedy decodes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from tvr.training.run_config import RESUMABLE_RUN_FIELDS, RunConfig
from tvr.vtt.models.config import ModelConfig
from tvr.vtt.models.decoding import STRATEGIES

_MODEL_FIELDS = tuple(f.name for f in dataclasses.fields(ModelConfig))


@dataclass
class VttTrainConfig(RunConfig):
    """A training run of a VTT model on a folder in the release's layout (meta/vtt.jsonl,
    states/). The model's fields are those of `tvr.vtt.models.config.ModelConfig`; the other run
    options (seed, devices, output_dir, ...) are `RunConfig`'s."""

    RESUMABLE_FIELDS: ClassVar[frozenset[str]] = RESUMABLE_RUN_FIELDS | {
        "feature_cache", "predict_split", "decode", "beam_size", "encode_batch_size",
    }  # fmt: skip
    PATH_FIELDS: ClassVar[tuple[str, ...]] = ("data", "encoder_weights", "feature_cache")

    data: str = "."
    # the model (tvr.vtt.models.config.ModelConfig)
    model: str = "ttnet"
    encoder: str = "ViT-L-14"
    encoder_weights: str | None = None
    encoder_seed: int = 0
    freeze_encoder: bool = True
    dim: int = 512
    heads: int = 8
    context_layers: int = 2
    decoder_layers: int = 2
    dropout: float = 0.1
    max_tokens: int = 24
    vocab: str = "clip"
    diff: bool = True
    mtm: bool = True
    aux: bool = True
    mtm_ratio: float = 0.15
    mtm_prob: float = 0.5
    aux_weights: str = "paper"
    lstm_layers: int = 2
    lstm_dropout: float = 0.5
    embed_dropout: float = 0.1
    cascade: bool = True
    # the optimisation
    epochs: int = 50
    batch_size: int = 32
    lr: float = 1e-4
    warmup_steps: int = 2000
    weight_decay: float = 1e-3
    # where and how it runs (one device by default; the other run options are RunConfig's)
    devices: int | str = 1
    feature_cache: str | None = None  # default: {output_dir}/features
    encode_batch_size: int = 32
    # the predictions written when training ends (of the best checkpoint)
    predict_split: str = "test"
    decode: str = "greedy"
    beam_size: int = 3

    def __post_init__(self) -> None:
        self.model_config()  # ValueError on a bad model
        for name in ("epochs", "batch_size", "encode_batch_size", "log_every_n_steps",
                     "beam_size"):  # fmt: skip
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be 1 or more, not {getattr(self, name)}")
        if self.warmup_steps < 0 or self.lr <= 0 or self.weight_decay < 0:
            raise ValueError("warmup_steps >= 0, lr > 0 and weight_decay >= 0")
        if self.predict_split not in ("train", "val", "test"):
            raise ValueError(f"predict_split is train, val or test, not {self.predict_split!r}")
        if self.decode not in STRATEGIES:
            raise ValueError(f"decode is one of {', '.join(STRATEGIES)}, not {self.decode!r}")

    def model_config(self) -> ModelConfig:
        return ModelConfig(**{name: getattr(self, name) for name in _MODEL_FIELDS})

    def default_run_name(self) -> str:
        """The model's name, with the ablated parts of a TTNet (`ttnet-no-diff-no-mtm`)."""
        if self.model != "ttnet":
            return self.model
        off = [part for part in ("diff", "mtm", "aux") if not getattr(self, part)]
        return "-".join(["ttnet", *(f"no-{p}" for p in off)])

    @property
    def cache_dir(self) -> Path:
        return (
            Path(self.feature_cache) if self.feature_cache else Path(self.output_dir) / "features"
        )
