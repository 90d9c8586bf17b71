"""Sampled video frames for CNN+LSTM, decoded once into a cache (a resumable job of `core.jobs`).

A video's K frames are the middle frames of K equal segments of its 128 shown frames
(`tvr.video.frames.sample_indices`), read from its mp4 with PyAV and scaled to WIDTH x HEIGHT.
They are cached as one uint8 array (K, HEIGHT, WIDTH, 3) per video in
`CACHE/k<K>-<WIDTH>x<HEIGHT>/video_XXXXX.npy`, each written atomically: a killed build loses
only the videos in progress and a rerun decodes only the missing ones. A missing or unreadable
video is a UserError naming it.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tvr.clevrer.data.layout import find_video
from tvr.clevrer.vocab import FPS, SHOWN_FRAMES
from tvr.core.jobs import run_shards
from tvr.core.jsonl import write_file_bytes


@dataclass(frozen=True)
class FrameSpec:
    """Which frames a cache holds: how many per video, and their size."""

    frames: int
    width: int
    height: int

    @property
    def folder_name(self) -> str:
        return f"k{self.frames}-{self.width}x{self.height}"


def frame_times(frames: int) -> list[float]:
    """The times (s) of the K sampled frames of a 128-frame video at 25 fps."""
    from tvr.video.frames import sample_indices

    return [int(i) / FPS for i in sample_indices(SHOWN_FRAMES, frames)]


def read_frames(video: Path, spec: FrameSpec) -> np.ndarray:
    """(K, H, W, 3) uint8: the sampled frames of one mp4, scaled."""
    from PIL import Image

    from tvr.video.frames import frames_at

    images = frames_at(video, frame_times(spec.frames))
    size = (spec.width, spec.height)
    return np.stack(
        [np.asarray(Image.fromarray(a).resize(size, Image.Resampling.BILINEAR)) for a in images]
    )


@dataclass(frozen=True)
class Job:
    key: int


@dataclass
class FrameWorker:
    data: Path
    spec: FrameSpec

    def build(self, job: Job, dest: Path, progress: Callable[[int], None]) -> None:
        buf = io.BytesIO()
        np.save(buf, read_frames(find_video(self.data, job.key), self.spec))
        write_file_bytes(dest, buf.getvalue())
        progress(1)

    def close(self) -> None:
        pass


@dataclass
class FrameCacheTask:
    """The frame cache of some videos of a set, as a `tvr.core.jobs.ShardTask` (one video a
    shard)."""

    data: Path
    cache: Path
    spec: FrameSpec
    scenes: Sequence[int]

    @property
    def name(self) -> str:
        return f"clevrer frames {self.folder}"

    @property
    def folder(self) -> Path:
        return self.cache / self.spec.folder_name

    def plan(self) -> list[int]:
        return sorted(set(self.scenes))

    def path(self, key: int) -> Path:
        return self.folder / f"video_{key:05d}.npy"

    def is_built(self, key: int) -> bool:
        return self.path(key).is_file()

    def label(self, key: int) -> str:
        return f"video {key}"

    def prepare(self) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)

    def jobs(self, todo: list[int]) -> Iterator[Job]:
        yield from (Job(k) for k in todo)

    def make_worker(self, threads: int | None) -> FrameWorker:
        return FrameWorker(self.data, self.spec)


def build_frame_cache(
    data: str | Path,
    cache: str | Path,
    spec: FrameSpec,
    scenes: Sequence[int],
    workers: int = 1,
    progress: bool = True,
) -> Path:
    """Decode the frames of `scenes` not cached yet; returns the cache's folder."""
    from tqdm import tqdm

    task = FrameCacheTask(Path(data), Path(cache), spec, scenes)
    todo = [k for k in task.plan() if not task.is_built(k)]
    with tqdm(
        total=len(todo), disable=not progress or not todo, unit="video", desc="decoding frames"
    ) as bar:
        run_shards(task, todo, workers=workers, progress=bar.update)
    return task.folder


def load_frames(folder: Path, scene_index: int) -> np.ndarray:
    return np.load(folder / f"video_{scene_index:05d}.npy")
