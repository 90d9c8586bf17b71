"""The one line a training run prints per finished epoch: losses, the validation score, time, samples/s.

`epoch 3/50: train loss 1.2345, val loss 1.3456, val Acc 0.4120, 52.3 s, 245.1 samples/s`

The validation score is the run's monitored metric (`val/acc`, shown as "val Acc", unless the
benchmark names another). A REINFORCE run adds `train reward`; an epoch cut short by
`max_minutes` before its validation says `no validation`. The time is the epoch's wall time with
its validation; samples/s counts the training samples over the training part alone, all devices
together. The numbers are the epoch's logged metrics, the ones `metrics.csv` records.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import lightning as L
from lightning.pytorch.callbacks import Callback


def epoch_line(
    epoch: int,
    epochs: int,
    metrics: dict[str, float],
    seconds: float,
    samples_per_second: float,
    monitor: str = "val/acc",
    label: str = "val Acc",
) -> str:
    """The line of 0-based epoch `epoch` of `epochs`, from its metrics (`train/loss`, `val/loss`,
    the `monitor` metric shown as `label`, `train/reward` when present)."""
    parts = []
    for key, name in (("train/loss", "train loss"), ("train/reward", "train reward")):
        if key in metrics:
            parts.append(f"{name} {metrics[key]:.4f}")
    if monitor in metrics:
        if monitor != "val/loss":
            parts.append(f"val loss {metrics.get('val/loss', float('nan')):.4f}")
        parts.append(f"{label} {metrics[monitor]:.4f}")
    else:
        parts.append("no validation")
    parts += [f"{seconds:.1f} s", f"{samples_per_second:.1f} samples/s"]
    return f"epoch {epoch + 1}/{epochs}: " + ", ".join(parts)


def _ids_length(batch: Any) -> int:
    return len(batch["id"])


class EpochLine(Callback):
    """Prints `epoch_line` at the end of each training epoch (above the progress bar if there is
    one, else with `write`).

    Args:
        epochs: the run's number of epochs.
        write: where a line goes when there is no progress bar.
        batch_size: the number of samples of a training batch (default: the length of its "id").
        monitor, label: the validation metric shown, and its name in the line.
    """

    def __init__(
        self,
        epochs: int,
        write: Callable[[str], Any] = print,
        batch_size: Callable[[Any], int] = _ids_length,
        monitor: str = "val/acc",
        label: str = "val Acc",
    ) -> None:
        self.epochs = epochs
        self.write = write
        self.batch_size = batch_size
        self.monitor = monitor
        self.label = label
        self._start = self._train_end = 0.0
        self._samples = 0
        self._validated = False

    def on_train_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        self._start = time.perf_counter()
        self._train_end = 0.0
        self._samples = 0
        self._validated = False

    def on_train_batch_end(
        self, trainer: L.Trainer, pl_module: L.LightningModule, outputs: Any, batch: Any, i: int
    ) -> None:
        self._samples += self.batch_size(batch)

    def on_validation_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if not trainer.sanity_checking and not self._train_end:
            self._train_end = time.perf_counter()

    def on_validation_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if not trainer.sanity_checking:
            self._validated = True

    def on_train_epoch_end(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if not trainer.is_global_zero:
            return
        now = time.perf_counter()
        train_seconds = (self._train_end or now) - self._start
        metrics = {}
        for key, value in trainer.callback_metrics.items():
            name = key.removesuffix("_epoch")
            if key.endswith("_step") or (name.startswith("val/") and not self._validated):
                continue
            metrics[name] = float(value)
        rate = self._samples * trainer.world_size / train_seconds if train_seconds > 0 else 0.0
        line = epoch_line(
            trainer.current_epoch,
            self.epochs,
            metrics,
            now - self._start,
            rate,
            self.monitor,
            self.label,
        )
        bar = trainer.progress_bar_callback
        if bar is not None and bar.is_enabled:
            bar.print(line)
        else:
            self.write(line)
