"""`tvr tranco build`: COIN.json and a folder of local videos -> the TRANCO dataset layout.

What a sample is (the paper, section 5.1): a COIN video with 2 to 7 annotated steps (configurable);
its steps in time order (by start, stable) are the reference clips; the initial state is the
frame at the start of the first step, the final state the frame at the end of the last step,
both taken with the time rule of `tvr.video.frames` (the first frame at or after the time; an
end at most 1 s past the last frame takes the last frame). Each step clip keeps `frames_per_clip`
frames (3) by seeded sparse temporal sampling (`tvr.video.frames.clip_frame_times`): the clip's
generator is seeded by (seed, clip id), so a clip's frames do not depend on which other clips or
shards there are. Images are scaled to `short_side` pixels on their short side (256) and written
as JPEG. Nothing is downloaded: a video without a local file, or one that cannot be read (broken,
truncated, shorter than its annotation), is listed with its reason in dataset.json
("skipped_videos") and skipped.

The job runs on `tvr.core.jobs`: the eligible videos, in COIN.json's order, are cut into shards
of `shard_size`; shard k is built into DATASET/shards/shard-0000k/ (its images under states/ and
clips/, then records.jsonl) and renamed into place when complete, so a killed build loses only
the shards in progress and a rerun with the same config builds only the missing ones
(`--workers` spawned processes share the shards). Assembly then moves the images into
DATASET/states and DATASET/clips, splits the samples, draws the stored candidate sets and writes
the split files, clips.jsonl and dataset.json (last).

The split (`split_samples`): the paper does not publish how it split TRANCO, and its split is not
COIN's own training/testing subsets (Table 2's test is 1,430 of 11,105 videos, 12.9%; COIN's
testing subset is 2,797 of 11,827, 23.6%), so COIN's subsets are not used (each sample keeps its
COIN subset as a field). tvr splits by video, seeded, stratified by the number of steps: the
samples are ordered by (number of steps, a hash of (seed, video id)) and dealt to the splits in
the proportions of `split_weights` (Table 2's 8,651 / 1,024 / 1,430 by default), so each split
gets its share of every length, and the whole of COIN gives Table 2's sizes exactly.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tvr.core import jobs as engine
from tvr.core.errors import UserError
from tvr.core.job_config import JobConfig
from tvr.core.jsonl import iter_jsonl, write_json, write_jsonl
from tvr.core.manifest import check_same_config, sha256_file
from tvr.tranco.data.candidates import (
    TINY_CANDIDATES,
    check_open_world,
    stable_hash,
    tiny_candidates,
)
from tvr.tranco.data.layout import (
    CLIPS_DIR,
    CLIPS_FILE,
    DATASET_FILE,
    FORMAT,
    SPLITS,
    STATES_DIR,
    clip_id,
    frame_path,
    split_file,
    state_path,
)
from tvr.video.records import Step, VideoRecord

#: Table 2's split sizes (train, val, test): the default proportions of the split
TABLE2_SPLIT = (8651, 1024, 1430)
RECORDS_FILE = "records.jsonl"
SHARDS_DIR = "shards"
#: the stream of the clips' frame draws, apart from the split's hash and the candidates' draws
_FRAME_STREAM = 0x636C6970


@dataclass(frozen=True)
class BuildConfig(JobConfig):
    """How a TRANCO dataset is built from COIN (saved as config.json and in dataset.json).

    Args:
        coin: COIN.json (its absolute path; its sha256 is `coin_sha256`).
        videos: the folder of local video files (`tvr.video.sources.VideoFolder` finds them).
        seed: the clips' frame draws, the split and the tiny candidates.
        min_steps, max_steps: the videos kept (the paper: 2 to 7 steps).
        frames_per_clip: frames kept per step clip (the paper: 3).
        short_side: images are scaled to this many pixels on their short side (VTT's 256).
        jpeg_quality: of every image.
        split_weights: train, val, test proportions (Table 2's sizes by default).
        stratify: deal the splits by number of steps (else by the hash alone).
        tiny_candidates: size of the stored val/test candidate sets (the paper's 100).
        shard_size: videos per shard of the job.
        limit: only the first `limit` eligible videos of COIN.json (None: all).
        coin_sha256: COIN.json's checksum, so a rerun never mixes two annotation files.
    """

    OPTION_KIND = "build"

    coin: str
    videos: str
    seed: int = 0
    min_steps: int = 2
    max_steps: int = 7
    frames_per_clip: int = 3
    short_side: int = 256
    jpeg_quality: int = 95
    split_weights: tuple[float, float, float] = TABLE2_SPLIT
    stratify: bool = True
    tiny_candidates: int = TINY_CANDIDATES
    shard_size: int = 20
    limit: int | None = None
    coin_sha256: str = ""

    def validate(self) -> BuildConfig:
        checks = {
            "min_steps": self.min_steps >= 1,
            "max_steps": self.max_steps >= self.min_steps,
            "frames_per_clip": self.frames_per_clip >= 1,
            "short_side": self.short_side >= 1,
            "jpeg_quality": 1 <= self.jpeg_quality <= 100,
            "split_weights": len(self.split_weights) == 3
            and all(w >= 0 for w in self.split_weights)
            and sum(self.split_weights) > 0,
            "tiny_candidates": self.tiny_candidates >= 1,
            "shard_size": self.shard_size >= 1,
            "limit": self.limit is None or self.limit >= 1,
        }
        bad = [k for k, ok in checks.items() if not ok]
        if bad:
            raise UserError(f"build option '{bad[0]}': bad value {getattr(self, bad[0])!r}")
        return self

    def resolved(self) -> BuildConfig:
        """Absolute paths and COIN.json's checksum filled in (what is saved)."""
        coin = Path(self.coin).resolve()
        if not coin.is_file():
            raise UserError(f"--coin {self.coin}: no such file")
        videos = Path(self.videos).resolve()
        if not videos.is_dir():
            raise UserError(f"--videos {self.videos}: no such folder")
        return _replace(self, coin=str(coin), videos=str(videos), coin_sha256=sha256_file(coin))


def _replace(config: BuildConfig, **changes: Any) -> BuildConfig:
    return BuildConfig(**{**asdict(config), **changes})


# --- one video ---------------------------------------------------------------------------------
def ordered_steps(record: VideoRecord) -> list[Step]:
    """The steps in time order (by start time; ties keep the file's order)."""
    return sorted(record.steps, key=lambda s: s.start)


def clip_rng(seed: int, clip: str) -> np.random.Generator:
    """The generator of one clip's frame draw: from (seed, clip id) alone."""
    return np.random.default_rng([seed, _FRAME_STREAM, stable_hash(clip)])


def extract_sample(
    config: BuildConfig, record: VideoRecord, video: Path
) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, np.ndarray]]:
    """(sample record, clip records, relative path -> image) of one video, read in one pass;
    VideoUnavailable if the video cannot give them."""
    from tvr.video.frames import clip_frame_times, frames_at, probe

    steps = ordered_steps(record)
    info = probe(video)
    ids = [clip_id(record.video_id, i) for i in range(len(steps))]
    times = [
        clip_frame_times(s.start, s.end, config.frames_per_clip, info.fps,
                         clip_rng(config.seed, c), info.n_frames)
        for s, c in zip(steps, ids, strict=True)
    ]  # fmt: skip
    wanted = [steps[0].start, steps[-1].end] + [t for clip in times for t in clip]
    frames = frames_at(video, wanted, config.short_side)
    images = {
        state_path(record.video_id, "initial"): frames[0],
        state_path(record.video_id, "final"): frames[1],
    }
    clips = []
    at = 2
    for i, (step, c) in enumerate(zip(steps, ids, strict=True)):
        paths = [frame_path(c, j) for j in range(config.frames_per_clip)]
        for p in paths:
            images[p] = frames[at]
            at += 1
        clips.append({"id": c, "split": None, "sample": record.video_id, "index": i,
                      "label": step.label, "segment": [step.start, step.end], "frames": paths,
                      "step_id": step.step_id})  # fmt: skip
    sample = {
        "id": record.video_id,
        "clips": ids,
        "initial": state_path(record.video_id, "initial"),
        "final": state_path(record.video_id, "final"),
        "steps": len(ids),
        "task": record.task,
        "domain": "",
        "task_id": record.task_id,
        "subset": record.subset,
    }
    return sample, clips, images


# --- the job on the engine ---------------------------------------------------------------------
@dataclass(frozen=True)
class BuildJob:
    """One shard: its videos, each with its local file (None: no file in the folder)."""

    key: int
    videos: tuple[tuple[VideoRecord, str | None], ...]


class BuildWorker:
    """Builds shards: extracts each video's images into the shard folder, then its records."""

    def __init__(self, config: BuildConfig) -> None:
        self.config = config

    def build(self, job: BuildJob, dest: Path, progress: Callable[[int], None]) -> None:
        from tvr.video.frames import VideoUnavailable, write_image

        dest.mkdir()
        records: list[dict[str, Any]] = []
        for record, video in job.videos:
            if video is None:
                records.append({"id": record.video_id, "skipped": "no local video file"})
                progress(1)
                continue
            try:
                sample, clips, images = extract_sample(self.config, record, Path(video))
            except VideoUnavailable as err:
                records.append({"id": record.video_id, "skipped": err.reason})
                progress(1)
                continue
            for rel, image in images.items():
                write_image(dest / rel, image, self.config.jpeg_quality)
            records.append({"id": record.video_id, "sample": sample, "clips": clips})
            progress(1)
        write_jsonl(dest / RECORDS_FILE, records)

    def close(self) -> None:
        pass


@dataclass
class BuildTask:
    """`tvr tranco build` as a `tvr.core.jobs.ShardTask`: key k is DATASET/shards/shard-0000k,
    finished when its records.jsonl is there; progress counts videos."""

    config: BuildConfig
    out: Path
    videos: list[tuple[VideoRecord, str | None]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"tranco build {self.out}"

    def plan(self) -> list[int]:
        return list(range(-(-len(self.videos) // self.config.shard_size)))

    def shard_videos(self, key: int) -> list[tuple[VideoRecord, str | None]]:
        size = self.config.shard_size
        return self.videos[key * size : (key + 1) * size]

    def path(self, key: int) -> Path:
        return self.out / SHARDS_DIR / f"shard-{key:05d}"

    def is_built(self, key: int) -> bool:
        return (self.path(key) / RECORDS_FILE).is_file()

    def label(self, key: int) -> str:
        return f"shard-{key:05d}"

    def prepare(self) -> None:
        engine.prepare_job_folder(self.out, self.config.to_dict(), SHARDS_DIR)

    def jobs(self, todo: list[int]) -> Iterator[BuildJob]:
        for k in todo:
            yield BuildJob(k, tuple(self.shard_videos(k)))

    def make_worker(self, threads: int | None) -> BuildWorker:
        return BuildWorker(self.config)


# --- the split ---------------------------------------------------------------------------------
def allocate(total: int, weights: Sequence[float]) -> list[int]:
    """`total` split into integer parts proportional to `weights` (largest remainder; ties go to
    the earlier part)."""
    wsum = float(sum(weights))
    quotas = [total * w / wsum for w in weights]
    parts = [int(q) for q in quotas]
    order = sorted(range(len(weights)), key=lambda i: (-(quotas[i] - parts[i]), i))
    for i in order[: total - sum(parts)]:
        parts[i] += 1
    return parts


def split_samples(
    samples: Sequence[tuple[str, int]],
    weights: Sequence[float] = TABLE2_SPLIT,
    seed: int = 0,
    stratify: bool = True,
) -> dict[str, str]:
    """sample id -> "train", "val" or "test" for (sample id, number of steps) pairs.

    The split sizes are `allocate(len(samples), weights)`. The samples are ordered by (steps,
    hash of (seed, id)) (by the hash alone without `stratify`) and dealt in that order: each
    place goes to the split furthest behind its share at that point, so every run of equal
    lengths is split in the weights' proportions (within one sample). The result does not
    depend on the order of `samples`."""
    sizes = allocate(len(samples), weights)
    order = sorted(
        samples,
        key=lambda s: ((s[1] if stratify else 0), stable_hash(f"{seed}/{s[0]}"), s[0]),
    )
    n = len(order)
    dealt = [0] * len(SPLITS)
    out: dict[str, str] = {}
    for j, (sample_id, _) in enumerate(order):
        behind = [sizes[i] * (j + 1) / n - dealt[i] if dealt[i] < sizes[i] else -np.inf
                  for i in range(len(SPLITS))]  # fmt: skip
        pick = int(np.argmax(behind))
        dealt[pick] += 1
        out[sample_id] = SPLITS[pick]
    return out


# --- assembly ----------------------------------------------------------------------------------
@dataclass
class BuildReport:
    """What a build made: counts for the printed report and dataset.json."""

    coin_videos: int = 0
    eligible: int = 0
    out_of_range: int = 0
    built: int = 0
    skipped: list[dict[str, str]] = field(default_factory=list)
    splits: dict[str, int] = field(default_factory=dict)
    clips: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def lines(self) -> list[str]:
        missing = sum(1 for s in self.skipped if s["reason"] == "no local video file")
        out = [
            f"COIN videos: {self.coin_videos}; with the wanted number of steps: {self.eligible} "
            f"({self.out_of_range} others left out)",
            f"built: {self.built} samples; skipped: {len(self.skipped)} videos ({missing} without "
            f"a local file, {len(self.skipped) - missing} unreadable)",
            "split: "
            + ", ".join(
                f"{s} {self.splits.get(s, 0)} samples / {self.clips.get(s, 0)} clips"
                for s in SPLITS
            ),
        ]
        for item in self.skipped[:10]:
            out.append(f"  skipped {item['id']}: {item['reason']}")
        if len(self.skipped) > 10:
            out.append(f"  ... and {len(self.skipped) - 10} more (dataset.json, skipped_videos)")
        return out


def assemble(config: BuildConfig, out: Path, task: BuildTask, report: BuildReport) -> BuildReport:
    """Gather the shards, split, draw the tiny candidates, write the layout (dataset.json last)."""
    samples: list[dict[str, Any]] = []
    clips: dict[str, list[dict[str, Any]]] = {}
    for k in task.plan():
        shard = task.path(k)
        engine.move_shard_folders(shard, out, (STATES_DIR, CLIPS_DIR))
        for _, r in iter_jsonl(shard / RECORDS_FILE):
            if "skipped" in r:
                report.skipped.append({"id": r["id"], "reason": r["skipped"]})
            else:
                samples.append(r["sample"])
                clips[r["id"]] = r["clips"]
    report.built = len(samples)
    split_of = split_samples([(s["id"], s["steps"]) for s in samples], config.split_weights,
                             config.seed, config.stratify)  # fmt: skip
    by_split = {s: [x for x in samples if split_of[x["id"]] == s] for s in SPLITS}
    for split in ("val", "test"):
        tiny = tiny_candidates([(x["id"], x["clips"]) for x in by_split[split]],
                               config.tiny_candidates, config.seed)  # fmt: skip
        for x in by_split[split]:
            x["candidates"] = tiny[x["id"]]
    problems = check_open_world({
        s: [(x["id"], x["clips"], x.get("candidates")) for x in by_split[s]] for s in SPLITS
    })  # fmt: skip
    if problems:  # never expected: clips are named by their video
        raise RuntimeError(f"the split breaks the open world: {problems[0]}")
    (out / STATES_DIR).mkdir(exist_ok=True)
    (out / CLIPS_DIR).mkdir(exist_ok=True)
    clip_records = []
    for split in SPLITS:
        write_jsonl(out / split_file(split), by_split[split])
        for x in by_split[split]:
            for c in clips[x["id"]]:
                clip_records.append({**c, "split": split})
        report.splits[split] = len(by_split[split])
        report.clips[split] = sum(x["steps"] for x in by_split[split])
    write_jsonl(out / CLIPS_FILE, clip_records)
    write_json(out / DATASET_FILE, {
        "format": FORMAT,
        "source": "coin",
        "config": config.to_dict(),
        "frames_per_clip": config.frames_per_clip,
        "splits": report.splits,
        "clips": report.clips,
        "skipped_videos": report.skipped,
        "coin": {"videos": report.coin_videos, "eligible": report.eligible,
                 "out_of_range": report.out_of_range},
        "split_rule": "by video, seeded, stratified by number of steps" if config.stratify
        else "by video, seeded",
    })  # fmt: skip
    return report


def build_dataset(
    config: BuildConfig, out: str | Path, workers: int = 1, progress: bool = True
) -> BuildReport:
    """Build (or finish) the TRANCO dataset of `config` in folder `out`; returns the report."""
    from tvr.video.coin import read_coin
    from tvr.video.sources import VideoFolder

    t0 = time.perf_counter()
    config = config.validate().resolved()
    out = Path(out)
    check_same_config(out, config.to_dict(), what="a TRANCO dataset")
    records = read_coin(config.coin)
    eligible = [r for r in records if config.min_steps <= r.n_steps <= config.max_steps]
    report = BuildReport(len(records), len(eligible), len(records) - len(eligible))
    if config.limit is not None:
        eligible = eligible[: config.limit]
    if not eligible:
        raise UserError(f"{config.coin}: no video with {config.min_steps} to {config.max_steps} "
                        "steps")  # fmt: skip
    folder = VideoFolder(config.videos)
    videos = [(r, str(p) if (p := folder.find(r.video_id)) else None) for r in eligible]
    import av  # noqa: F401  (the video extra: missing, the command ends before any work)
    task = BuildTask(config, out, videos)
    engine.run_with_bar(task, lambda k: len(task.shard_videos(k)), len(videos), workers=workers,
                        desc="tranco build", unit="video", progress=progress)  # fmt: skip
    assemble(config, out, task, report)
    report.seconds = time.perf_counter() - t0
    return report
