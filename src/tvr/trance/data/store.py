"""The TRANCE image dataset store: open a folder made by `tvr generate`, check it, read from it.

Layout of a dataset folder DIR:

    DIR/config.json                   the DatasetConfig that made it (tvr.trance.generate.config)
    DIR/<split>/samples.jsonl         all samples of the split, in order (what `tvr evaluate` reads)
    DIR/<split>/split.json            written last: counts, shards, sha256 of samples.jsonl
    DIR/<split>/shards/shard-NNNNN/   one finished shard (renamed into place when complete):
        samples.jsonl                 its samples
        images/{id}-init.C.png ...    full-size PNGs: init.C, fin.L, fin.C, fin.R
        small.npy                     uint8 (n, 4, h, w, 3): the 4 views at the small size
        manifest.json                 counts, shapes, byte sizes and sha256 of every file

A shard is built in `shards/.shard-NNNNN.tmp-*` and renamed when complete, so a folder named
`shard-NNNNN` always was complete once. Opening checks every shard's manifest, the sha256 of its
samples.jsonl, the byte sizes of its small array and the shape in its header; `verify()` also
hashes the small arrays and every PNG. Anything wrong (a half-written or missing shard, a size,
shape or checksum that differs) is a UserError naming the shard and file, and is never read.
"""

from __future__ import annotations

import json
from bisect import bisect_right
from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from tvr.core.errors import UserError
from tvr.core.manifest import sha256_file
from tvr.trance.data.files import read_samples
from tvr.trance.data.sample import Sample, image_name
from tvr.trance.world.vocab import IMAGE_SLOTS

STORE_FORMAT = "tvr.trance.store/1"  # the format field of DIR/config.json
SHARD_FORMAT = "tvr.trance.store.shard/1"
SPLIT_FORMAT = "tvr.trance.store.split/1"
#: the four images of a sample, in the order of the small array's second axis
SLOT_INDEX = {sv: k for k, sv in enumerate(IMAGE_SLOTS)}
SMALL_FILE = "small.npy"
SAMPLES_FILE = "samples.jsonl"
MANIFEST_FILE = "manifest.json"
IMAGES_DIR = "images"


def shard_name(shard: int) -> str:
    return f"shard-{shard:05d}"


def shards_dir(root: Path, split: str) -> Path:
    return Path(root) / split / "shards"


def temp_prefix(shard: int) -> str:
    """Name prefix of a shard's folder while it is being written."""
    return f".{shard_name(shard)}.tmp-"


def _npy_shape(path: Path) -> tuple[tuple[int, ...], str, int]:
    """(shape, dtype, header length) of a .npy file, read from its header alone."""
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        read = (
            np.lib.format.read_array_header_1_0
            if version == (1, 0)
            else np.lib.format.read_array_header_2_0
        )
        shape, fortran, dtype = read(f)
        if fortran:
            raise ValueError("Fortran order")
        return tuple(shape), str(dtype), f.tell()


