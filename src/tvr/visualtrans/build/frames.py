"""Stage 1, `frames`: find the episodes and write their keyframes.

Input layouts:

* EgoDex's: INPUT/TASK/N.mp4 with INPUT/TASK/N.hdf5 beside it (one folder per task). The task
  folders taken are the configured scenes (default the release's 12); the others are counted
  and left alone. The HDF5 file's `llm_description` attribute (EgoDex's language annotation
  of the episode) is read where h5py is installed and the file has it; it goes into the prompts.
* A plain folder of videos (*.mp4, *.mov, *.mkv, *.webm) of one task, named by `--task`.

An episode's id is SCENE_N (N the video's stem), as the release names its images.

The keyframe rule: `frames_per_episode` = K frames at the times i / (K - 1) of the span from the
first frame to the last (t = 0 and t = (frames - 1) / fps), i = 0 .. K - 1: start, K - 2
evenly spaced intermediate frames, end. They are saved as SCENE/SCENE_N_start.jpg,
SCENE_N_medium.jpg (K = 3; SCENE_N_medium1.jpg, SCENE_N_medium2.jpg, ... for K > 3) and
SCENE_N_end.jpg under BUILD/frames/images/, resized to `image_size` on the short side.

The stage is a job on `tvr.core.jobs`: one shard per episode (BUILD/frames/shards/EPISODE.json,
its record), the images written atomically before it; a killed run resumes with the episodes
not finished. A video PyAV cannot read is recorded as skipped with the reason, never an error.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError
from tvr.core.jobs import prepare_job_folder, run_shards
from tvr.core.jsonl import read_json, write_json
from tvr.visualtrans.build.config import BuildConfig

VIDEO_SUFFIXES = (".mp4", ".mov", ".mkv", ".webm")
STAGE = "frames"
IMAGES = "images"


@dataclass(frozen=True)
class Episode:
    """One video to take keyframes from."""

    id: str
    scene: str
    number: str
    video: str
    hdf5: str | None


def _number_key(path: Path) -> tuple[int, int | str]:
    return (0, int(path.stem)) if path.stem.isdigit() else (1, path.stem)


def find_episodes(config: BuildConfig) -> tuple[list[Episode], dict[str, int]]:
    """The episodes of the input, in (scene, number) order, and the task folders not taken."""
    root = Path(config.input)
    if not root.is_dir():
        raise UserError(f"--input {root}: no such folder of episodes")
    folders: list[tuple[str, Path]]
    ignored: dict[str, int] = {}
    if config.task is not None:
        folders = [(config.task, root)]
    else:
        folders = []
        for sub in sorted(p for p in root.iterdir() if p.is_dir()):
            if sub.name in config.scenes:
                folders.append((sub.name, sub))
            else:
                ignored[sub.name] = sum(1 for v in sub.iterdir() if v.suffix in VIDEO_SUFFIXES)
        if not folders:
            raise UserError(f"--input {root}: no task folder of the scenes {', '.join(config.scenes)}"
                            " (EgoDex's layout: TASK/N.mp4; a plain folder of videos needs --task)")  # fmt: skip
    episodes = []
    for scene, folder in folders:
        for video in sorted((p for p in folder.iterdir() if p.suffix.lower() in VIDEO_SUFFIXES),
                            key=_number_key):  # fmt: skip
            h5 = video.with_suffix(".hdf5")
            episodes.append(Episode(f"{scene}_{video.stem}", scene, video.stem, str(video),
                                    str(h5) if h5.is_file() else None))  # fmt: skip
    if not episodes:
        raise UserError(f"--input {root}: no videos ({', '.join(VIDEO_SUFFIXES)})")
    return episodes, ignored


def frame_names(episode_id: str, k: int) -> list[tuple[str, str]]:
    """(role, file name) of the K keyframes: start, medium(s), end."""
    middle = ["medium"] if k == 3 else [f"medium{i}" for i in range(1, k - 1)]
    return [(role, f"{episode_id}_{role}.jpg") for role in ["start", *middle, "end"]]


def read_language(hdf5: str | None) -> str | None:
    """EgoDex's language annotation of an episode (the HDF5 attribute `llm_description`), or
    None (no file, no h5py, no such attribute)."""
    if hdf5 is None:
        return None
    try:
        import h5py
    except ImportError:
        return None
    try:
        with h5py.File(hdf5, "r") as f:
            value = f.attrs.get("llm_description")
    except OSError:
        return None
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    return str(value) if value is not None else None


@dataclass
class FramesJob:
    key: str
    episode: Episode


class FramesWorker:
    def __init__(self, config: BuildConfig, out: Path) -> None:
        self.config = config
        self.images = out / STAGE / IMAGES

    def build(self, job: FramesJob, dest: Path, progress: Callable[[int], None]) -> None:
        write_json(dest, self.extract(job.episode))
        progress(1)

    def extract(self, ep: Episode) -> dict[str, Any]:
        from tvr.video.frames import VideoUnavailable, frames_at, probe, write_image

        record: dict[str, Any] = {"episode": ep.id, "scene": ep.scene, "number": ep.number,
                                  "video": ep.video, "hdf5": ep.hdf5,
                                  "language": read_language(ep.hdf5)}  # fmt: skip
        k = self.config.frames_per_episode
        try:
            info = probe(ep.video)
            n = info.n_frames
            if n is None:
                n = max(1, round((info.duration or 0.0) * info.fps))
            last = max(0.0, (n - 1) / info.fps)
            times = [last * i / (k - 1) for i in range(k)]
            images = frames_at(ep.video, times, self.config.image_size)
        except VideoUnavailable as err:
            return {**record, "skipped": err.reason}
        frames = {}
        for (role, name), t, image in zip(frame_names(ep.id, k), times, images, strict=True):
            rel = f"{ep.scene}/{name}"
            write_image(self.images / rel, image, self.config.jpeg_quality)
            frames[role] = {"image": rel, "time": round(t, 4)}
        h, w = images[0].shape[:2]
        return {**record, "fps": info.fps, "frames": frames, "size": [w, h], "skipped": None}

    def close(self) -> None:
        pass


@dataclass
class FramesTask:
    config: BuildConfig
    out: Path
    episodes: list[Episode]

    @property
    def name(self) -> str:
        return f"visualtrans build {self.out} (frames)"

    def plan(self) -> list[str]:
        return [e.id for e in self.episodes]

    def path(self, key: str) -> Path:
        return self.out / STAGE / "shards" / f"{key}.json"

    def is_built(self, key: str) -> bool:
        return self.path(key).is_file()

    def label(self, key: str) -> str:
        return key

    def prepare(self) -> None:
        images = prepare_job_folder(self.out, self.config.to_dict(), f"{STAGE}/{IMAGES}")
        for scene in {e.scene for e in self.episodes}:
            folder = images / scene
            folder.mkdir(parents=True, exist_ok=True)
            for tmp in folder.glob(".*.jpg.*"):  # an image a killed run left half written
                tmp.unlink(missing_ok=True)

    def jobs(self, todo: list[str]) -> Iterator[FramesJob]:
        by_id = {e.id: e for e in self.episodes}
        return (FramesJob(k, by_id[k]) for k in todo)

    def make_worker(self, threads: int | None) -> FramesWorker:
        return FramesWorker(self.config, self.out)


def run_frames(config: BuildConfig, out: Path, workers: int = 1) -> dict[str, Any]:
    """Extract every episode's keyframes (resuming); returns the stage's counts."""
    import av  # noqa: F401  (the video extra: missing, the stage ends before any work)

    episodes, ignored = find_episodes(config)
    task = FramesTask(config, out, episodes)
    run_shards(task, workers=workers)
    records = [read_json(task.path(e.id)) for e in episodes]
    from tvr.core.jsonl import write_jsonl

    write_jsonl(out / STAGE / "episodes.jsonl", records)
    skipped = [r for r in records if r["skipped"]]
    return {"episodes": len(records), "with_keyframes": len(records) - len(skipped),
            "skipped": len(skipped), "skipped_reasons": {r["episode"]: r["skipped"] for r in skipped},
            "with_language": sum(r["language"] is not None for r in records),
            "task_folders_not_taken": ignored,
            "per_scene": _per_scene(records)}  # fmt: skip


def _per_scene(records: list[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in records:
        if not r["skipped"]:
            out[r["scene"]] = out.get(r["scene"], 0) + 1
    return dict(sorted(out.items()))


def episode_records(out: Path) -> list[dict[str, Any]]:
    """The frames stage's records (with keyframes), in order."""
    from tvr.core.jsonl import iter_jsonl

    path = out / STAGE / "episodes.jsonl"
    if not path.is_file():
        raise UserError(f"{out}: the frames stage has not run (no {path})")
    return [r for _, r in iter_jsonl(path) if not r.get("skipped")]


_SAFE = re.compile(r"^[A-Za-z0-9_.-]+$")
