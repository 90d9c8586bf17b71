"""Which videos of a CLEVRER set belong to a split: a generated set's config, else the release's.

A set made by `tvr clevrer generate` has a config.json whose `splits` cut its indices into
consecutive train / validation / test ranges (`GenerateConfig.split_ranges`); a copy of the
release has none, and its indices follow the release's numbering (`data.layout.split_of`).
Only videos that have the file a model needs (`kind`: "sim" files under masks/ or dynamics/,
or "video") are listed.
"""

from __future__ import annotations

import json
from pathlib import Path

from tvr.clevrer.data.layout import scan, split_of
from tvr.core.errors import UserError

SPLIT_NAMES: tuple[str, ...] = ("train", "validation", "test")


def split_indices(root: str | Path, split: str) -> range | None:
    """The index range of `split` in a generated set (None for a set without a config.json)."""
    from tvr.clevrer.generate.config import GenerateConfig

    if split not in SPLIT_NAMES:
        raise UserError(f"unknown split {split!r} (expected one of: {', '.join(SPLIT_NAMES)})")
    path = Path(root) / "config.json"
    if not path.is_file():
        return None
    try:
        config = GenerateConfig.from_dict(json.loads(path.read_text(encoding="utf-8")), str(path))
    except (ValueError, TypeError) as err:
        raise UserError(f"{path}: not the config of a generated CLEVRER set ({err})") from None
    return config.split_ranges().get(split, range(0))


def split_files(root: str | Path, split: str, folder: str) -> dict[int, Path]:
    """The `sim_XXXXX.json` files under `root/folder` (masks or dynamics) of the split's videos,
    by index, in index order; UserError if the folder is missing."""
    base = Path(root) / folder
    if not base.is_dir():
        raise UserError(f"{root}: no {folder}/ folder (make the set with masks and dynamics)")
    found = scan(base, "sim")
    wanted = split_indices(root, split)
    keep = {
        i: p
        for i, p in found.items()
        if (i in wanted if wanted is not None else split_of(i) == split)
    }
    return dict(sorted(keep.items()))


def take(files: dict[int, Path], limit: int | None) -> dict[int, Path]:
    """The first `limit` entries of `files` (all of them for None)."""
    if limit is None:
        return files
    return dict(list(files.items())[:limit])
