"""TrancoNet's batches: samples with their candidate clips, as rows of a feature table or images.

A training item is a sample of the train split with its K candidates of the epoch
(`tvr.tranco.data.candidates.TrainingCandidates`, seeded by seed, epoch and sample) and, for each
candidate clip, `clip_frames` of its frames (all of them when it has no more; else drawn at random,
seeded the same way: sparse temporal sampling). An evaluation item is a val/test sample with its
stored tiny candidates and evenly spaced frames. The sampler hands each index out with its epoch,
so an epoch's draws are the same in any worker and after a resume.

A batch of B samples (`collate`) names every image once:

- `rows` (U,) int64: the images' rows in a feature table (frozen encoder, or evaluation), or
  `images` (U, 3, S, S) float32: the images themselves (an encoder trained in the loop);
- `states` (B, 2): the initial and final image of each sample (indices into the U images);
- `frames` (B, K, F): each candidate clip's frames (-1: none; K and F padded to the batch's
  largest);
- `available` (B, K+1) bool: index 0 is the stop candidate (the final state), 1..K the clips;
- `targets` (B, S): the reference clips' candidate indices (1..K), then 0 (stop), then -100;
- `id`, `candidates` (clip ids per sample, in candidate order), `clips` (the reference).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.data import Dataset, Sampler

from tvr.tranco.data.candidates import TrainingCandidates, stable_hash
from tvr.tranco.data.dataset import TrancoDataset, TrancoSample
from tvr.tranco.models.trancenet import IGNORE, STOP
from tvr.tranco.train.images import ImageTransform, load_image


@dataclass(frozen=True)
class Item:
    """One sample as a batch takes it: paths relative to the dataset folder."""

    id: str
    initial: str
    final: str
    candidates: tuple[str, ...]  # clip ids
    frames: tuple[tuple[str, ...], ...]  # per candidate
    clips: tuple[str, ...]  # the reference, in order


def even_frames(frames: Sequence[str], count: int) -> tuple[str, ...]:
    """`count` frames spread evenly over the clip (all of them when it has no more)."""
    if len(frames) <= count:
        return tuple(frames)
    picks = np.linspace(0, len(frames) - 1, count).round().astype(int)
    return tuple(frames[i] for i in picks)


def random_frames(frames: Sequence[str], count: int, rng: np.random.Generator) -> tuple[str, ...]:
    """`count` frames drawn without replacement, in temporal order (all when it has no more)."""
    if len(frames) <= count:
        return tuple(frames)
    return tuple(frames[i] for i in np.sort(rng.choice(len(frames), count, replace=False)))


class EpochSampler(Sampler):
    """Yields (index, epoch) over the dataset, shuffled (seeded by seed and epoch) or in order;
    Lightning calls `set_epoch` before each epoch."""

    def __init__(self, size: int, shuffle: bool, seed: int = 0) -> None:
        self.size = size
        self.shuffle = shuffle
        self.seed = seed
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = epoch

    def __len__(self) -> int:
        return self.size

    def __iter__(self) -> Iterator[tuple[int, int]]:
        order = range(self.size)
        if self.shuffle:
            order = np.random.default_rng([self.seed, self.epoch]).permutation(self.size).tolist()
        for i in order:
            yield i, self.epoch


class TrainingItems(Dataset):
    """Items of the train split: candidates and frames drawn per epoch."""

    def __init__(self, dataset: TrancoDataset, k: int, clip_frames: int, seed: int) -> None:
        self.dataset = dataset
        self.samples = dataset.split("train")
        self.draw = TrainingCandidates(((s.id, s.clips) for s in self.samples), k, seed)
        self.clip_frames = clip_frames
        self.seed = seed

    def __len__(self) -> int:
        return len(self.samples)

    def __getitem__(self, key: tuple[int, int]) -> Item:
        index, epoch = key
        s = self.samples[index]
        candidates = tuple(self.draw(s.id, epoch))
        rng = np.random.default_rng([self.seed, epoch, stable_hash(s.id), 1])
        frames = tuple(
            random_frames(self.dataset.clips[c].frames, self.clip_frames, rng) for c in candidates
        )
        return Item(s.id, s.initial, s.final, candidates, frames, s.clips)


class EvaluationItems(Dataset):
    """Items of a val/test split with candidates given per sample (default: the stored tiny
    sets) and evenly spaced frames."""

    def __init__(
        self,
        dataset: TrancoDataset,
        split: str,
        clip_frames: int,
        candidates: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.dataset = dataset
        self.samples: list[TrancoSample] = dataset.split(split)
        self.clip_frames = clip_frames
        self.candidates = candidates

    def __len__(self) -> int:
        return len(self.samples)

    def candidates_of(self, s: TrancoSample) -> tuple[str, ...]:
        if self.candidates is not None:
            return tuple(self.candidates[s.id])
        if s.candidates is None:
            raise ValueError(f"sample {s.id!r} of {s.split} stores no candidates")
        return s.candidates

    def __getitem__(self, key: int | tuple[int, int]) -> Item:
        index = key[0] if isinstance(key, tuple) else key
        s = self.samples[index]
        candidates = self.candidates_of(s)
        frames = tuple(
            even_frames(self.dataset.clips[c].frames, self.clip_frames) for c in candidates
        )
        return Item(s.id, s.initial, s.final, candidates, frames, s.clips)

    def image_paths(self) -> list[str]:
        """Every image its items name, sorted (the rows of an evaluation feature table)."""
        paths: set[str] = set()
        for i in range(len(self)):
            item = self[i]
            paths.update((item.initial, item.final))
            paths.update(f for fs in item.frames for f in fs)
        return sorted(paths)


class Collate:
    """Items -> a batch (module docstring): rows of `index` (path -> row) when given, else the
    images loaded from `root` through `transform`."""

    def __init__(
        self,
        index: Mapping[str, int] | None = None,
        root: str | Path | None = None,
        transform: ImageTransform | None = None,
    ) -> None:
        if index is None and (root is None or transform is None):
            raise ValueError("a batch needs a feature index, or a folder and a transform")
        self.index = index
        self.root = Path(root) if root is not None else None
        self.transform = transform

    def __call__(self, items: Sequence[Item]) -> dict[str, Any]:
        local: dict[str, int] = {}

        def slot(path: str) -> int:
            return local.setdefault(path, len(local))

        k = max(len(it.candidates) for it in items)
        f = max((len(fs) for it in items for fs in it.frames), default=1)
        s = max(len(it.clips) for it in items) + 1
        b = len(items)
        states = torch.zeros(b, 2, dtype=torch.long)
        frames = torch.full((b, k, f), -1, dtype=torch.long)
        available = torch.zeros(b, k + 1, dtype=torch.bool)
        targets = torch.full((b, s), IGNORE, dtype=torch.long)
        for i, it in enumerate(items):
            states[i, 0], states[i, 1] = slot(it.initial), slot(it.final)
            for j, fs in enumerate(it.frames):
                for m, path in enumerate(fs):
                    frames[i, j, m] = slot(path)
            available[i, : len(it.candidates) + 1] = True
            position = {c: j + 1 for j, c in enumerate(it.candidates)}
            for n, clip in enumerate(it.clips):
                targets[i, n] = position[clip]
            targets[i, len(it.clips)] = STOP
        paths = list(local)
        batch: dict[str, Any] = {
            "id": [it.id for it in items],
            "states": states,
            "frames": frames,
            "available": available,
            "targets": targets,
            "candidates": [list(it.candidates) for it in items],
            "clips": [list(it.clips) for it in items],
        }
        if self.index is not None:
            batch["rows"] = torch.tensor([self.index[p] for p in paths], dtype=torch.long)
        else:
            assert self.root is not None and self.transform is not None
            batch["images"] = torch.stack(
                [load_image(self.root / p, self.transform) for p in paths]
            )
        return batch
