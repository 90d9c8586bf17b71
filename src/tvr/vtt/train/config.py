"""The configuration of a VTT training run: one typed dataclass, saved as config.json in the run,
and the functions that make one from a model's name, a size preset, ablations and options.

Defaults are the paper's (appendix E.1 and the released configuration): AdamW, lr 1e-4 reached
by a linear warm-up over 2,000 steps and then decreasing linearly to 0, weight decay 1e-3, batch
32, 50 epochs, the best checkpoint by validation CIDEr-D of greedy decodes.

config.json holds the run's options at the top and the model's (`ModelConfig`) as one table:

    {"data": "...", "model": {"model": "ttnet", "encoder": "ViT-L-14", "dim": 512, ...},
     "epochs": 50, "batch_size": 32, ...}
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from tvr.training.run_config import RESUMABLE_RUN_FIELDS, RunConfig
from tvr.vtt.models.config import PRESETS, ModelConfig, part_defaults
from tvr.vtt.models.decoding import STRATEGIES

#: TTNet's parts an ablation switches off
PARTS = ("diff", "mtm", "aux")
#: the ModelConfig fields a user may set over a size preset (the others follow the model)
MODEL_OPTIONS = ("encoder", "encoder_weights", "encoder_seed", "dim", "heads", "vocab",
                 "aux_weights")  # fmt: skip


@dataclass
class VttTrainConfig(RunConfig):
    """A training run of a VTT model on a folder in the release's layout (meta/vtt.jsonl,
    states/): `model`, the architecture (`tvr.vtt.models.config.ModelConfig`), and the run's
    optimisation and outputs; the other run options (seed, devices, output_dir, ...) are
    `RunConfig`'s."""

    RESUMABLE_FIELDS: ClassVar[frozenset[str]] = RESUMABLE_RUN_FIELDS | {
        "feature_cache", "predict_split", "decode", "beam_size", "encode_batch_size",
    }  # fmt: skip
    PATH_FIELDS: ClassVar[tuple[str, ...]] = ("data", "model.encoder_weights", "feature_cache")

    data: str = "."
    model: ModelConfig = dataclasses.field(default_factory=ModelConfig)
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
        if isinstance(self.model, Mapping):  # a table of config.json (from_dict converts it)
            self.model = ModelConfig(**self.model)
        if not isinstance(self.model, ModelConfig):
            raise ValueError(f"model is a ModelConfig (a table of its fields), not {self.model!r}")
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

    def default_run_name(self) -> str:
        """The model's name, with the ablated parts of a TTNet (`ttnet-no-diff-no-mtm`)."""
        if self.model.model != "ttnet":
            return self.model.model
        off = [part for part in PARTS if not getattr(self.model, part)]
        return "-".join(["ttnet", *(f"no-{p}" for p in off)])

    @property
    def cache_dir(self) -> Path:
        return (
            Path(self.feature_cache) if self.feature_cache else Path(self.output_dir) / "features"
        )


def model_config(
    model: str = "ttnet",
    size: str = "paper",
    ablated: Iterable[str] = (),
    train_encoder: bool = False,
    cascade: bool = True,
    **given: Any,
) -> ModelConfig:
    """The ModelConfig of `model` at the size preset `size` (a name of PRESETS): the model's
    parts (all on for ttnet, off otherwise), `ablated` (TTNet's parts switched off), the encoder
    trained or frozen, GLACNet's cascading, then `given` (MODEL_OPTIONS set over the preset).
    ValueError for an ablation of another model than ttnet, cascade off for another model than
    glacnet, or a bad value."""
    ablated = list(ablated)
    unknown = [p for p in ablated if p not in PARTS]
    if unknown:
        raise ValueError(f"{unknown[0]!r} is not a part of TTNet: one of {', '.join(PARTS)}")
    if ablated and model != "ttnet":
        raise ValueError(f"--no-{ablated[0]} is an ablation of ttnet; {model} has no Diff, MTM "
                         "or Aux")  # fmt: skip
    if not cascade and model != "glacnet":
        raise ValueError("--no-cascade is a GLACNet option")
    if size not in PRESETS:
        raise ValueError(f"unknown model size {size!r}: one of {', '.join(PRESETS)}")
    bad = sorted(set(given) - set(MODEL_OPTIONS))
    if bad:
        raise ValueError(f"not a model option: {bad[0]} (one of {', '.join(MODEL_OPTIONS)})")
    values: dict[str, Any] = {**PRESETS[size], **part_defaults(model), "model": model}
    values.update(dict.fromkeys(ablated, False))
    values.update(freeze_encoder=not train_encoder, cascade=cascade, **given)
    return ModelConfig(**values)


def train_config(data: str | Path, model: ModelConfig, **options: Any) -> VttTrainConfig:
    """The run of `model` on the data folder `data`; `options` are VttTrainConfig's other fields
    (those not given keep their defaults). ValueError for a bad value."""
    return VttTrainConfig(data=str(data), model=model, **options)
