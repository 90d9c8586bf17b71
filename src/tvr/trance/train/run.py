"""`train(config) -> run_dir`: one training run, from config to predictions, resumable.

A run directory holds `config.json`, `metrics.csv` (one row per epoch), `tensorboard/`,
`checkpoints/best.ckpt` (best validation Acc) and `checkpoints/last.ckpt`, and, once training
ends, `predictions.jsonl` of the best checkpoint in the evaluation format. Calling `train` again
on a run directory that has a `last.ckpt` resumes from it (a killed run goes on where its last
finished epoch left it). A run directory belongs to one run: a config that differs from its
config.json in more than `RESUMABLE_FIELDS` (another model, data, seed...) is refused before
anything is written, and so is a bad data source or init checkpoint. GPUs and mixed precision
are used when present, several GPUs with DDP.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from lightning.pytorch.callbacks import Callback

from tvr.training.runs import RunOptions, fit_run
from tvr.training.runs import check_run_dir as shared_check_run_dir
from tvr.trance.data.torch_data import check_data_root
from tvr.trance.train.checkpoint import (
    check_architecture,
    checkpoint_config,
    model_state,
    read_checkpoint,
)
from tvr.trance.train.config import TrainConfig
from tvr.trance.train.module import TranceData, TranceModule
from tvr.trance.train.predictions import write_predictions

log = logging.getLogger(__name__)


def check_run_dir(config: TrainConfig) -> None:
    """ValueError if `config.run_dir` holds another run (`tvr.training.runs.check_run_dir`)."""
    shared_check_run_dir(config.run_dir, config, TrainConfig.load)


def train(
    config: TrainConfig,
    callbacks: Sequence[Callback] = (),
    progress_bar: bool = False,
    epoch_lines: bool = True,
) -> Path:
    """Train (or fine-tune with REINFORCE) as configured; returns the run directory. Prints one
    line per epoch (`tvr.trance.train.progress`) unless `epoch_lines` is False, and Lightning's
    progress bar with `progress_bar`."""
    run_dir = config.run_dir
    ckpt_dir = run_dir / "checkpoints"
    last = ckpt_dir / "last.ckpt"
    # everything that can be wrong is checked before the run folder is written; the data
    # first, so that a typo in --data-root is not reported as another run's folder
    if config.data == "trance" and config.data_root:
        check_data_root(config.data_root, config.setting)
    check_run_dir(config)
    data = TranceData(config)
    data.setup()
    resume_from = str(last) if config.resume and last.exists() else None
    init_state = None
    if resume_from is None and config.init_checkpoint:
        ckpt = read_checkpoint(config.init_checkpoint)
        saved = checkpoint_config(ckpt, config.init_checkpoint)
        check_architecture(config, saved, config.init_checkpoint)
        init_state = model_state(ckpt)

    options = RunOptions.from_config(
        config,
        monitor="val/acc",
        mode="max",
    )

    def make_module() -> TranceModule:
        module = TranceModule(config.to_dict())
        if init_state is not None:
            module.model.load_state_dict(init_state)
        return module

    result = fit_run(make_module, data, options, config.save, callbacks, progress_bar, epoch_lines)
    trainer = result.trainer
    if trainer.is_global_zero:
        write_predictions(str(result.best), run_dir / "predictions.jsonl")
    return run_dir
