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

import csv
import importlib.util
import logging
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import lightning as L
import torch
from lightning.fabric.utilities.exceptions import MisconfigurationException
from lightning.pytorch.callbacks import Callback, ModelCheckpoint

from tvr.trance.train.checkpoint import (
    check_architecture,
    checkpoint_config,
    model_state,
    read_checkpoint,
)
from tvr.trance.train.config import TrainConfig
from tvr.trance.train.module import TranceData, TranceModule
from tvr.trance.train.predictions import write_predictions
from tvr.trance.train.progress import EpochLine

log = logging.getLogger(__name__)


def resolve_precision(config: TrainConfig) -> str:
    """Lightning precision: the configured one, or for "auto" mixed precision on a GPU."""
    if config.precision != "auto":
        return config.precision
    if config.accelerator != "cpu" and torch.cuda.is_available():
        return "bf16-mixed" if torch.cuda.is_bf16_supported() else "16-mixed"
    return "32-true"


class EpochCSV(Callback):
    """Writes one row per finished epoch (the epoch's logged metrics, the lr and the number of
    training batches) to a CSV file. Rows of epochs that are trained again after a resume replace
    the old ones."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lr: float | None = None

    def on_train_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._lr = trainer.optimizers[0].param_groups[0]["lr"]  # before the epoch's scheduler step

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if not trainer.is_global_zero or trainer.sanity_checking:
            return
        row: dict[str, Any] = {"epoch": trainer.current_epoch, "step": trainer.global_step}
        row["lr"] = self._lr
        # fewer than the loader's batches: the epoch was cut short (max_minutes)
        row["batches"] = trainer.fit_loop.epoch_loop.batch_progress.current.completed
        for k, v in sorted(trainer.callback_metrics.items()):
            if k.endswith("_step"):
                continue
            row[k.removesuffix("_epoch")] = float(v)
        rows = []
        if self.path.exists():
            with self.path.open(newline="") as f:
                rows = [r for r in csv.DictReader(f) if int(r["epoch"]) < row["epoch"]]
        rows.append(row)
        keys: list[str] = []
        for r in rows:
            keys += [k for k in r if k not in keys]
        with self.path.open("w", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=keys)
            writer.writeheader()
            writer.writerows(rows)


def check_run_dir(config: TrainConfig) -> None:
    """ValueError if `config.run_dir` holds another run: a config.json that is no training
    config, or one that differs from `config` outside RESUMABLE_FIELDS, or checkpoints without
    a config.json. Nothing of such a folder is ever overwritten, resumed or appended to."""
    run_dir = config.run_dir
    path = run_dir / "config.json"
    if not path.exists():
        if any((run_dir / "checkpoints").glob("*.ckpt")):
            raise ValueError(
                f"{run_dir} holds checkpoints but no config.json: not a run this config can "
                "resume; give another --run-name (or remove that folder)"
            )
        return
    try:
        saved = TrainConfig.load(path)
    except (OSError, TypeError, ValueError) as err:
        raise ValueError(
            f"{path} is not the config of a training run ({err}): give another --run-name or "
            "--output-dir"
        ) from None
    differ = saved.differences(config)
    if differ:
        raise ValueError(
            f"{run_dir} holds another run (its config.json differs in {'; '.join(differ)}): "
            "give another --run-name (or remove that folder to start it over)"
        )


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
    # everything that can be wrong is checked before the run folder is written
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

    loggers: list[Any] = []
    if importlib.util.find_spec("tensorboard") is not None:
        from lightning.pytorch.loggers import TensorBoardLogger

        loggers.append(TensorBoardLogger(save_dir=str(run_dir), name="tensorboard", version=""))
    else:
        log.warning("tensorboard is not installed: no TensorBoard logs for %s", run_dir)

    checkpoint = ModelCheckpoint(
        dirpath=str(ckpt_dir),
        filename="best",
        monitor="val/acc",
        mode="max",
        save_top_k=1,
        auto_insert_metric_name=False,
        enable_version_counter=False,
    )
    # A callback of its own for last.ckpt: Lightning's `save_last` rewrites last.ckpt only when a
    # top-k checkpoint is saved, i.e. when val/acc improves, so a killed run would go back to its
    # best epoch instead of its last one.
    last_checkpoint = ModelCheckpoint(
        dirpath=str(ckpt_dir),
        filename="last",
        monitor=None,
        save_top_k=1,
        auto_insert_metric_name=False,
        enable_version_counter=False,
    )
    extra: list[Callback] = [EpochLine(config.epochs)] if epoch_lines else []
    try:
        trainer = make_trainer(
            config, loggers, [checkpoint, last_checkpoint, *extra, *callbacks], progress_bar
        )
    except MisconfigurationException as err:  # an accelerator or devices this machine lacks
        raise ValueError(
            f"accelerator {config.accelerator}, devices {config.devices}: {err}"
        ) from None

    ckpt_dir.mkdir(parents=True, exist_ok=True)
    config.save(run_dir / "config.json")
    L.seed_everything(config.seed, workers=True, verbose=False)
    module = TranceModule(config.to_dict())
    if init_state is not None:
        module.model.load_state_dict(init_state)
    trainer.fit(module, datamodule=data, ckpt_path=resume_from)
    if not checkpoint.best_model_path and not last.exists():
        # stopped (max_minutes) before the first validation: predict the weights as they are
        log.warning(
            "%s: no epoch finished before the time limit; predicting the current weights", run_dir
        )
        trainer.save_checkpoint(str(last))
    if trainer.is_global_zero:
        best = checkpoint.best_model_path or str(last)
        write_predictions(best, run_dir / "predictions.jsonl")
    return run_dir


def make_trainer(
    config: TrainConfig, loggers: list[Any], callbacks: list[Callback], progress_bar: bool
) -> L.Trainer:
    """The Lightning Trainer of a run (metrics.csv, checkpoints and logging as configured)."""
    run_dir = config.run_dir
    return L.Trainer(
        max_epochs=config.epochs,
        max_time=timedelta(minutes=config.max_minutes) if config.max_minutes else None,
        accelerator=config.accelerator,
        devices=config.devices,
        precision=resolve_precision(config),
        logger=loggers or False,
        callbacks=[EpochCSV(run_dir / "metrics.csv"), *callbacks],
        default_root_dir=str(run_dir),
        log_every_n_steps=config.log_every_n_steps,
        enable_progress_bar=progress_bar,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        benchmark=True,  # fixed image size: let cuDNN pick its fastest kernels
    )
