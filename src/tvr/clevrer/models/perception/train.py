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
from tvr.core.errors import UserError
from tvr.core.jsonl import write_json
from tvr.training.runs import RunOptions, check_run_dir, fit_run

EVAL_FILE = "detector_eval.json"


def load_parser(checkpoint: str | Path, map_location: str = "cpu") -> FrameParser:
    """The frame parser of a checkpoint (a run folder: its best.ckpt), in eval mode."""
    path = Path(checkpoint)
    if path.is_dir():
        path = path / "checkpoints" / "best.ckpt"
    if not path.is_file():
        raise UserError(f"{path}: no such checkpoint")
    module = FrameParserModule.load_from_checkpoint(str(path), map_location=map_location)
    return module.model.eval()


def train_detector(
    config: DetectorConfig,
    callbacks: Sequence[Callback] = (),
    progress_bar: bool = False,
    epoch_lines: bool = True,
) -> Path:
    """Train (or resume) the frame parser of `config`; returns its run folder."""
    config.validate()
    try:
        check_run_dir(config.run_dir, config, DetectorConfig.load)
    except ValueError as err:
        raise UserError(str(err)) from None
    if config.threads:
        torch.set_num_threads(config.threads)
    data = FrameData(config)
    data.setup()
    options = RunOptions.from_config(
        config,
        monitor="val/segm_ap",
        mode="max",
        monitor_label="val mask AP",
        gradient_clip_val=5.0,
    )
    result = fit_run(
        lambda: FrameParserModule(config.to_dict()), data, options, config.save, callbacks,
        progress_bar, epoch_lines, batch_size=lambda batch: len(batch.samples),
    )  # fmt: skip
    if result.trainer.is_global_zero:
        parser = load_parser(result.best)
        assert data.val_samples is not None
        scores = evaluate_parser(parser, data.val_samples, batch_size=config.batch_size)
        write_json(config.run_dir / EVAL_FILE, {"checkpoint": result.best.name, **scores})
    return config.run_dir
