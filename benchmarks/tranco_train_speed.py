"""TrancoNet training throughput: a frozen encoder's cached features against the encoder in the loop.

python benchmarks/tranco_train_speed.py --data DATASET [--models small-t,small-g]
    [--strategies frozen,scratch] [--epochs 3] [--batch-size 32] [--threads 1]
    [--accelerator cpu]

For each model and strategy: a fresh run in a temporary folder (and, for frozen, a fresh feature
cache: the time to encode every image of the dataset once is reported apart). Training
samples/s counts the training part of each epoch alone (from the epoch's start to its
validation), the median over the epochs after the first; validation seconds are the median
time of the validations (an encoder in the loop encodes the val images at each one). The
dataset is any folder in tvr's TRANCO layout, e.g. `tvr tranco testbed --out DATASET --sizes
48 12 12`.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import torch
from lightning.pytorch.callbacks import Callback

from tvr.tranco.data.dataset import open_dataset
from tvr.tranco.train.checkpoint import frozen_recipe
from tvr.tranco.train.config import TrancoTrainConfig
from tvr.tranco.train.features import feature_cache
from tvr.tranco.train.run import train


class Timing(Callback):
    """Training seconds and samples per epoch, and validation seconds."""

    def __init__(self) -> None:
        self.train: list[tuple[float, int]] = []
        self.val: list[float] = []
        self._start = self._val_start = 0.0
        self._samples = 0

    def on_train_epoch_start(self, trainer, module) -> None:
        self._start, self._samples = time.perf_counter(), 0

    def on_train_batch_end(self, trainer, module, outputs, batch, i) -> None:
        self._samples += len(batch["id"])

    def on_validation_epoch_start(self, trainer, module) -> None:
        self._val_start = time.perf_counter()
        self.train.append((self._val_start - self._start, self._samples))

    def on_validation_epoch_end(self, trainer, module) -> None:
        self.val.append(time.perf_counter() - self._val_start)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", required=True, type=Path)
    parser.add_argument("--models", default="small-t,small-g")
    parser.add_argument("--strategies", default="frozen,scratch")
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--accelerator", default="cpu")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    dataset = open_dataset(args.data)
    n_train = len(dataset.split("train"))
    print(f"{args.data}: {n_train} training samples, {len(dataset.clips)} clips, "
          f"{args.threads} thread(s), {args.accelerator}")  # fmt: skip
    print("model    strategy  cache s  train samples/s  val s  (per epoch: samples/s)")
    for model in args.models.split(","):
        for strategy in args.strategies.split(","):
            with tempfile.TemporaryDirectory() as tmp:
                config = TrancoTrainConfig(
                    data=str(args.data), model=model, strategy=strategy, epochs=args.epochs,
                    batch_size=args.batch_size, accelerator=args.accelerator,
                    output_dir=tmp, feature_cache=f"{tmp}/features", num_workers=0,
                )  # fmt: skip
                cache_s = float("nan")
                if config.frozen:
                    t = time.perf_counter()
                    feature_cache(dataset, frozen_recipe(config), config.resize, config.feature_cache,
                                  config.feature_batch_size, "cpu" if args.accelerator == "cpu" else None)  # fmt: skip
                    cache_s = time.perf_counter() - t
                timing = Timing()
                train(config, callbacks=[timing], epoch_lines=False, predict=False)
                rates = [s / t for t, s in timing.train]
                steady = statistics.median(rates[1:] or rates)
                print(f"{model:8} {strategy:9} {cache_s:7.1f}  {steady:15.1f}  "
                      f"{statistics.median(timing.val):5.2f}  "
                      f"({', '.join(f'{r:.1f}' for r in rates)})")  # fmt: skip


if __name__ == "__main__":
    main()
