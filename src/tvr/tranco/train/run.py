"""`train(config) -> run_dir`: one TrancoNet run, from config to the test predictions, resumable.

The run folder (`tvr.training.runs`) holds config.json, metrics.csv (one row per epoch: losses,
val EMR, lr), checkpoints/best.ckpt (best val EMR on the stored tiny candidates) and last.ckpt;
calling `train` again resumes a killed run from last.ckpt. A frozen encoder's features are read
from (or first written to) the feature cache before the run starts. Once training ends, the best
checkpoint predicts the test split against the tiny and the full candidate sets:
`predictions_tiny.jsonl` and `predictions_full.jsonl`, files that `tvr tranco evaluate --samples
DATASET/test.jsonl` scores as they are.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path

from lightning.pytorch.callbacks import Callback

from tvr.core.errors import UserError
from tvr.core.notices import warn_random_weights
from tvr.training.runs import RunOptions, fit_run
from tvr.training.runs import check_run_dir as shared_check_run_dir
from tvr.tranco.data.dataset import TrancoDataset, open_dataset
from tvr.tranco.train.checkpoint import frozen_recipe, load_trained
from tvr.tranco.train.config import TrancoTrainConfig
from tvr.tranco.train.data import EvaluationItems
from tvr.tranco.train.features import feature_cache
from tvr.tranco.train.module import TrancoData, TrancoModule, table_rows
from tvr.tranco.train.predict import SETTINGS, write_split_predictions

log = logging.getLogger(__name__)

#: the split the finished run predicts
PREDICT_SPLIT = "test"


def check_run_dir(config: TrancoTrainConfig) -> None:
    """ValueError if `config.run_dir` holds another run (`tvr.training.runs.check_run_dir`)."""
    shared_check_run_dir(config.run_dir, config, TrancoTrainConfig.load)


def predictions_path(run_dir: Path, setting: str) -> Path:
    """`predictions_tiny.jsonl` or `predictions_full.jsonl` of a run folder."""
    return Path(run_dir) / f"predictions_{setting}.jsonl"


def cache_device(config: TrancoTrainConfig) -> str | None:
    return "cpu" if config.accelerator == "cpu" else None


def open_training_data(config: TrancoTrainConfig) -> TrancoDataset:
    """The run's dataset, checked, with samples in train and val."""
    dataset = open_dataset(config.data)
    for split in ("train", "val"):
        if not dataset.split(split):
            raise UserError(f"{config.data}: the {split} split is empty; a run needs both")
    return dataset


def train(
    config: TrancoTrainConfig,
    callbacks: Sequence[Callback] = (),
    progress_bar: bool = False,
    epoch_lines: bool = True,
    predict: bool = True,
) -> Path:
    """Train as configured, then (with `predict`) write the test predictions; returns the run
    folder. Everything that can be wrong is checked before the folder is written."""
    check_run_dir(config)
    dataset = open_training_data(config)
    if config.strategy == "frozen" and not config.clip_weights:
        # scratch trains the encoder from random weights on purpose; frozen ones stay random
        warn_random_weights(f"the frozen image encoder of {config.model}", "--clip-weights",
                            config.encoder_seed)  # fmt: skip
    val_items = EvaluationItems(dataset, "val", config.clip_frames)
    val_paths = val_items.image_paths()
    digest = train_index = train_table = val_table = None
    if config.frozen:
        table = feature_cache(
            dataset, frozen_recipe(config), config.resize, config.feature_cache,
            config.feature_batch_size, cache_device(config), progress=progress_bar,
        )  # fmt: skip
        digest = table.weights_sha256
        train_index, train_table = table.index, table.features
        val_table = table_rows(table, val_paths)
    data = TrancoData(config, dataset, train_index, val_items, val_paths)
    options = RunOptions.from_config(
        config,
        monitor="val/emr",
        mode="max",
        monitor_label="val EMR",
    )

    def make_module() -> TrancoModule:
        module = TrancoModule(config.to_dict(), digest)
        module.attach(train_table, val_paths, dataset.root, val_table)
        return module

    result = fit_run(make_module, data, options, config.save, callbacks, progress_bar, epoch_lines)
    if predict and result.trainer.is_global_zero:
        write_run_predictions(config, result.best, dataset, progress_bar)
    return config.run_dir


def write_run_predictions(
    config: TrancoTrainConfig, checkpoint: Path, dataset: TrancoDataset, progress: bool = False
) -> list[Path]:
    """The test predictions of a checkpoint, tiny and full, in the run folder (none when the
    dataset's test split is empty); `progress`: bars on stderr."""
    if not dataset.split(PREDICT_SPLIT):
        log.warning("%s: no %s samples to predict", config.data, PREDICT_SPLIT)
        return []
    trained = load_trained(checkpoint)
    written = []
    for setting in SETTINGS:
        path = predictions_path(config.run_dir, setting)
        write_split_predictions(
            trained, dataset, PREDICT_SPLIT, setting, path, cache_device(config),
            config.feature_cache, progress,
        )  # fmt: skip
        written.append(path)
    return written
