"""One Lightning training run in a run folder: config.json, metrics.csv, checkpoints, resume.

Every benchmark's `train` goes through `fit_run`. A run folder holds `config.json`, `metrics.csv`
(one row per finished epoch), `tensorboard/` (when installed), `checkpoints/best.ckpt` (best
monitored validation metric) and `checkpoints/last.ckpt` (end of the last finished epoch). Calling
`fit_run` again on a folder with a `last.ckpt` resumes from it, so a killed run goes on where its
last finished epoch left it, and ends as the same run never stopped would (`epoch_seeds`). A
second run into a folder being written is refused (`tvr.core.output_lock`). A folder belongs to one run: `check_run_dir` refuses a config that
differs from the saved one outside its resumable fields, before anything is written. For a
`RunConfig`, `open_run` checks the config and its folder, `fit_config` fits it, and
`load_run_module` loads a run's checkpoint back.
"""

from __future__ import annotations

import csv
import importlib.util
import logging
import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import lightning as L
import torch
from lightning.fabric.utilities.exceptions import MisconfigurationException
from lightning.pytorch.callbacks import Callback, ModelCheckpoint

from tvr.core.errors import UserError
from tvr.core.output_lock import lock_output
from tvr.training.checkpoints import load_module
from tvr.training.epoch_seeds import EpochSeeds
from tvr.training.progress import EpochLine
from tvr.training.run_config import RunConfig

log = logging.getLogger(__name__)


class _NoAdverts(logging.Filter):
    """Drops Lightning's advertisements ("💡 Tip: For seamless cloud logging ..." for litlogger,
    "... cloud uploads ..." for litmodels), its hardware lines ("GPU available: False, used:
    False", "TPU available: ...", "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0]": the run's config
    and --accelerator say it) and its "`Trainer.fit` stopped: `max_epochs=N` reached." (the run
    did what it was asked) from a run's output; Lightning's other notes and its warnings pass."""

    DROPPED = re.compile(
        r"💡 Tip|seamless cloud|try installing \[lit|^(GPU|TPU|HPU|IPU) available: "
        r"|^LOCAL_RANK: \d+ - CUDA_VISIBLE_DEVICES|^`Trainer\.fit` stopped: `max_epochs="
        r"|^Loading `train_dataloader` to estimate number of stepping batches"
    )

    def filter(self, record: logging.LogRecord) -> bool:
        return not self.DROPPED.search(record.getMessage())


for _name in (
    "lightning.pytorch.utilities.rank_zero",
    "lightning.fabric.utilities.rank_zero",
    "lightning.pytorch.accelerators.cuda",
):
    logging.getLogger(_name).addFilter(_NoAdverts())
# a deprecation inside Lightning itself (its _pytree helper), printed on every run
warnings.filterwarnings("ignore", message=r".*isinstance\(treespec, LeafSpec\)` is deprecated")
# a small run (an epoch of fewer batches than the logging interval): the run's epoch lines and
# metrics.csv hold every epoch's numbers, so the note says nothing a user needs
warnings.filterwarnings("ignore", message=r"The number of training batches \(\d+\) is smaller than "
                        r"the logging interval")  # fmt: skip

M = TypeVar("M", bound=L.LightningModule)


def resolve_precision(precision: str, accelerator: str) -> str:
    """Lightning precision: `precision`, or for "auto" mixed precision on a GPU, else 32-true."""
    if precision != "auto":
        return precision
    if accelerator != "cpu" and torch.cuda.is_available():
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


def check_run_dir(run_dir: Path, config: Any, load: Callable[[Path], Any]) -> None:
    """ValueError if `run_dir` holds another run: a config.json that `load` cannot read as a
    config, or one whose `differences(config)` is not empty, or checkpoints without a
    config.json. Nothing of such a folder is ever overwritten, resumed or appended to."""
    run_dir = Path(run_dir)
    path = run_dir / "config.json"
    if not path.exists():
        if any((run_dir / "checkpoints").glob("*.ckpt")):
            raise ValueError(
                f"{run_dir} holds checkpoints but no config.json: not a run this config can "
                "resume; give another --run-name (or remove that folder)"
            )
        return
    try:
        saved = load(path)
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


