"""The public release's layout with images: export a store split to it, import it into a store.

A release folder holds `data.jsonl` (one sample a line, `tvr.trance.data.release`) and, in its
`image/` subfolder as the original preprocessing expects, the images `img_{idx:06d}-init.C.png`,
`-fin.L.png`, `-fin.C.png`, `-fin.R.png` (on import they are also found beside data.jsonl or in
`images/`). Export copies the PNG bytes; import keeps them as they are and makes the small
training copy from the decoded pixels, so a round trip keeps the symbolic content, the sample ids
and every pixel. View samples carry their view as an extra `"view"` field.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from tvr.core.errors import InputError, UserError
from tvr.core.jsonl import iter_jsonl, write_jsonl
from tvr.trance.data.release import RELEASE_CAMERAS, sample_from_release, sample_to_release
from tvr.trance.data.sample import Sample, image_name
from tvr.trance.data.store import MANIFEST_FILE, SplitStore, TranceDataset, shard_name
from tvr.trance.generate.config import DatasetConfig
from tvr.trance.world.vocab import IMAGE_SLOTS


def export_release(
    split: SplitStore,
    out: str | Path,
    start_idx: int = 0,
    progress: Callable[[int], None] | None = None,
) -> Path:
    """Write split `split` of a store as a release folder `out` (idx = start_idx + position);
    data.jsonl is written last. Returns its path. `progress(1)` after each sample."""
    out = Path(out)
    (out / IMAGE_DIR).mkdir(parents=True, exist_ok=True)
    records = []
    for i in range(len(split)):
        sample = split.sample(i)
        idx = start_idx + i
        records.append(sample_to_release(sample, idx))
        rid = f"img_{idx:06d}"
        for stage, view in IMAGE_SLOTS:
            dest = out / IMAGE_DIR / image_name(rid, stage, view)
            shutil.copyfile(split.image_path(i, stage, view), dest)
        if progress is not None:
            progress(1)
    write_jsonl(out / "data.jsonl", records)
    return out / "data.jsonl"


#: the release folder's image subfolder (where the original preprocessing reads them)
IMAGE_DIR = "image"


def _image_file(folder: Path, name: str) -> Path | None:
    for cand in (folder / IMAGE_DIR / name, folder / name, folder / "images" / name):
        if cand.is_file():
            return cand
    return None


def read_release_folder(folder: str | Path) -> list[tuple[Sample, list[Path]]]:
    """(sample, its 4 image files in IMAGE_SLOTS order) of every line of folder/data.jsonl;
    InputError naming the line and image of anything missing."""
    folder = Path(folder)
    data = folder / "data.jsonl"
    if not data.is_file():
        raise UserError(f"{folder}: no data.jsonl (not a release folder)")
    out = []
    for lineno, rec in iter_jsonl(data):
        sample = sample_from_release(data, lineno, rec)
        states = rec["states"]
        names = []
        for stage, view in IMAGE_SLOTS:
            state = states[0] if stage == "init" else states[-1]
            named = (state.get("images") or {}).get(RELEASE_CAMERAS[view])
            names.append(named or image_name(sample.id, stage, view))
        paths = []
        for name in names:
            path = _image_file(folder, name)
            if path is None:
                raise InputError(data, lineno, "states.images", f"image {name} not found in {folder}")
            paths.append(path)
        out.append((sample, paths))
    if not out:
        raise UserError(f"{data}: no samples")
    return out


def import_release(
    folder: str | Path,
    out: str | Path,
    split: str = "train",
    setting: str = "event",
    shard_size: int = 100,
    small_size: tuple[int, int] = (160, 120),
    progress: Callable[[int, int], None] | None = None,
) -> TranceDataset:
    """Make a store in `out` holding the release folder's samples as split `split` (same PNG
    bytes, the small copy made from their pixels); resumable like `tvr generate`.
    `progress(done, total)` as samples are imported (those of shards already there count as
    done), the convention of `tvr.core.progress.DoneTotalBar`."""
    from PIL import Image

    from tvr.trance.data.store import open_dataset, shards_dir, temp_prefix
    from tvr.trance.generate.job import finish_split, prepare_folder, publish_shard, write_shard

    items = read_release_folder(folder)
    if setting == "view" and any("view" not in s.extra for s, _ in items):
        raise UserError(f"{folder}: --setting view needs a 'view' field on every line")
    if setting == "basic" and any(len(s.steps) != 1 for s, _ in items):
        raise UserError(f"{folder}: --setting basic needs exactly one step per sample")
    with Image.open(items[0][1][0]) as im:
        width, height = im.size
    config = DatasetConfig(
        setting=setting,
        split_sizes={split: len(items)},
        shard_size=shard_size,
        image_width=width,
        image_height=height,
        small_width=small_size[0],
        small_height=small_size[1],
        source="release",
    ).resolved()
    out = Path(out)
    prepare_folder(config, out)

    def images_of(sample_paths: tuple[Sample, list[Path]]) -> list[tuple[str, Any, bytes]]:
        sample, paths = sample_paths
        res = []
        for (stage, view), path in zip(IMAGE_SLOTS, paths, strict=True):
            data = path.read_bytes()
            with Image.open(path) as im:
                img = np.asarray(im.convert("RGB"))
            if img.shape[:2] != (height, width):
                raise UserError(f"{path}: {img.shape[1]}x{img.shape[0]}, expected {width}x{height}")
            res.append((image_name(sample.id, stage, view), img, data))
        return res

    folder_out = shards_dir(out, split)
    done = 0

    def one_more(n: int) -> None:
        nonlocal done
        done += n
        if progress is not None:
            progress(done, len(items))

    for k in range(config.num_shards(split)):
        final = folder_out / shard_name(k)
        chunk = items[k * shard_size : (k + 1) * shard_size]
        if (final / MANIFEST_FILE).is_file():
            one_more(len(chunk))
            continue
        tmp = folder_out / f"{temp_prefix(k)}import"
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        paths = {s.id: p for s, p in chunk}
        write_shard(
            config,
            split,
            k,
            [s for s, _ in chunk],
            lambda s, paths=paths: images_of((s, paths[s.id])),
            tmp,
            one_more,
        )
        publish_shard(tmp, final)
    finish_split(out, split, config)
    return open_dataset(out)