class Shard:
    """One finished shard folder: its manifest, checked against the files on open."""

    def __init__(self, path: Path, split: str, index: int) -> None:
        self.path = path
        self.split = split
        self.index = index
        mpath = path / MANIFEST_FILE
        if not mpath.is_file():
            raise UserError(
                f"shard {path}: half-written or damaged (no {MANIFEST_FILE}); delete the folder "
                "and rerun `tvr generate` with the same options"
            )
        try:
            self.manifest: dict[str, Any] = json.loads(mpath.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError) as err:
            raise UserError(f"shard {path}: {MANIFEST_FILE} is not valid JSON ({err})") from None
        m = self.manifest
        if m.get("format") != SHARD_FORMAT:
            raise UserError(f"shard {path}: {MANIFEST_FILE} is not a {SHARD_FORMAT} manifest")
        self.count = int(m["count"])
        self.small_shape = tuple(m["small"]["shape"])

    # --- checks ----------------------------------------------------------------------------------
    def _bad(self, file: str, why: str) -> UserError:
        return UserError(
            f"shard {self.path}: {file} is corrupted ({why}); delete the shard folder and rerun "
            "`tvr generate` with the same options to remake it"
        )

    def check(self) -> None:
        """Fast checks on open: samples.jsonl checksum, small array byte size and shape."""
        entry = self.manifest["samples"]
        path = self.path / SAMPLES_FILE
        if not path.is_file():
            raise self._bad(SAMPLES_FILE, "missing")
        if path.stat().st_size != entry["bytes"]:
            raise self._bad(SAMPLES_FILE, f"{path.stat().st_size} bytes, manifest says {entry['bytes']}")
        if sha256_file(path) != entry["sha256"]:
            raise self._bad(SAMPLES_FILE, "sha256 differs from the manifest")
        small = self.manifest["small"]
        spath = self.path / small["file"]
        if not spath.is_file():
            raise self._bad(small["file"], "missing")
        size = spath.stat().st_size
        if size != small["bytes"]:
            raise self._bad(small["file"], f"{size} bytes, manifest says {small['bytes']}")
        try:
            shape, dtype, header = _npy_shape(spath)
        except (ValueError, OSError) as err:
            raise self._bad(small["file"], f"unreadable header: {err}") from None
        if shape != self.small_shape or dtype != "uint8" or shape[0] != self.count:
            raise self._bad(
                small["file"], f"shape {shape} {dtype}, manifest says {self.small_shape} uint8"
            )
        if size != header + int(np.prod(shape)):
            raise self._bad(small["file"], "size does not match its shape")

    def verify(self) -> None:
        """Full check: also the sha256 of the small array and of every PNG."""
        self.check()
        small = self.manifest["small"]
        if sha256_file(self.path / small["file"]) != small["sha256"]:
            raise self._bad(small["file"], "sha256 differs from the manifest")
        files = self.manifest["images"]["files"]
        if len(files) != 4 * self.count:
            raise self._bad(MANIFEST_FILE, f"lists {len(files)} images for {self.count} samples")
        for name, entry in files.items():
            path = self.path / IMAGES_DIR / name
            if not path.is_file():
                raise self._bad(f"{IMAGES_DIR}/{name}", "missing")
            if path.stat().st_size != entry["bytes"] or sha256_file(path) != entry["sha256"]:
                raise self._bad(f"{IMAGES_DIR}/{name}", "size or sha256 differs from the manifest")

    # --- data ------------------------------------------------------------------------------------
    @cached_property
    def samples(self) -> list[Sample]:
        return read_samples(self.path / SAMPLES_FILE)

    @cached_property
    def small(self) -> np.ndarray:
        """The (n, 4, h, w, 3) uint8 small images, memory-mapped read-only."""
        return np.load(self.path / SMALL_FILE, mmap_mode="r")

    def __getstate__(self) -> dict[str, Any]:
        # DataLoader workers get the shard without its caches (a memmap would pickle as a copy)
        state = dict(self.__dict__)
        state.pop("small", None)
        state.pop("samples", None)
        return state


class SplitStore:
    """One split of a dataset: random access to its samples and images."""

    def __init__(self, root: Path, name: str, shards: list[Shard], full_size: tuple[int, int]):
        self.root = Path(root)
        self.name = name
        self._shards = shards
        self._starts = np.cumsum([0] + [s.count for s in shards]).tolist()
        self.full_size = full_size  # (height, width)
        self.small_size = tuple(shards[0].small_shape[2:4]) if shards else (0, 0)

    def __len__(self) -> int:
        return self._starts[-1]

    def __repr__(self) -> str:
        return f"SplitStore({self.name!r}, {len(self)} samples, {len(self._shards)} shards)"

    @property
    def shards(self) -> list[Shard]:
        return list(self._shards)

    @property
    def samples_path(self) -> Path:
        return self.root / self.name / SAMPLES_FILE

    def locate(self, i: int) -> tuple[Shard, int]:
        """(shard, index within it) of sample i; IndexError outside the split."""
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"sample {i} outside split {self.name!r} of {n} samples")
        k = bisect_right(self._starts, i) - 1
        return self._shards[k], i - self._starts[k]

    def sample(self, i: int) -> Sample:
        shard, j = self.locate(i)
        return shard.samples[j]

    def samples(self) -> list[Sample]:
        return [s for shard in self._shards for s in shard.samples]

    @cached_property
    def ids(self) -> list[str]:
        return [s.id for s in self.samples()]

    @cached_property
    def _id_index(self) -> dict[str, int]:
        return {sid: i for i, sid in enumerate(self.ids)}

    def index_of(self, sample_id: str) -> int:
        try:
            return self._id_index[sample_id]
        except KeyError:
            raise KeyError(f"no sample {sample_id!r} in split {self.name!r}") from None

    def image(self, i: int, stage: str, view: str, size: str = "small") -> np.ndarray:
        """uint8 (H, W, 3) image of sample i: "small" from the memory-mapped array (no decoding),
        "full" decoded from its PNG."""
        if (stage, view) not in SLOT_INDEX:
            raise ValueError(f"no image {stage}.{view}: init has C, fin has L, C, R")
        shard, j = self.locate(i)
        if size == "small":
            return shard.small[j, SLOT_INDEX[(stage, view)]]
        if size == "full":
            from PIL import Image

            with Image.open(self.image_path(i, stage, view)) as im:
                return np.asarray(im.convert("RGB"))
        raise ValueError(f"size is 'small' or 'full', got {size!r}")

    def image_path(self, i: int, stage: str, view: str) -> Path:
        shard, j = self.locate(i)
        return shard.path / IMAGES_DIR / image_name(shard.samples[j].id, stage, view)

    def verify(self, progress: Callable[[int], None] | None = None) -> None:
        for shard in self._shards:
            shard.verify()
            if progress:
                progress(shard.count)


