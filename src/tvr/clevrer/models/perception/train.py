"""`train_detector(config) -> run_dir`: one frame-parser run on `tvr.training.fit_run`, then its
best checkpoint scored on the validation frames.

The run folder holds config.json, metrics.csv (per epoch: the losses, val mAP of boxes and masks,
precision/recall and attribute accuracy at the score threshold), checkpoints/best.ckpt (best val
mask AP) and last.ckpt, and detector_eval.json (the best checkpoint's validation scores). A rerun
of the same config resumes from last.ckpt; another config in the same folder is refused.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch
from lightning.pytorch.callbacks import Callback

from tvr.clevrer.models.perception.config import DetectorConfig
from tvr.clevrer.models.perception.evaluate import evaluate_parser
from tvr.clevrer.models.perception.frame_parser import FrameParser
from tvr.clevrer.models.perception.module import FrameData, FrameParserModule
from tvr.core.jsonl import write_json
from tvr.training.runs import fit_config, load_run_module, open_run

EVAL_FILE = "detector_eval.json"


def load_parser(checkpoint: str | Path, map_location: str = "cpu") -> FrameParser:
    """The frame parser of a checkpoint (a run folder: its best.ckpt), in eval mode."""
    return load_run_module(FrameParserModule, checkpoint, "frame parser", map_location).model


def train_detector(
    config: DetectorConfig,
    callbacks: Sequence[Callback] = (),
    progress_bar: bool = False,
    epoch_lines: bool = True,
) -> Path:
    """Train (or resume) the frame parser of `config`; returns its run folder."""
    run_dir = open_run(config)
    if config.threads:
        torch.set_num_threads(config.threads)
    data = FrameData(config)
    data.setup()
    result = fit_config(
        config, lambda: FrameParserModule(config.to_dict()), data, callbacks, progress_bar,
        epoch_lines, batch_size=lambda batch: len(batch.samples),
        monitor="val/segm_ap", mode="max", monitor_label="val mask AP", gradient_clip_val=5.0,
    )  # fmt: skip
    if result.trainer.is_global_zero:
        parser = load_parser(result.best)
        assert data.val_samples is not None
        scores = evaluate_parser(parser, data.val_samples, batch_size=config.batch_size)
        write_json(run_dir / EVAL_FILE, {"checkpoint": result.best.name, **scores})
    return run_dir