def open_run(config: RunConfig) -> Path:
    """The run folder of `config`, once `config.validate()` passes and `check_run_dir` (with the
    config's own loader) finds no other run there; either failure is a UserError."""
    config.validate()
    try:
        check_run_dir(config.run_dir, config, type(config).load)
    except ValueError as err:
        raise UserError(str(err)) from None
    return config.run_dir


@dataclass(frozen=True)
class RunOptions:
    """How `fit_run` trains: length, hardware, what it monitors, how it logs.

    Args:
        run_dir: the run folder.
        epochs: maximum number of epochs.
        max_minutes: stop fitting after this much wall time (None: no limit).
        accelerator, devices: Lightning's ("auto", "cpu", "gpu"; a count or "auto").
        precision: a Lightning precision, or "auto" (mixed on GPUs, 32 on the CPU).
        seed: seeds torch, numpy and Python (and the loaders' workers).
        monitor, mode: the validation metric that picks best.ckpt, and "max" or "min".
        monitor_label: its name in the epoch line.
        log_every_n_steps: Lightning's logging interval.
        resume: resume from checkpoints/last.ckpt when the folder has one.
        gradient_clip_val: clip gradients to this norm (None: no clipping).
        benchmark: cuDNN's autotuner (fixed input sizes).
    """

    run_dir: Path
    epochs: int
    max_minutes: float | None = None
    accelerator: str = "auto"
    devices: int | str = "auto"
    precision: str = "auto"
    seed: int = 0
    monitor: str = "val/acc"
    mode: str = "max"
    monitor_label: str = "val Acc"
    log_every_n_steps: int = 50
    resume: bool = True
    gradient_clip_val: float | None = None
    benchmark: bool = True

    @classmethod
    def from_config(cls, config: Any, **choices: Any) -> RunOptions:
        """The options of a run config (its run_dir, epochs, max_minutes, accelerator, devices,
        precision, seed, log_every_n_steps and resume fields), with the benchmark's `choices`
        (monitor, mode, monitor_label, gradient_clip_val, benchmark)."""
        fields = ("epochs", "max_minutes", "accelerator", "devices", "precision", "seed")
        fields += ("log_every_n_steps", "resume")
        taken = {name: getattr(config, name) for name in fields}
        return cls(run_dir=Path(config.run_dir), **taken, **choices)


@dataclass(frozen=True)
class FitResult:
    """What a finished `fit_run` leaves: its best and last checkpoints, and the trainer."""

    best: Path
    last: Path
    trainer: L.Trainer


