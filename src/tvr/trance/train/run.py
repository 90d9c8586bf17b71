"""`train(config) -> run_dir`: one training run, from config to predictions, resumable.

A run directory holds `config.json`, `metrics.csv` (one row per epoch), `tensorboard/`,
`checkpoints/best.ckpt` (best validation Acc) and `checkpoints/last.ckpt`, and, once training
ends, `predictions.jsonl` of the best checkpoint in the evaluation format. Calling `train` again
on a run directory that has a `last.ckpt` resumes from it (a killed run goes on where its last
finished epoch left it). GPUs and mixed precision are used when present, several GPUs with DDP.
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
from lightning.pytorch.callbacks import Callback, ModelCheckpoint

from tvr.trance.train.config import TrainConfig
from tvr.trance.train.module import TranceData, TranceModule
from tvr.trance.train.predictions import write_predictions

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


def train(config: TrainConfig, callbacks: Sequence[Callback] = ()) -> Path:
    """Train (or fine-tune with REINFORCE) as configured; returns the run directory."""
    run_dir = config.run_dir
    ckpt_dir = run_dir / "checkpoints"
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    config.save(run_dir / "config.json")
    L.seed_everything(config.seed, workers=True, verbose=False)

    module = TranceModule(config.to_dict())
    last = ckpt_dir / "last.ckpt"
    resume_from = str(last) if config.resume and last.exists() else None
    if resume_from is None and config.init_checkpoint:
        ckpt = torch.load(config.init_checkpoint, map_location="cpu", weights_only=False)
        state = {k[6:]: v for k, v in ckpt["state_dict"].items() if k.startswith("model.")}
        module.model.load_state_dict(state)

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
    trainer = L.Trainer(
        max_epochs=config.epochs,
        max_time=timedelta(minutes=config.max_minutes) if config.max_minutes else None,
        accelerator=config.accelerator,
        devices=config.devices,
        precision=resolve_precision(config),
        logger=loggers or False,
        callbacks=[checkpoint, last_checkpoint, EpochCSV(run_dir / "metrics.csv"), *callbacks],
        default_root_dir=str(run_dir),
        log_every_n_steps=config.log_every_n_steps,
        enable_progress_bar=False,
        enable_model_summary=False,
        num_sanity_val_steps=0,
        benchmark=True,  # fixed image size: let cuDNN pick its fastest kernels
    )
    trainer.fit(module, datamodule=TranceData(config), ckpt_path=resume_from)
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
