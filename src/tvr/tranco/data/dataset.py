"""Read and check a TRANCO dataset folder (dataset.json, the split files, clips.jsonl, the images).

`open_dataset(DATASET)` reads the layout of `tvr.tranco.data.layout` (docs/tranco.md has every
field) and checks it; the first problem raises an InputError naming the file, the line and the
field, e.g. `DATASET/test.jsonl, line 4, field 'clips[1]': clip 'abc_1' is a train clip`.

What is checked:
- dataset.json: the format tag, the source, frames_per_clip, the split and clip counts against
  the files, the skipped videos' entries;
- each split file: id (unique in the dataset), clips (at least one, no repeats), steps = the
  number of clips, initial/final paths, task and domain strings, candidates (val and test: at
  least the sample's clips, no repeats; train: none);
- clips.jsonl: unique ids, the split, the sample and its step index, label, segment,
  frames_per_clip frame paths;
- across files: each sample's clips are in clips.jsonl, belong to the sample's split and name
  it with the right index; each candidate is a clip of the same split; every clip belongs to a
  sample; so no val/test clip is ever a training clip;
- with `check_images` (default), that each image file exists (one stat per file, no decoding).

Paths are relative to the dataset folder, "/"-separated, without "..".
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import orjson

from tvr.core.errors import InputError, UserError
from tvr.core.jsonl import iter_jsonl
from tvr.tranco.data.layout import CLIPS_FILE, DATASET_FILE, FORMAT, SOURCES, SPLITS, split_file


@dataclass(frozen=True)
class TrancoSample:
    """One sample of a split file: the ordered step clips between two state images.

    Attributes:
        id: the sample id (COIN: the YouTube id).
        split: "train", "val" or "test".
        clips: the reference step clips, in order.
        initial, final: the state images, relative to the dataset folder.
        task, domain: what the process is (COIN: the task's name; domain may be "").
        candidates: the stored tiny candidate set (val/test), None for train.
        line: the sample's line in its split file.
        extra: the line's other fields (the builder's "task_id", "subset", ...).
    """

    id: str
    split: str
    clips: tuple[str, ...]
    initial: str
    final: str
    task: str
    domain: str
    candidates: tuple[str, ...] | None = None
    line: int = 0
    extra: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def steps(self) -> int:
        """The number of step clips."""
        return len(self.clips)


@dataclass(frozen=True)
class TrancoClip:
    """One step clip of clips.jsonl.

    Attributes:
        id: unique in the dataset (`<sample id>_<index>`).
        split, sample, index: where it belongs: its sample's split, its sample, its step index.
        label: what happens in it (COIN's step description).
        segment: [start, end] in seconds in the source video.
        frames: the frame images, relative to the dataset folder.
        line: its line in clips.jsonl.
        extra: the line's other fields.
    """

    id: str
    split: str
    sample: str
    index: int
    label: str
    segment: tuple[float, float]
    frames: tuple[str, ...]
    line: int = 0
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


@dataclass
class TrancoDataset:
    """A checked TRANCO dataset: its description, samples per split and clips by id."""

    root: Path
    info: dict[str, Any]
    samples: dict[str, list[TrancoSample]]
    clips: dict[str, TrancoClip]

    @property
    def source(self) -> str:
        return str(self.info["source"])

    @property
    def frames_per_clip(self) -> int:
        return int(self.info["frames_per_clip"])

    @property
    def config(self) -> dict[str, Any]:
        return dict(self.info.get("config") or {})

    def split(self, name: str) -> list[TrancoSample]:
        """The samples of a split, in file order."""
        if name not in self.samples:
            raise UserError(f"{self.root}: no split {name!r} (splits: {', '.join(self.samples)})")
        return self.samples[name]

    def path(self, relative: str) -> Path:
        """An image path of the files, on this machine."""
        return self.root / relative

    def clips_of(self, split: str) -> list[TrancoClip]:
        """The clips of a split, in sample order: the "full" candidate set."""
        return [self.clips[c] for s in self.split(split) for c in s.clips]

    def frames(self, clip_id: str) -> list[Path]:
        """The frame files of a clip."""
        return [self.path(f) for f in self.clips[clip_id].frames]

    def __iter__(self) -> Iterator[TrancoSample]:
        for split in self.samples:
            yield from self.samples[split]


def open_dataset(root: str | Path, check_images: bool = True) -> TrancoDataset:
    """Read and check the dataset in folder `root` (InputError at the first problem)."""
    root = Path(root)
    if root.is_file():
        raise UserError(f"{root}: is a file; a TRANCO dataset is a folder (with dataset.json)")
    if not root.is_dir():
        raise UserError(f"{root}: no such folder (a TRANCO dataset)")
    info = read_info(root / DATASET_FILE)
    fpc = int(info["frames_per_clip"])
    samples = {split: _read_split(root / split_file(split), split) for split in SPLITS}
    owner: dict[str, tuple[Path, int]] = {}
    for split, items in samples.items():
        for s in items:
            if s.id in owner:
                path, line = owner[s.id]
                raise InputError(root / split_file(split), s.line, "id",
                                 f"sample {s.id!r} is also on line {line} of {path.name}")  # fmt: skip
            owner[s.id] = (root / split_file(split), s.line)
    clips = _read_clips(root / CLIPS_FILE, fpc)
    _cross_check(root, samples, clips)
    _check_counts(root / DATASET_FILE, info, samples, clips)
    if check_images:
        _check_images(root, samples, clips)
    return TrancoDataset(root, info, samples, clips)


# --- dataset.json ------------------------------------------------------------------------------
def read_info(path: Path) -> dict[str, Any]:
    """dataset.json, its fields checked (not yet against the other files)."""
    if not path.is_file():
        raise UserError(f"{path}: no such file (a TRANCO dataset has dataset.json)")
    try:
        info = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as err:
        raise InputError(path, err.lineno, None, f"not valid JSON ({err.msg})") from None
    if not isinstance(info, dict):
        raise InputError(path, None, None, "expected a JSON object")
    if info.get("format") != FORMAT:
        raise InputError(
            path, None, "format", f"expected {FORMAT!r}, got {_shown(info.get('format'))}"
        )
    if info.get("source") not in SOURCES:
        raise InputError(path, None, "source",
                         f"expected one of {', '.join(SOURCES)}, got {_shown(info.get('source'))}")  # fmt: skip
    fpc = info.get("frames_per_clip")
    if not _is_int(fpc) or fpc < 1:
        raise InputError(
            path, None, "frames_per_clip", f"expected an integer >= 1, got {_shown(fpc)}"
        )
    if not isinstance(info.get("config", {}), dict):
        raise InputError(
            path, None, "config", f"expected an object, got {_shown(info.get('config'))}"
        )
    for key in ("splits", "clips"):
        counts = info.get(key)
        if not isinstance(counts, dict) or set(counts) != set(SPLITS):
            raise InputError(path, None, key,
                             f"expected counts of {', '.join(SPLITS)}, got {_shown(counts)}")  # fmt: skip
        for split, n in counts.items():
            if not _is_int(n) or n < 0:
                raise InputError(path, None, f"{key}.{split}", f"expected a count, got {_shown(n)}")
    skipped = info.get("skipped_videos", [])
    if not isinstance(skipped, list):
        raise InputError(path, None, "skipped_videos", f"expected a list, got {_shown(skipped)}")
    for i, item in enumerate(skipped):
        if not (isinstance(item, dict) and isinstance(item.get("id"), str)
                and isinstance(item.get("reason"), str)):  # fmt: skip
            raise InputError(path, None, f"skipped_videos[{i}]",
                             f'expected {{"id": str, "reason": str}}, got {_shown(item)}')  # fmt: skip
    return info


def _check_counts(path: Path, info: dict[str, Any], samples, clips) -> None:
    for split in SPLITS:
        n = len(samples[split])
        if info["splits"][split] != n:
            raise InputError(path, None, f"splits.{split}",
                             f"says {info['splits'][split]}, {split_file(split)} holds {n}")  # fmt: skip
        m = sum(1 for c in clips.values() if c.split == split)
        if info["clips"][split] != m:
            raise InputError(path, None, f"clips.{split}",
                             f"says {info['clips'][split]}, {CLIPS_FILE} holds {m}")  # fmt: skip


# --- split files -------------------------------------------------------------------------------
def _read_split(path: Path, split: str) -> list[TrancoSample]:
    if not path.is_file():
        raise UserError(f"{path}: no such file (the {split} split of the dataset)")
    known = {"id", "clips", "initial", "final", "steps", "task", "domain", "candidates"}
    out: list[TrancoSample] = []
    for line, r in iter_jsonl(path):
        if not isinstance(r, dict):
            raise InputError(path, line, None, f"expected a JSON object, got {_shown(r)}")
        sample_id = _string(r, "id", path, line)
        clips = _ids(r, "clips", path, line)
        if not clips:
            raise InputError(path, line, "clips", "a sample needs at least one clip")
        steps = r.get("steps")
        if not _is_int(steps) or steps != len(clips):
            raise InputError(path, line, "steps",
                             f"expected {len(clips)} (the number of clips), got {_shown(steps)}")  # fmt: skip
        initial = _relative(r, "initial", path, line)
        final = _relative(r, "final", path, line)
        task = _string(r, "task", path, line)
        domain = r.get("domain")
        if not isinstance(domain, str):
            raise InputError(path, line, "domain", f"expected a string, got {_shown(domain)}")
        candidates = None
        if split == "train":
            if r.get("candidates") is not None:
                raise InputError(path, line, "candidates", "training samples store no candidates "
                                 "(they are drawn per epoch)")  # fmt: skip
        else:
            if r.get("candidates") is None:
                raise InputError(path, line, "candidates",
                                 f"a {split} sample needs its stored candidate set")  # fmt: skip
            candidates = _ids(r, "candidates", path, line)
            listed = set(candidates)
            absent = [c for c in clips if c not in listed]
            if absent:
                raise InputError(path, line, "candidates",
                                 f"the sample's clip {absent[0]!r} is not a candidate")  # fmt: skip
        extra = {k: v for k, v in r.items() if k not in known}
        out.append(TrancoSample(sample_id, split, clips, initial, final, task, domain,
                                candidates, line, extra))  # fmt: skip
    return out


# --- clips.jsonl -------------------------------------------------------------------------------
def _read_clips(path: Path, fpc: int) -> dict[str, TrancoClip]:
    if not path.is_file():
        raise UserError(f"{path}: no such file (the clips of the dataset)")
    known = {"id", "split", "sample", "index", "label", "segment", "frames"}
    out: dict[str, TrancoClip] = {}
    for line, r in iter_jsonl(path):
        if not isinstance(r, dict):
            raise InputError(path, line, None, f"expected a JSON object, got {_shown(r)}")
        clip_id = _string(r, "id", path, line)
        if clip_id in out:
            raise InputError(
                path, line, "id", f"clip {clip_id!r} is also on line {out[clip_id].line}"
            )
        split = r.get("split")
        if split not in SPLITS:
            raise InputError(path, line, "split",
                             f"expected one of {', '.join(SPLITS)}, got {_shown(split)}")  # fmt: skip
        sample = _string(r, "sample", path, line)
        index = r.get("index")
        if not _is_int(index) or index < 0:
            raise InputError(
                path, line, "index", f"expected a step index >= 0, got {_shown(index)}"
            )
        label = r.get("label")
        if not isinstance(label, str):
            raise InputError(path, line, "label", f"expected a string, got {_shown(label)}")
        seg = r.get("segment")
        if not (isinstance(seg, list) and len(seg) == 2 and all(_is_number(x) for x in seg)
                and 0 <= seg[0] <= seg[1]):  # fmt: skip
            raise InputError(path, line, "segment",
                             f"expected [start, end] with 0 <= start <= end, got {_shown(seg)}")  # fmt: skip
        frames = r.get("frames")
        if not isinstance(frames, list) or len(frames) != fpc:
            raise InputError(path, line, "frames",
                             f"expected a list of {fpc} frame paths (frames_per_clip), got "
                             f"{_shown(frames)}")  # fmt: skip
        paths = tuple(_path_value(f, f"frames[{j}]", path, line) for j, f in enumerate(frames))
        extra = {k: v for k, v in r.items() if k not in known}
        out[clip_id] = TrancoClip(clip_id, split, sample, index, label,
                                  (float(seg[0]), float(seg[1])), paths, line, extra)  # fmt: skip
    return out


def _cross_check(root: Path, samples: dict[str, list[TrancoSample]], clips) -> None:
    used: set[str] = set()
    for split, items in samples.items():
        path = root / split_file(split)
        for s in items:
            for i, c in enumerate(s.clips):
                clip = clips.get(c)
                if clip is None:
                    raise InputError(
                        path, s.line, f"clips[{i}]", f"clip {c!r} is not in {CLIPS_FILE}"
                    )
                if clip.split != split:
                    raise InputError(path, s.line, f"clips[{i}]",
                                     f"clip {c!r} is a {clip.split} clip ({CLIPS_FILE} line "
                                     f"{clip.line}), the sample is in {split}")  # fmt: skip
                if clip.sample != s.id or clip.index != i:
                    raise InputError(root / CLIPS_FILE, clip.line, "sample" if clip.sample != s.id
                                     else "index", f"clip {c!r} is step {i} of sample {s.id!r} "
                                     f"({split_file(split)} line {s.line}), the line says step "
                                     f"{clip.index} of {clip.sample!r}")  # fmt: skip
                used.add(c)
            for i, c in enumerate(s.candidates or ()):
                clip = clips.get(c)
                if clip is None:
                    raise InputError(path, s.line, f"candidates[{i}]",
                                     f"clip {c!r} is not in {CLIPS_FILE}")  # fmt: skip
                if clip.split != split:
                    raise InputError(path, s.line, f"candidates[{i}]",
                                     f"clip {c!r} is a {clip.split} clip, the sample is in {split}")  # fmt: skip
    for clip in clips.values():
        if clip.id not in used:
            raise InputError(root / CLIPS_FILE, clip.line, "sample",
                             f"clip {clip.id!r} is no step of any sample of {split_file(clip.split)}")  # fmt: skip


def _check_images(root: Path, samples: dict[str, list[TrancoSample]], clips) -> None:
    for split, items in samples.items():
        for s in items:
            for name in ("initial", "final"):
                rel = getattr(s, name)
                if not os.path.isfile(root / rel):
                    raise InputError(root / split_file(split), s.line, name, f"no such file: {rel}")
    for clip in clips.values():
        for j, rel in enumerate(clip.frames):
            if not os.path.isfile(root / rel):
                raise InputError(
                    root / CLIPS_FILE, clip.line, f"frames[{j}]", f"no such file: {rel}"
                )


# --- fields ------------------------------------------------------------------------------------
def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))  # fmt: skip


def _string(r: dict[str, Any], key: str, path: Path, line: int) -> str:
    value = r.get(key)
    if not isinstance(value, str) or not value:
        raise InputError(path, line, key, f"expected a non-empty string, got {_shown(value)}")
    return value


def _ids(r: dict[str, Any], key: str, path: Path, line: int) -> tuple[str, ...]:
    value = r.get(key)
    if not isinstance(value, list):
        raise InputError(path, line, key, f"expected a list of clip ids, got {_shown(value)}")
    seen: set[str] = set()
    for i, c in enumerate(value):
        if not isinstance(c, str) or not c:
            raise InputError(path, line, f"{key}[{i}]", f"expected a clip id, got {_shown(c)}")
        if c in seen:
            raise InputError(path, line, f"{key}[{i}]", f"clip {c!r} is listed twice")
        seen.add(c)
    return tuple(value)


def _relative(r: dict[str, Any], key: str, path: Path, line: int) -> str:
    return _path_value(r.get(key), key, path, line)


def _path_value(value: Any, field_name: str, path: Path, line: int) -> str:
    if not isinstance(value, str) or not value:
        raise InputError(
            path, line, field_name, f"expected a relative file path, got {_shown(value)}"
        )
    p = PurePosixPath(value)
    if p.is_absolute() or ".." in p.parts or "\\" in value:
        raise InputError(path, line, field_name,
                         f"expected a path inside the dataset folder (relative, '/', no '..'), "
                         f"got {value!r}")  # fmt: skip
    return value


def _shown(value: Any) -> str:
    if value is None:
        return "nothing"
    text = orjson.dumps(value, default=str).decode()
    return text if len(text) <= 60 else text[:57] + "..."