def fit_run(
    make_module: Callable[[], L.LightningModule],
    datamodule: L.LightningDataModule,
    options: RunOptions,
    save_config: Callable[[Path], None],
    callbacks: Sequence[Callback] = (),
    progress_bar: bool = False,
    epoch_lines: bool = True,
    batch_size: Callable[[Any], int] | None = None,
) -> FitResult:
    """Fit the module `make_module()` builds on `datamodule` in `options.run_dir`, resuming from
    its last.ckpt.

    `save_config(path)` writes the run's config.json (called once the trainer is built, so a
    config the machine cannot run writes nothing). `make_module` is called after seeding, so the
    initial weights follow the seed (it may load initial weights too). The caller checks the
    folder first (`check_run_dir`). Returns the best checkpoint (the last one when no validation
    finished) and the last one.
    """
    run_dir = Path(options.run_dir)
    ckpt_dir = run_dir / "checkpoints"
    last = ckpt_dir / "last.ckpt"
    loggers: list[Any] = []
    if importlib.util.find_spec("tensorboard") is not None:
        from lightning.pytorch.loggers import TensorBoardLogger

        loggers.append(TensorBoardLogger(save_dir=str(run_dir), name="tensorboard", version=""))
    else:
        log.warning("tensorboard is not installed: no TensorBoard logs for %s", run_dir)
    best_checkpoint = ModelCheckpoint(
        dirpath=str(ckpt_dir),
        filename="best",
        monitor=options.monitor,
        mode=options.mode,
        save_top_k=1,
        auto_insert_metric_name=False,
        enable_version_counter=False,
    )
    # A callback of its own for last.ckpt: Lightning's `save_last` rewrites last.ckpt only when a
    # top-k checkpoint is saved, i.e. when the metric improves, so a killed run would go back to
    # its best epoch instead of its last one.
    last_checkpoint = ModelCheckpoint(
        dirpath=str(ckpt_dir),
        filename="last",
        monitor=None,
        save_top_k=1,
        auto_insert_metric_name=False,
        enable_version_counter=False,
    )
    extra: list[Callback] = []
    if epoch_lines:
        line_kwargs: dict[str, Any] = {"monitor": options.monitor, "label": options.monitor_label}
        if batch_size is not None:
            line_kwargs["batch_size"] = batch_size
        extra.append(EpochLine(options.epochs, **line_kwargs))
    try:
        trainer = L.Trainer(
            max_epochs=options.epochs,
            max_time=timedelta(minutes=options.max_minutes) if options.max_minutes else None,
            accelerator=options.accelerator,
            devices=options.devices,
            precision=resolve_precision(options.precision, options.accelerator),
            logger=loggers or False,
            callbacks=[
                EpochCSV(run_dir / "metrics.csv"),
                EpochSeeds(options.seed),
                best_checkpoint,
                last_checkpoint,
                *extra,
                *callbacks,
            ],
            default_root_dir=str(run_dir),
            log_every_n_steps=options.log_every_n_steps,
            enable_progress_bar=progress_bar,
            enable_model_summary=False,
            num_sanity_val_steps=0,
            gradient_clip_val=options.gradient_clip_val,
            benchmark=options.benchmark,
        )
    except MisconfigurationException as err:  # an accelerator or devices this machine lacks
        raise ValueError(
            f"accelerator {options.accelerator}, devices {options.devices}: {err}"
        ) from None
    lock_output(run_dir)  # one writer: a second run into this folder is refused here
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    resume_from = str(last) if options.resume and last.exists() else None
    save_config(run_dir / "config.json")
    L.seed_everything(options.seed, workers=True, verbose=False)
    module = make_module()
    trainer.fit(module, datamodule=datamodule, ckpt_path=resume_from)
    if not best_checkpoint.best_model_path and not last.exists():
        # stopped (max_minutes) before the first epoch ended: keep the weights as they are
        log.warning(
            "%s: no epoch finished before the time limit; keeping the current weights", run_dir
        )
        trainer.save_checkpoint(str(last))
    best = Path(best_checkpoint.best_model_path) if best_checkpoint.best_model_path else last
    return FitResult(best=best, last=last, trainer=trainer)


def fit_config(
    config: RunConfig,
    make_module: Callable[[], L.LightningModule],
    datamodule: L.LightningDataModule,
    callbacks: Sequence[Callback] = (),
    progress_bar: bool = False,
    epoch_lines: bool = True,
    batch_size: Callable[[Any], int] | None = None,
    **choices: Any,
) -> FitResult:
    """`fit_run` of a run config: the options `RunOptions.from_config(config, **choices)` gives
    (`choices`: the benchmark's monitor, mode, monitor_label, gradient_clip_val, benchmark), the
    config saved as the run's config.json."""
    options = RunOptions.from_config(config, **choices)
    return fit_run(
        make_module, datamodule, options, config.save, callbacks, progress_bar, epoch_lines,
        batch_size,
    )  # fmt: skip


def run_checkpoint(checkpoint: str | Path, what: str) -> Path:
    """The checkpoint file `checkpoint` names: a .ckpt file, or a run folder (its best.ckpt);
    UserError `no {what} checkpoint` when there is none."""
    path = Path(checkpoint)
    if path.is_dir():
        path = path / "checkpoints" / "best.ckpt"
    if not path.is_file():
        raise UserError(f"{checkpoint}: no {what} checkpoint (a run folder or a .ckpt file)")
    return path


def load_run_module(
    module_class: type[M], checkpoint: str | Path, what: str, map_location: str = "cpu"
) -> M:
    """The `module_class` of `run_checkpoint(checkpoint, what)`, in eval mode; UserError when
    that file is not such a checkpoint."""
    path = run_checkpoint(checkpoint, what)
    return load_module(module_class, path, f"a {what} checkpoint", map_location)
