"""What `tvr report` reads: a dataset folder made by `tvr generate`, or a plain samples file.

A dataset folder is opened with the dataset store (`tvr.trance.data.store.open_dataset`); its splits
and images come from there. A samples.jsonl file (or a folder made by `tvr sample`, which holds
one) is one split named after the file; its images, if any, are release-named PNGs
(`{id}-init.C.png`, `{id}-fin.L.png`, ...) in a folder given with `images`, as `tvr render`
writes them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tvr.core.errors import UserError
from tvr.core.progress import step_bar
from tvr.trance.data.files import read_samples
from tvr.trance.data.sample import Sample, image_name

#: (position in the split, stage "init"/"fin", view "L"/"C"/"R") -> a PNG on disk, or None
ImageLookup = Callable[[int, str, str], Path | None]


def _no_images(i: int, stage: str, view: str) -> Path | None:
    return None


@dataclass
class SplitSource:
    """The samples of one split and where their images are."""

    name: str
    samples: list[Sample]
    image: ImageLookup = _no_images


@dataclass
class ReportSource:
    """The input of a report: one or more splits."""

    root: Path
    kind: str  # "dataset" or "samples"
    setting: str | None
    splits: list[SplitSource] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.root.name if self.kind == "dataset" else str(self.root)

    def select(self, split: str | None) -> list[SplitSource]:
        """All splits (None) or the one named; UserError naming the known splits otherwise."""
        if split is None:
            return list(self.splits)
        for sp in self.splits:
            if sp.name == split:
                return [sp]
        known = ", ".join(sp.name for sp in self.splits)
        raise UserError(f"{self.root}: no split {split!r} (splits: {known})")


def _images_in(folder: Path, samples: list[Sample]) -> ImageLookup:
    def lookup(i: int, stage: str, view: str) -> Path | None:
        p = folder / image_name(samples[i].id, stage, view)
        return p if p.is_file() else None

    return lookup


def _setting_beside(samples_file: Path) -> str | None:
    """The setting in the config.json that `tvr sample` writes beside its samples.jsonl."""
    cfg = samples_file.parent / "config.json"
    try:
        setting = json.loads(cfg.read_text(encoding="utf-8")).get("setting")
    except (OSError, ValueError, AttributeError):
        return None
    return setting if isinstance(setting, str) else None


def open_samples(path: Path, images: Path | None = None) -> ReportSource:
    """A samples.jsonl file as a one-split source; bad lines raise InputError (file, line, field)."""
    samples = read_samples(path)
    if not samples:
        raise UserError(f"{path}: no samples")
    lookup = _no_images
    if images is not None:
        if not images.is_dir():
            raise UserError(f"--images {images}: no such folder")
        lookup = _images_in(images, samples)
    setting = _setting_beside(path)
    if setting is None and any(isinstance(s.extra.get("view"), str) for s in samples):
        setting = "view"
    return ReportSource(path, "samples", setting, [SplitSource(path.stem, samples, lookup)])


def open_dataset_source(root: Path, progress: bool = False) -> ReportSource:
    """A dataset folder made by `tvr generate`, through the dataset store; with `progress`, a
    bar on stderr over the samples read (shard by shard: the release's 530,000 take minutes)."""
    try:
        from tvr.trance.data.store import open_dataset
    except ImportError:  # pragma: no cover - the store ships with the package
        raise UserError(
            f"{root}: reading a dataset folder needs tvr.trance.data.store; pass its samples.jsonl"
        ) from None
    ds = open_dataset(root)
    splits = []
    bar = step_bar(sum(len(ds.split(n)) for n in ds.splits), "reading", "sample", progress)
    for name in ds.splits:
        sp = ds.split(name)
        samples = []
        for shard in sp.shards:
            samples += shard.samples
            bar.update(len(shard.samples))

        def lookup(i: int, stage: str, view: str, sp=sp) -> Path | None:
            try:
                p = Path(sp.image_path(i, stage, view))
            except (KeyError, IndexError, OSError, ValueError, UserError):
                return None
            return p if p.is_file() else None

        splits.append(SplitSource(name, samples, lookup))
    bar.close()
    if not splits:
        raise UserError(f"{root}: the dataset has no samples")
    return ReportSource(root, "dataset", ds.setting, splits)


def open_source(
    path: str | Path, images: str | Path | None = None, progress: bool = False
) -> ReportSource:
    """Open DIR (a dataset folder, or a folder with samples.jsonl) or a samples.jsonl file
    (`progress`: a bar over a dataset folder's samples)."""
    path = Path(path)
    images = Path(images) if images is not None else None
    if not path.exists():
        raise UserError(f"{path}: no such file or folder")
    if path.is_file():
        return open_samples(path, images)
    if (path / "samples.jsonl").is_file():  # a folder made by `tvr sample`
        return open_samples(path / "samples.jsonl", images)
    if not (path / "config.json").is_file():
        raise UserError(
            f"{path}: neither a dataset folder made by `tvr generate` (no config.json) nor a "
            "folder with samples.jsonl; pass a dataset folder or a samples.jsonl file"
        )
    if images is not None:
        raise UserError("--images is for a samples.jsonl; a dataset folder holds its own images")
    return open_dataset_source(path, progress)