class TranceDataset:
    """A dataset folder made by `tvr generate` (or imported from the release)."""

    def __init__(self, root: Path, config: dict[str, Any], splits: dict[str, SplitStore]):
        self.root = Path(root)
        self.config = config
        self.setting: str = config["setting"]
        self._splits = splits

    @property
    def splits(self) -> tuple[str, ...]:
        return tuple(name for name, sp in self._splits.items() if len(sp) > 0)

    def split(self, name: str) -> SplitStore:
        if name not in self.splits:
            raise UserError(
                f"{self.root}: no split {name!r}; this dataset has {', '.join(self.splits)}"
            )
        return self._splits[name]

    def verify(self, progress: Callable[[int], None] | None = None) -> None:
        """Hash every file against the manifests; UserError naming the first bad shard/file."""
        for name in self.splits:
            self._splits[name].verify(progress)

    def __repr__(self) -> str:
        parts = ", ".join(f"{n}={len(self._splits[n])}" for n in self.splits)
        return f"TranceDataset({str(self.root)!r}, {self.setting}, {parts})"


def read_config(root: Path) -> dict[str, Any]:
    path = Path(root) / "config.json"
    if not path.is_file():
        raise UserError(f"{root}: not a tvr dataset (no config.json); make one with `tvr generate`")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise UserError(f"{path}: not valid JSON ({err})") from None


def open_split(root: Path, split: str, expected: int, shard_size: int, check: bool = True):
    """The SplitStore of a finished split; UserError naming any missing, half-written or bad
    shard and a split whose samples.jsonl was not completed."""
    folder = shards_dir(root, split)
    num = -(-expected // shard_size) if expected else 0
    shards = []
    for k in range(num):
        path = folder / shard_name(k)
        if not path.is_dir():
            temps = sorted(folder.glob(temp_prefix(k) + "*")) if folder.is_dir() else []
            if temps:
                raise UserError(
                    f"shard {temps[0]}: half-written (the job was stopped while making it); rerun "
                    "`tvr generate` with the same options to finish the dataset"
                )
            raise UserError(
                f"shard {path}: missing (the dataset is unfinished); rerun `tvr generate` with "
                "the same options to finish it"
            )
        shard = Shard(path, split, k)
        want = min(shard_size, expected - k * shard_size)
        if shard.count != want:
            raise UserError(f"shard {path}: holds {shard.count} samples, the config says {want}")
        if check:
            shard.check()
        shards.append(shard)
    if num:
        info_path = Path(root) / split / "split.json"
        samples_path = Path(root) / split / SAMPLES_FILE
        if not info_path.is_file() or not samples_path.is_file():
            raise UserError(
                f"split {Path(root) / split}: its samples.jsonl was not finished; rerun "
                "`tvr generate` with the same options"
            )
        info = json.loads(info_path.read_text(encoding="utf-8"))
        if check and (
            samples_path.stat().st_size != info["bytes"]
            or sha256_file(samples_path) != info["sha256"]
        ):
            raise UserError(
                f"{samples_path}: corrupted (size or sha256 differs from split.json); rerun "
                "`tvr generate` with the same options to rewrite it"
            )
    return shards


def open_dataset(root: str | Path, check: bool = True) -> TranceDataset:
    """Open a dataset folder. Checks every shard (see the module docstring) unless `check` is
    False; raises UserError naming the first bad shard or file."""
    root = Path(root)
    config = read_config(root)
    if config.get("format") != STORE_FORMAT:
        raise UserError(
            f"{root}: not a tvr image dataset (config.json has no format {STORE_FORMAT!r}; a "
            "`tvr sample` folder holds symbolic samples only); make one with `tvr generate`"
        )
    sizes = config.get("split_sizes") or {}
    shard_size = int(config.get("shard_size", 1))
    full = (int(config.get("image_height", 240)), int(config.get("image_width", 320)))
    splits = {}
    for split, n in sizes.items():
        shards = open_split(root, split, int(n), shard_size, check)
        splits[split] = SplitStore(root, split, shards, full)
    return TranceDataset(root, config, splits)


__all__ = ["IMAGE_SLOTS", "Shard", "SplitStore", "TranceDataset", "open_dataset"]
