"""`train_detector(config) -> run_dir`: one frame-parser run on `tvr.training.fit_run`, then its
best checkpoint scored on the validation frames.

The run folder holds config.json, metrics.csv (per epoch: the losses, val mAP of boxes and masks,
precision/recall and attribute accuracy at the score threshold), checkpoints/best.ckpt (best val
mask AP) and last.ckpt, and detector_eval.json (the best checkpoint's validation scores). A rerun
of the same config resumes from last.ckpt; another config in the same folder is refused.
`score_detector_split` scores a checkpoint on another split's frames (eval/SPLIT/detector_eval.json).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch
from lightning.pytorch.callbacks import Callback

from tvr.clevrer.models.perception.config import DetectorConfig
from tvr.clevrer.models.perception.evaluate import evaluate_parser
from tvr.clevrer.models.perception.frame_parser import FrameParser
from tvr.clevrer.models.perception.frames import load_frames
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


def score_detector_split(
    run_dir: str | Path,
    checkpoint: str | Path,
    data_root: str | Path,
    split: str,
    videos: int | None = None,
    name: str | None = None,
) -> tuple[Path, dict[str, float]]:
    """Score a run's checkpoint on `split`'s frames (the run's frames per validation video and
    seed, the first `videos` videos or all) as on validation; writes and returns
    RUN/eval/NAME/detector_eval.json (NAME defaults to `split`) and its scores."""
    config = DetectorConfig.load(Path(run_dir) / "config.json")
    samples = load_frames(
        data_root, split, videos, config.val_frames_per_video, config.input_size,
        config.crop_size, config.seed, keep_full=True,
    )  # fmt: skip
    scores = evaluate_parser(load_parser(checkpoint), samples, batch_size=config.batch_size)
    path = Path(run_dir) / "eval" / (name or split) / EVAL_FILE
    write_json(path, {"checkpoint": Path(checkpoint).name, "split": split, **scores})
    return path, scores
