"""`train(config) -> run_dir`: one VTT training run on the shared run engine, then predictions.

The run folder (tvr.training.runs) holds config.json, metrics.csv, checkpoints/best.ckpt (best
val CIDEr-D) and last.ckpt; calling `train` again resumes from last.ckpt, and a folder of another
run is refused before anything is written. When training ends, the best checkpoint's decodes of
`predict_split` go to predictions.jsonl (and the decoding used to predictions.config.json).
"""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Sequence
from pathlib import Path

import torch
from lightning.pytorch.callbacks import Callback

from tvr.core.errors import UserError
from tvr.core.jsonl import write_json
from tvr.training.runs import RunOptions, check_run_dir, fit_run
from tvr.vtt.data.predictions import write_predictions
from tvr.vtt.models.decoding import DecodeOptions
from tvr.vtt.models.encoder import warn_if_random
from tvr.vtt.train.config import VttTrainConfig
from tvr.vtt.train.data import VttDataModule, VttSamples
from tvr.vtt.train.module import VttModule
from tvr.vtt.train.predict import load_module, predict


def train(
    config: VttTrainConfig,
    callbacks: Sequence[Callback] = (),
    progress_bar: bool = False,
    epoch_lines: bool = True,
) -> Path:
    """Train as configured; returns the run folder."""
    run_dir = config.run_dir
    try:
        check_run_dir(run_dir, config, VttTrainConfig.load)
    except ValueError as err:
        raise UserError(str(err)) from None
    model_config = config.model
    import open_clip  # noqa: F401  (a missing clip extra is said before anything else)

    warn_if_random(model_config.encoder_spec(), trained=not model_config.freeze_encoder)
    device = "cuda" if config.accelerator != "cpu" and torch.cuda.is_available() else "cpu"
    splits = ["train", "val"]
    samples = VttSamples(config.data, config.model, splits, config.cache_dir,
                         encode_batch_size=config.encode_batch_size, device=device)  # fmt: skip
    for split in splits:
        if len(samples.sets[split]) == 0:
            raise UserError(f"{samples.records_path}: no {split} samples (training needs train "
                            "and val)")  # fmt: skip
    if shutil.which("java") is None:
        raise UserError("training scores val CIDEr-D through coco-caption's PTB tokenizer, which "
                        "needs Java on the PATH (java not found)")  # fmt: skip
    data = VttDataModule(samples, config.batch_size, config.num_workers)
    options = RunOptions.from_config(
        config, monitor="val/cider", mode="max", monitor_label="val CIDEr", benchmark=False
    )

    def make_module() -> VttModule:
        return VttModule(config.to_dict(), samples.labels.to_dict(), samples.encoder_dim)

    try:
        result = fit_run(make_module, data, options, config.save, callbacks, progress_bar,
                         epoch_lines)  # fmt: skip
    except ValueError as err:
        raise UserError(str(err)) from None
    if result.trainer.is_global_zero and not samples.split_counts[config.predict_split]:
        print(f"{samples.records_path}: no {config.predict_split} samples, so no predictions.jsonl")
    elif result.trainer.is_global_zero:
        decode = DecodeOptions(config.decode, beam_size=config.beam_size)
        module = load_module(result.best, device)
        found = predict(module, config.data, config.predict_split, decode, config.cache_dir,
                        config.batch_size, device, warn_random=False)  # fmt: skip
        write_predictions(run_dir / "predictions.jsonl", found)
        write_json(run_dir / "predictions.config.json",
                   {"checkpoint": str(result.best), "split": config.predict_split,
                    "decode": dataclasses.asdict(decode)})  # fmt: skip
    return run_dir
