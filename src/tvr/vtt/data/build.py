"""`tvr vtt build`: VTT records and state images from COIN/CrossTask annotations and local videos.

What it makes, in the released layout that `tvr.vtt.data.records` reads (so `tvr vtt stats`
works on the result):

    OUT/config.json          the BuildConfig (compared on a rerun: same options or refuse)
    OUT/meta/vtt.jsonl       one record a sample (written last, from the shard files)
    OUT/states/{id}_{N+1}_{i}.jpg    the N + 1 state images of each sample
    OUT/meta/skipped.jsonl   the samples whose video is missing or broken, with the reason
    OUT/report.json          the counts of the report (sources, drops, videos, splits)
    OUT/shards/shard-00003.jsonl     the job's shards: the records and skips of 50 samples

The rules (the VTT paper's section 3.2; the released layout as in the release of
github.com/hughplay/VTT, `meta/vtt.jsonl` and `states/`):
- One sample per annotated video. Steps are put in time order (by start, then end; the count of
  videos whose source order differed is reported). A video is dropped, counting the first reason
  that holds, when it has no steps ("no steps"), more than `max_steps` = 12 steps ("more than 12
  steps"), or two steps that overlap in time, one starting before another ends ("overlapping
  steps"; steps that only touch are kept).
- State 0 is the frame at the start of step 1, state i the frame at the end of step i (the time ->
  frame rule of `tvr.video.frames.frames_at`: the first frame at or after the time), resized to
  `short_side` = 256 pixels on the short side (bicubic), saved as JPEG (quality 95).
- The id is the first 16 hex digits of sha256("{ori}/{task id}/{youtube id}") (ori "coin" or
  "cross"), so the same annotation gives the same id on every machine and every run.
- Topic: COIN's class split into words, or CrossTask's task title, spelled as the paper's Table 6
  when it lists the topic; category: the topic's Table 6 category ("Unknown", counted, for a
  topic the table lacks): `tvr.vtt.data.taxonomy`.
- Split, `split` = "paper" (default): the paper split "randomly ... at the topic level" with Table
  1's sizes; here each topic's samples (sorted by id) are shuffled with a generator seeded by
  (seed, topic) and the first round(n x 1,352 / 13,547) go to val, the next round(n x 1,436 /
  13,547) to test, the rest to train; so every topic is in every split it is large enough for and
  a sample's split depends only on its topic's annotated samples and the seed, never on which
  videos are on disk. `split` = "source": the source's own split: COIN "training"/"validation"/
  "testing" -> train/val/test; CrossTask videos.csv -> train, videos_val.csv -> test (CrossTask's
  own evaluation set; CrossTask has no third list).
- A video with no file under any `--videos` folder is "missing", one that PyAV cannot read or that
  ends before an annotated time "broken" (`tvr.video.frames.VideoUnavailable`): listed in
  meta/skipped.jsonl with the reason and counted, never an error. A rerun builds again the shards
  whose missing videos have appeared since (a broken one: delete its shard file to retry).

The job runs on `tvr.core.jobs`: a shard is 50 planned samples (in source order: COIN's file
order, then CrossTask's lists), its images written atomically into OUT/states and its shard file
published last, so a killed build resumes with the shards not finished. Nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import itertools
import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tvr.core.errors import UserError
from tvr.core.job_config import JobConfig
from tvr.core.jobs import prepare_job_folder, run_with_bar
from tvr.core.jsonl import iter_jsonl, write_json, write_jsonl
from tvr.core.manifest import check_same_config
from tvr.video.records import Step, VideoRecord
from tvr.vtt.data.records import MAX_TRANSFORMATIONS
from tvr.vtt.data.taxonomy import UNKNOWN_CATEGORY, category_of, topic_name
from tvr.vtt.paper import TABLE1

FORMAT = "tvr.vtt.build/1"
SPLIT_MODES = ("paper", "source")
#: the source subsets -> VTT splits under split = "source"
SOURCE_SPLITS: dict[str, dict[str, str]] = {
    "coin": {"training": "train", "validation": "val", "testing": "test"},
    "cross": {"training": "train", "validation": "test"},
}
#: the reasons a planned sample is dropped, in the order they are checked
DROP_REASONS = ("no steps", f"more than {MAX_TRANSFORMATIONS} steps", "overlapping steps")
RECORDS_FILE = "meta/vtt.jsonl"
SKIPPED_FILE = "meta/skipped.jsonl"
REPORT_FILE = "report.json"
STATES_DIR = "states"
SHARDS_DIR = "shards"


@dataclass(frozen=True)
class BuildConfig(JobConfig):
    """Everything that shapes a built VTT set (saved as config.json; a rerun must match it).

    Args:
        coin: the COIN.json file, or None.
        crosstask: the CrossTask release folder (tasks files, video lists, annotations/), or None.
        seed: seeds the "paper" split.
        split: "paper" (Table 1's proportions within each topic) or "source" (the sources' own).
        short_side: the state images' short side in pixels (the paper's 256).
        max_steps: samples with more steps are dropped (the paper's 12).
        jpeg_quality: of the state images.
        shard_size: planned samples per shard of the job.
    """

    FORMAT_TAG = FORMAT
    OPTION_KIND = "build"

    coin: str | None = None
    crosstask: str | None = None
    seed: int = 0
    split: str = "paper"
    short_side: int = 256
    max_steps: int = MAX_TRANSFORMATIONS
    jpeg_quality: int = 95
    shard_size: int = 50

    def validate(self) -> BuildConfig:
        if self.coin is None and self.crosstask is None:
            raise UserError("give --coin COIN.json, --crosstask DIR or both")
        if self.split not in SPLIT_MODES:
            raise UserError(f"--split must be one of {', '.join(SPLIT_MODES)}, got {self.split!r}")
        if self.short_side < 1:
            raise UserError(f"--short-side must be at least 1, got {self.short_side}")
        if not 1 <= self.max_steps <= MAX_TRANSFORMATIONS:
            raise UserError(f"max_steps must be 1..{MAX_TRANSFORMATIONS}, got {self.max_steps}")
        if not 1 <= self.jpeg_quality <= 100:
            raise UserError(f"jpeg_quality must be 1..100, got {self.jpeg_quality}")
        if self.shard_size < 1:
            raise UserError(f"--shard-size must be at least 1, got {self.shard_size}")
        return self


@dataclass(frozen=True)
class PlannedSample:
    """One sample to extract: its record's fields, the times of its states, and its video file."""

    id: str
    youtube_id: str
    ori: str
    task_id: str
    split: str
    topic: str
    category: str
    steps: tuple[Step, ...]
    duration: float | None
    video: str | None  # the local file, None when no --videos folder has it

    @property
    def state_times(self) -> list[float]:
        """State 0 at the start of step 1, state i at the end of step i."""
        return [self.steps[0].start, *(s.end for s in self.steps)]

    def state_names(self) -> list[str]:
        n = len(self.steps)
        return [f"{self.id}_{n + 1}_{i}.jpg" for i in range(n + 1)]

    def record(self, duration: float | None) -> dict[str, Any]:
        """The released record of this sample (`duration` -1 when unknown)."""
        n = len(self.steps)
        return {
            "id": self.id, "youtube_id": self.youtube_id, "ori": self.ori, "split": self.split,
            "duration": -1 if duration is None else round(float(duration), 3),
            "topic": self.topic, "category": self.category,
            "annotation": [{"clip_id": f"{self.id}_{n}_{i}", "segment": [s.start, s.end],
                            "label": s.label} for i, s in enumerate(self.steps)],
            "state_times": self.state_times,
        }  # fmt: skip


@dataclass
class Plan:
    """What the annotations give, before any video is opened.

    Attributes:
        samples: the kept samples, in source order.
        dropped: reason -> the (ori, youtube id) of each dropped video.
        reordered: the number of kept samples whose steps the source listed out of time order.
        sources: source -> its counts (videos read; CrossTask's unannotated, unknown-task and
            repeated listings).
        unknown_topics: topics not in Table 6 (category "Unknown").
    """

    samples: list[PlannedSample] = field(default_factory=list)
    dropped: dict[str, list[tuple[str, str]]] = field(default_factory=dict)
    reordered: int = 0
    sources: dict[str, dict[str, int]] = field(default_factory=dict)
    unknown_topics: list[str] = field(default_factory=list)


def sample_id(ori: str, task_id: str, youtube_id: str) -> str:
    """The 16-hex id of a sample: sha256("{ori}/{task id}/{youtube id}"), first 16 digits."""
    return hashlib.sha256(f"{ori}/{task_id}/{youtube_id}".encode()).hexdigest()[:16]


def drop_reason(steps: tuple[Step, ...], max_steps: int) -> str | None:
    """Why a video with these steps makes no sample (DROP_REASONS), or None."""
    if not steps:
        return DROP_REASONS[0]
    if len(steps) > max_steps:
        return f"more than {max_steps} steps"
    ordered = sorted(steps, key=lambda s: (s.start, s.end))
    if any(b.start < a.end for a, b in itertools.pairwise(ordered)):
        return DROP_REASONS[2]
    return None


def plan_samples(
    config: BuildConfig,
    videos: list[VideoRecord],
    find_video: Callable[[str], Path | None],
    sources: dict[str, dict[str, int]] | None = None,
) -> Plan:
    """The samples of the annotated videos (COIN's and CrossTask's records), filtered, with their
    topic, category, split and local video file (`find_video(youtube id)`)."""
    plan = Plan(sources=dict(sources or {}))
    kept: list[tuple[VideoRecord, str, tuple[Step, ...]]] = []
    unknown: dict[str, None] = {}
    for video in videos:
        ori = "coin" if video.source == "coin" else "cross"
        reason = drop_reason(video.steps, config.max_steps)
        if reason is not None:
            plan.dropped.setdefault(reason, []).append((ori, video.video_id))
            continue
        steps = tuple(sorted(video.steps, key=lambda s: (s.start, s.end)))
        plan.reordered += steps != video.steps
        kept.append((video, ori, steps))
    splits = _splits(config, [(v, ori) for v, ori, _ in kept])
    for (video, ori, steps), split in zip(kept, splits, strict=True):
        topic = topic_name(video.task)
        category = category_of(topic)
        if category is None:
            unknown[topic] = None
            category = UNKNOWN_CATEGORY
        path = find_video(video.video_id)
        plan.samples.append(PlannedSample(
            id=sample_id(ori, video.task_id, video.video_id), youtube_id=video.video_id,
            ori=ori, task_id=video.task_id, split=split, topic=topic, category=category,
            steps=steps, duration=video.duration, video=None if path is None else str(path),
        ))  # fmt: skip
    plan.unknown_topics = list(unknown)
    return plan


def table1_fractions() -> tuple[float, float]:
    """The val and test shares of Table 1 (1,352 and 1,436 of 13,547 samples)."""
    total = TABLE1["total"]["samples"]
    return TABLE1["val"]["samples"] / total, TABLE1["test"]["samples"] / total


def _splits(config: BuildConfig, videos: list[tuple[VideoRecord, str]]) -> list[str]:
    if config.split == "source":
        out = []
        for video, ori in videos:
            split = SOURCE_SPLITS[ori].get(video.subset)
            if split is None:
                raise UserError(f"{ori} video {video.video_id}: subset {video.subset!r} has no "
                                "VTT split under --split source")  # fmt: skip
            out.append(split)
        return out
    val_share, test_share = table1_fractions()
    by_topic: dict[str, list[int]] = {}
    for i, (video, _) in enumerate(videos):
        by_topic.setdefault(topic_name(video.task), []).append(i)
    ids = [sample_id(ori, v.task_id, v.video_id) for v, ori in videos]
    out = ["train"] * len(videos)
    for topic, members in by_topic.items():
        members.sort(key=lambda i: ids[i])
        salt = int.from_bytes(hashlib.sha256(topic.encode()).digest()[:8], "big")
        order = np.random.default_rng([config.seed, salt]).permutation(len(members))
        n_val = round(len(members) * val_share)
        n_test = round(len(members) * test_share)
        for rank, j in enumerate(order):
            if rank < n_val:
                out[members[j]] = "val"
            elif rank < n_val + n_test:
                out[members[j]] = "test"
    return out


# --- the job -----------------------------------------------------------------------------------
@dataclass
class BuildJob:
    """One shard: its planned samples."""

    key: int
    samples: list[PlannedSample]


class BuildWorker:
    """Extracts the states of a shard's samples into OUT/states and writes the shard file."""

    def __init__(self, config: BuildConfig, out: Path) -> None:
        self.config = config
        self.states = out / STATES_DIR

    def build(self, job: BuildJob, dest: Path, progress: Callable[[int], None]) -> None:
        lines = []
        for sample in job.samples:
            lines.append(self.extract(sample))
            progress(1)
        write_jsonl(dest, lines)

    def extract(self, sample: PlannedSample) -> dict[str, Any]:
        """{"record": ...} with the state images written, or {"skipped": ...} with the reason."""
        from tvr.video.frames import VideoUnavailable, frames_at, probe, write_image

        if sample.video is None:
            return {"skipped": _skip(sample, "missing", "no video file under the --videos folders")}
        try:
            images = frames_at(sample.video, sample.state_times, self.config.short_side)
            duration = sample.duration
            if duration is None:
                duration = probe(sample.video).duration
        except VideoUnavailable as err:
            return {"skipped": _skip(sample, "broken", err.reason)}
        for name, image in zip(sample.state_names(), images, strict=True):
            write_image(self.states / name, image, self.config.jpeg_quality)
        return {"record": sample.record(duration)}

    def close(self) -> None:
        pass


def _skip(sample: PlannedSample, kind: str, reason: str) -> dict[str, Any]:
    return {"id": sample.id, "youtube_id": sample.youtube_id, "ori": sample.ori,
            "video": sample.video, "problem": kind, "reason": reason}  # fmt: skip


@dataclass
class BuildTask:
    """`tvr vtt build` as a `tvr.core.jobs.ShardTask`: shard k is OUT/shards/shard-0000k.jsonl,
    the records and skips of planned samples k x shard_size onwards."""

    config: BuildConfig
    out: Path
    samples: list[PlannedSample]

    @property
    def name(self) -> str:
        return f"vtt build {self.out}"

    def shard(self, key: int) -> list[PlannedSample]:
        size = self.config.shard_size
        return self.samples[key * size : (key + 1) * size]

    def plan(self) -> list[int]:
        return list(range(-(-len(self.samples) // self.config.shard_size)))

    def path(self, key: int) -> Path:
        return self.out / SHARDS_DIR / f"shard-{key:05d}.jsonl"

    def is_built(self, key: int) -> bool:
        """The shard file exists, and none of the videos it found missing has a file now."""
        path = self.path(key)
        if not path.is_file():
            return False
        found_now = {s.id for s in self.shard(key) if s.video is not None}
        for _, line in iter_jsonl(path):
            skipped = line.get("skipped")
            if skipped and skipped["problem"] == "missing" and skipped["id"] in found_now:
                return False
        return True

    def label(self, key: int) -> str:
        return self.path(key).stem

    def prepare(self) -> None:
        # the images of a killed run are half written in OUT/states
        prepare_job_folder(self.out, self.config.to_dict(), STATES_DIR, leftovers=".*.jpg.*")

    def jobs(self, todo: list[int]) -> Iterator[BuildJob]:
        return (BuildJob(k, self.shard(k)) for k in todo)

    def make_worker(self, threads: int | None) -> BuildWorker:
        return BuildWorker(self.config, self.out)


# --- the whole build ---------------------------------------------------------------------------
@dataclass
class BuildResult:
    """What a build made: the output folder, the report (report.json) and the record count."""

    out: Path
    report: dict[str, Any]
    records: int


def read_sources(config: BuildConfig) -> tuple[list[VideoRecord], dict[str, dict[str, int]]]:
    """The annotated videos of the configured sources (COIN first) and their counts."""
    from tvr.video.coin import read_coin
    from tvr.video.crosstask import read_crosstask

    videos: list[VideoRecord] = []
    counts: dict[str, dict[str, int]] = {}
    if config.coin is not None:
        coin = read_coin(config.coin)
        videos.extend(coin)
        counts["coin"] = {"videos": len(coin)}
    if config.crosstask is not None:
        data = read_crosstask(config.crosstask)
        videos.extend(data.videos)
        counts["cross"] = {
            "videos": len(data.videos),
            "listed without annotation": len(data.without_annotation),
            "listed with an unknown task": len(data.unknown_task),
            "listed twice": len(data.repeated),
        }
    return videos, counts


def video_finder(folders: list[str | Path]) -> Callable[[str], Path | None]:
    """Finds a YouTube id's file in the first of `folders` that has one (`tvr.video.sources`)."""
    from tvr.video.sources import VideoFolder

    indexes = [VideoFolder(f) for f in folders]

    def find(video_id: str) -> Path | None:
        for index in indexes:
            path = index.find(video_id)
            if path is not None:
                return path
        return None

    return find


def build(
    config: BuildConfig,
    videos: list[str | Path],
    out: str | Path,
    workers: int = 1,
    progress: bool = True,
) -> BuildResult:
    """Build (or finish) the VTT set of `config` from the video files under `videos` into `out`."""
    config.validate()
    if not videos:
        raise UserError("give at least one --videos folder (the local video files)")
    out = Path(out)
    check_same_config(out, config.to_dict(), what="a VTT build")
    annotated, counts = read_sources(config)
    plan = plan_samples(config, annotated, video_finder(videos), counts)
    import av  # noqa: F401  (the video extra: missing, the command ends before any work)
    task = BuildTask(config, out, plan.samples)
    run_with_bar(task, lambda k: len(task.shard(k)), len(plan.samples),
                 workers=min(workers, os.cpu_count() or 1), desc="extracting states",
                 unit="sample", progress=progress)  # fmt: skip
    records, skipped = [], []
    for key in task.plan():
        for _, line in iter_jsonl(task.path(key)):
            if "record" in line:
                records.append(line["record"])
            else:
                skipped.append(line["skipped"])
    write_jsonl(out / SKIPPED_FILE, skipped)
    write_jsonl(out / RECORDS_FILE, records)
    report = make_report(plan, records, skipped, videos)
    write_json(out / REPORT_FILE, report)
    return BuildResult(out, report, len(records))


def make_report(
    plan: Plan, records: list[dict[str, Any]], skipped: list[dict[str, Any]], videos: list[Any]
) -> dict[str, Any]:
    """The counts of a build: sources, dropped samples by reason, videos, records by split."""
    problems = Counter(s["problem"] for s in skipped)
    return {
        "sources": plan.sources,
        "dropped": {
            reason: len(plan.dropped.get(reason, []))
            for reason in dict.fromkeys([*DROP_REASONS, *plan.dropped])
        },
        "planned": len(plan.samples),
        "reordered": plan.reordered,
        "unknown_topics": plan.unknown_topics,
        "videos": {
            "folders": [str(v) for v in videos],
            "missing": problems["missing"],
            "broken": problems["broken"],
        },
        "records": len(records),
        "splits": dict(Counter(r["split"] for r in records)),
    }


def report_lines(report: dict[str, Any], out: Path) -> list[str]:
    """The report as a few lines of text."""
    names = {"coin": "COIN", "cross": "CrossTask"}
    lines = []
    for source, counts in report["sources"].items():
        extra = ", ".join(f"{k} {v:,}" for k, v in counts.items() if k != "videos" and v)
        lines.append(f"{names[source]}: {counts['videos']:,} videos read"
                     + (f" ({extra})" if extra else ""))  # fmt: skip
    dropped = report["dropped"]
    lines.append(f"dropped {sum(dropped.values()):,}: "
                 + ", ".join(f"{reason} {n:,}" for reason, n in dropped.items()))  # fmt: skip
    lines.append(f"planned {report['planned']:,} samples ({report['reordered']:,} with steps "
                 "re-sorted into time order)")  # fmt: skip
    if report["unknown_topics"]:
        lines.append(f"topics not in Table 6 (category {UNKNOWN_CATEGORY!r}): "
                     + ", ".join(report["unknown_topics"]))  # fmt: skip
    v = report["videos"]
    lines.append(f"videos: {v['missing']:,} missing, {v['broken']:,} broken (skipped; listed in "
                 f"{out / SKIPPED_FILE})")  # fmt: skip
    splits = ", ".join(f"{s} {report['splits'].get(s, 0):,}" for s in ("train", "val", "test"))
    lines.append(f"built {report['records']:,} samples ({splits}) into {out / RECORDS_FILE} and "
                 f"{out / STATES_DIR}/")  # fmt: skip
    return lines
