"""Predictions of a trained VTT checkpoint: descriptions of one split's samples, in the prediction
format `tvr vtt evaluate` reads ({"id", "transformations": [N strings]})."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

from tvr.core.errors import UserError
from tvr.training.checkpoints import load_module as load_checkpoint_module
from tvr.vtt.data.predictions import write_predictions
from tvr.vtt.models import tokenizer
from tvr.vtt.models.decoding import DecodeOptions
from tvr.vtt.models.encoder import warn_if_random
from tvr.vtt.train.config import VttTrainConfig
from tvr.vtt.train.data import LabelSpace, VttSamples, collate
from tvr.vtt.train.module import VttModule


def load_module(checkpoint: str | Path, device: str | torch.device = "cpu") -> VttModule:
    """The module of a checkpoint written by `tvr vtt train`, in eval mode."""
    return load_checkpoint_module(VttModule, checkpoint, "a checkpoint of `tvr vtt train`", device)


@torch.no_grad()
def predict(
    module: VttModule,
    data: str | Path,
    split: str,
    options: DecodeOptions,
    feature_cache: str | Path | None = None,
    batch_size: int = 32,
    device: str | torch.device = "cpu",
    warn_random: bool = True,
) -> dict[str, list[str]]:
    """id -> the N descriptions decoded for each `split` sample of the folder `data`; a frozen
    encoder without a weights file gets one warning line on stderr (unless not `warn_random`)."""
    cfg: VttTrainConfig = module.config
    model_cfg = cfg.model
    if warn_random and model_cfg.freeze_encoder:  # a trained encoder is in the checkpoint
        warn_if_random(model_cfg.encoder_spec(), option="`tvr vtt train --encoder-weights`")
    cache = Path(feature_cache) if feature_cache is not None else cfg.cache_dir
    samples = VttSamples(data, model_cfg, [split], cache, LabelSpace.from_dict(module.labels.to_dict()),
                         cfg.encode_batch_size, device)  # fmt: skip
    if samples.encoder_dim != module.model.encoder_dim:
        raise UserError(f"the encoder gives {samples.encoder_dim}-d features, the checkpoint reads "
                        f"{module.model.encoder_dim}")  # fmt: skip
    dataset = samples.sets[split]
    if len(dataset) == 0:
        raise UserError(f"{samples.records_path}: no {split} samples")
    out: dict[str, list[str]] = {}
    for start in range(0, len(dataset), batch_size):
        batch = collate([dataset[i] for i in range(start, min(start + batch_size, len(dataset)))])
        batch = _to(batch, device)
        decoded = module.model.generate(batch, _batch_options(options, start))
        for sample_id, ids in zip(batch["id"], decoded, strict=True):
            out[sample_id] = [tokenizer.decode(x) for x in ids]
    return out


def _batch_options(options: DecodeOptions, start: int) -> DecodeOptions:
    """Sampling draws another seeded stream per batch, so a batch's draws do not depend on the
    batches before it."""
    if options.strategy != "sample":
        return options
    from dataclasses import replace

    return replace(options, seed=options.seed * 1_000_003 + start)


def _to(batch: dict[str, Any], device: str | torch.device) -> dict[str, Any]:
    return {k: v.to(device) if isinstance(v, torch.Tensor) else v for k, v in batch.items()}


def write_split_predictions(
    checkpoint: str | Path,
    data: str | Path,
    split: str,
    out: str | Path,
    options: DecodeOptions,
    feature_cache: str | Path | None = None,
    device: str | torch.device = "cpu",
) -> int:
    """Predict `split` of `data` with `checkpoint` into the file `out`; the number of samples."""
    module = load_module(checkpoint, device)
    found = predict(module, data, split, options, feature_cache, device=device)
    return write_predictions(out, found)
