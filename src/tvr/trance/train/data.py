"""Dataset sources for training, by name: each makes a torch Dataset of batch-contract examples.

A source is a function `(config, split) -> Dataset | None` (None: the split does not exist);
its items are dicts as made by `tvr.trance.data.batch.make_example`, batched by
`tvr.trance.data.batch.collate`. "trance" reads a `tvr generate` folder (`data_root`) through
`tvr.trance.data.torch_data`, and is a config's source whenever it has a `data_root`;
"synthetic" draws the small set of the tests (`tvr.trance.train.synthetic`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch.utils.data import Dataset, Subset

from tvr.trance.train.config import TrainConfig
from tvr.trance.train.synthetic import make_synthetic_examples, synthetic_records

DatasetSource = Callable[[TrainConfig, str], "Dataset | None"]
_SOURCES: dict[str, DatasetSource] = {}
_SPLIT_SEED = {"train": 0, "val": 1, "test": 2}


class ListDataset(Dataset):
    """A dataset over a list of ready examples."""

    def __init__(self, examples: list[dict[str, Any]]) -> None:
        self.examples = examples

    def __len__(self) -> int:
        return len(self.examples)

    def __getitem__(self, i: int) -> dict[str, Any]:
        return self.examples[i]


def register_dataset(name: str, source: DatasetSource) -> None:
    _SOURCES[name] = source


def make_dataset(config: TrainConfig, split: str) -> Dataset | None:
    """Split `split` of the config's source; the training split cut to `config.train_size`."""
    if config.data not in _SOURCES:
        raise ValueError(f"unknown dataset source {config.data!r}: known: {sorted(_SOURCES)}")
    ds = _SOURCES[config.data](config, split)
    if split == "train" and ds is not None and config.train_size is not None:
        ds = training_subset(ds, config.train_size, config.seed)
    return ds


def training_subset(ds: Dataset, size: int, seed: int) -> Subset:
    """A random subset of `size` samples of `ds`, the same for the same seed, so runs of one seed
    at growing sizes see nested training sets (the samples of a smaller run are in every larger
    one)."""
    n = len(ds)
    if size > n:
        raise ValueError(f"train_size {size} is larger than the training split ({n} samples)")
    order = torch.randperm(n, generator=torch.Generator().manual_seed(seed)).tolist()
    return Subset(ds, sorted(order[:size]))


def synthetic_split(config: TrainConfig, split: str) -> tuple[int, int]:
    """(size, seed) of a split of the synthetic source; size 0 when it has no such split."""
    return config.synthetic_sizes.get(split, 0), config.seed * 10 + _SPLIT_SEED.get(split, 3)


def synthetic_split_records(config: TrainConfig, split: str):
    """The symbolic records of a synthetic split (to write its samples.jsonl)."""
    n, seed = synthetic_split(config, split)
    return synthetic_records(n, config.setting, seed)


def _synthetic(config: TrainConfig, split: str) -> Dataset | None:
    n, seed = synthetic_split(config, split)
    if n <= 0:
        return None
    return ListDataset(make_synthetic_examples(n, config.setting, config.image_size, seed))


register_dataset("synthetic", _synthetic)


def _trance(config: TrainConfig, split: str) -> Dataset | None:
    from tvr.trance.data.torch_data import training_source

    return training_source(config, split)


register_dataset("trance", _trance)
