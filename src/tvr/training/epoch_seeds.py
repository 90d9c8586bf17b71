"""Resume equals an uninterrupted run: each epoch's shuffling and randomness seeded from (seed, epoch).

A run killed after epoch k and resumed from its last.ckpt must train epoch k+1 exactly as a run
that was never stopped. Weights, optimizer and schedulers come back from the checkpoint; what a
checkpoint does not hold is where the random number generators stood. Lightning creates a
training epoch's data iterator at different moments in a fresh and a resumed run (the first
epoch of a run before `on_train_epoch_start`, later ones after), so seeding from a callback
cannot make both agree. Instead the `EpochSeeds` callback every run has rebuilds the training
DataLoader as an `EpochSeededLoader`: whenever an epoch's iterator is made, it seeds torch,
numpy and Python's `random` (dropout, augmentation) and its own generator (the shuffle order,
the workers' base seed) from `epoch_seed(seed, epoch)`, the epoch being the one whose batches
are drawn (`training_epoch`). `EpochSeeds` also keeps the generators' states in every
checkpoint and restores them on resume.

Bit for bit on CPU with `num_workers` 0 or non-persistent workers; on a GPU as far as its
kernels are deterministic. A loader with a custom sampler or batch sampler is left as it is
(a warning says so): such a sampler seeds itself.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Iterator
from typing import Any

import lightning as L
import numpy as np
import torch
from lightning.pytorch.callbacks import Callback
from torch.utils.data import DataLoader, RandomSampler, SequentialSampler

log = logging.getLogger(__name__)


def epoch_seed(seed: int, epoch: int) -> int:
    """A 63-bit seed for epoch `epoch` of a run seeded with `seed` (independent streams)."""
    state = np.random.SeedSequence([int(seed) & 0xFFFFFFFF, int(epoch)]).generate_state(2)
    return int((int(state[0]) << 31) ^ int(state[1])) & 0x7FFFFFFFFFFFFFFF


def seed_all(seed: int) -> None:
    """Seed torch (every device), numpy's global generator and Python's `random`."""
    torch.manual_seed(seed)
    np.random.seed(seed % 2**32)
    random.seed(seed)


class EpochSeededLoader(DataLoader):
    """A DataLoader that seeds everything from (seed, epoch) each time an epoch's iterator is made.

    Args:
        *args, **kwargs: DataLoader's own (a `generator` is made if none is given).
        seed: the run's seed.
        epoch_of: returns the epoch being trained (`training_epoch`).
    """

    def __init__(self, *args: Any, seed: int, epoch_of: Callable[[], int], **kwargs: Any) -> None:
        kwargs.setdefault("generator", torch.Generator())
        super().__init__(*args, **kwargs)
        self._seed, self._epoch_of = seed, epoch_of
        self.iter_epoch: int | None = None

    def __iter__(self) -> Iterator[Any]:
        self.iter_epoch = self._epoch_of()
        s = epoch_seed(self._seed, self.iter_epoch)
        seed_all(s)
        self.generator.manual_seed(s ^ 0x5EED)
        return super().__iter__()


def epoch_seeded(loader: DataLoader, seed: int, epoch_of: Callable[[], int]) -> DataLoader:
    """`loader` rebuilt as an `EpochSeededLoader` (same data, batches and workers), or `loader`
    itself when it uses a sampler of its own."""
    if isinstance(loader, EpochSeededLoader):
        return loader
    sampler = loader.sampler
    simple = isinstance(sampler, (RandomSampler, SequentialSampler)) and loader.batch_size
    if not simple or (isinstance(sampler, RandomSampler) and sampler.replacement):
        # a sampler of the benchmark's own seeds each epoch itself from (seed, epoch): TRANCO's
        # EpochSampler, the CLEVRER parser's RoleBatches
        log.debug("training loader with its own sampler: left to seed its epochs itself")
        return loader
    kwargs: dict[str, Any] = dict(
        batch_size=loader.batch_size,
        shuffle=isinstance(sampler, RandomSampler),
        num_workers=loader.num_workers,
        collate_fn=loader.collate_fn,
        pin_memory=loader.pin_memory,
        drop_last=loader.drop_last,
        timeout=loader.timeout,
        worker_init_fn=loader.worker_init_fn,
        multiprocessing_context=loader.multiprocessing_context,
        persistent_workers=loader.persistent_workers,
    )
    if loader.num_workers > 0:
        kwargs["prefetch_factor"] = loader.prefetch_factor
    return EpochSeededLoader(loader.dataset, seed=seed, epoch_of=epoch_of, **kwargs)


def training_epoch(trainer: L.Trainer) -> int:
    """The epoch whose batches are drawn next: the epochs processed so far. (A checkpoint is
    written at the end of an epoch before Lightning counts it completed, so after a resume
    `current_epoch` still names the finished epoch while the next one's iterator is made.)"""
    return trainer.fit_loop.epoch_progress.current.processed


class EpochSeeds(Callback):
    """Seeds each training epoch from (seed, epoch) and keeps the generators' states in checkpoints.

    At `setup` the datamodule's training loader becomes an `EpochSeededLoader` (one process; a
    distributed run's sampler is seeded by epoch already). Lightning may make the first epoch's
    iterator before a checkpoint is restored (a module that reads `estimated_stepping_batches`
    does); if the first epoch trained in this process finds its iterator made for another
    epoch, it is made again. The generators' states are saved in every checkpoint and restored
    on resume as well (tensors and plain numbers: a checkpoint loads with weights_only).

    Args:
        seed: the run's seed.
    """

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self._first_epoch = True

    def setup(self, trainer: L.Trainer, pl_module: L.LightningModule, stage: str) -> None:
        datamodule = getattr(trainer, "datamodule", None)
        if stage != "fit" or trainer.world_size > 1 or datamodule is None:
            return
        make = datamodule.train_dataloader
        if getattr(make, "_epoch_seeded", False):
            return

        def train_dataloader() -> DataLoader:
            return epoch_seeded(make(), self.seed, lambda: training_epoch(trainer))

        train_dataloader._epoch_seeded = True  # type: ignore[attr-defined]
        datamodule.train_dataloader = train_dataloader  # type: ignore[method-assign]

    def on_train_epoch_start(self, trainer: L.Trainer, pl_module: L.LightningModule) -> None:
        if not self._first_epoch:
            return
        self._first_epoch = False
        loader = trainer.train_dataloader
        if isinstance(loader, EpochSeededLoader) and loader.iter_epoch != training_epoch(trainer):
            fetcher = getattr(trainer.fit_loop, "_data_fetcher", None)
            if fetcher is None:  # pragma: no cover - a Lightning without it
                log.warning("cannot reseed the first epoch after a resume")
                return
            iter(fetcher)  # the resumed epoch's iterator, seeded for that epoch

    def state_dict(self) -> dict[str, Any]:
        _, keys, pos, has_gauss, gauss = np.random.get_state()
        version, internal, gauss_next = random.getstate()
        return {
            "torch": torch.get_rng_state(),
            "numpy": {"keys": torch.from_numpy(keys.astype(np.int64)), "pos": int(pos),
                      "has_gauss": int(has_gauss), "gauss": float(gauss)},
            "python": {"version": version, "internal": list(internal), "gauss": gauss_next},
        }  # fmt: skip

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if "torch" in state_dict:
            torch.set_rng_state(state_dict["torch"])
        if "numpy" in state_dict:
            n = state_dict["numpy"]
            np.random.set_state(("MT19937", n["keys"].numpy().astype(np.uint32), n["pos"],
                                 n["has_gauss"], n["gauss"]))  # fmt: skip
        if "python" in state_dict:
            p = state_dict["python"]
            random.setstate((p["version"], tuple(p["internal"]), p["gauss"]))
