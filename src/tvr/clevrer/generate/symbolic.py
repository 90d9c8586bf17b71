"""The symbolic stage as a `tvr.core.jobs.ShardTask`: physics, events, counterfactual runs, questions.

Shard k is the folder shards/symbolic/shard-0000k/ holding, for each of its videos,
annotation_XXXXX.json, the ground-truth dynamics sim_XXXXX.json (if asked) and the shard's
questions.json (the release's question layout). The questions of a shard are balanced over the
shard's videos in index order (one `Balancer` per shard), so a shard is rebuilt identically
from (config, shard) alone.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tvr.clevrer.data.annotations import annotation_from_video, write_annotation
from tvr.clevrer.data.dynamics import dynamics_from_facts, write_dynamics
from tvr.clevrer.data.layout import annotation_filename, sim_filename, video_filename
from tvr.clevrer.data.questions import write_questions
from tvr.clevrer.generate.config import GenerateConfig
from tvr.clevrer.questions.balance import Balancer
from tvr.clevrer.questions.generate import generate_questions
from tvr.clevrer.world.facts import facts_from_video
from tvr.clevrer.world.video import simulate_video
from tvr.core.manifest import save_config

QUESTIONS_FILE = "questions.json"
#: the third entry of a video's question generator seed (its world uses [seed, index, attempt])
QUESTION_STREAM = 1_000_003


@dataclass(frozen=True)
class Job:
    """One shard to build: a symbolic shard number, or a video index to render."""

    key: int


def shard_folder(out: Path, shard: int) -> Path:
    return out / "shards" / "symbolic" / f"shard-{shard:05d}"


def build_shard(config: GenerateConfig, shard: int, dest: Path, progress: Callable[[int], None]) -> None:
    """Write shard `shard`'s files into the new folder `dest`."""
    dest.mkdir(parents=True)
    balancer = Balancer()
    entries = []
    for index in config.shard_range(shard):
        video = simulate_video(config.seed, index, config.world)
        facts = facts_from_video(video)
        write_annotation(dest / annotation_filename(index), annotation_from_video(video))
        if config.dynamics:
            write_dynamics(dest / sim_filename(index), dynamics_from_facts(facts))
        rng = np.random.default_rng([config.seed, index, QUESTION_STREAM])
        questions = generate_questions(facts, rng, config.questions, balancer)
        entries.append(
            {"scene_index": index, "video_filename": video_filename(index), "questions": questions}
        )
        progress(1)
    write_questions(dest / QUESTIONS_FILE, entries)


@dataclass
class SymbolicWorker:
    config: GenerateConfig

    def build(self, job: Job, dest: Path, progress: Callable[[int], None]) -> None:
        build_shard(self.config, job.key, dest, progress)

    def close(self) -> None:
        pass


@dataclass
class SymbolicTask:
    """`tvr clevrer generate`'s symbolic stage on the job engine (one shard = shard_size videos)."""

    config: GenerateConfig
    out: Path

    @property
    def name(self) -> str:
        return f"clevrer generate {self.out} (symbolic)"

    def plan(self) -> list[int]:
        return list(range(self.config.num_shards))

    def path(self, key: int) -> Path:
        return shard_folder(self.out, key)

    def is_built(self, key: int) -> bool:
        return (self.path(key) / QUESTIONS_FILE).is_file()

    def label(self, key: int) -> str:
        return f"symbolic/shard-{key:05d}"

    def prepare(self) -> None:
        save_config(self.out, self.config.to_dict())
        (self.out / "shards" / "symbolic").mkdir(parents=True, exist_ok=True)

    def jobs(self, todo: list[int]) -> Iterator[Job]:
        yield from (Job(k) for k in todo)

    def make_worker(self, threads: int | None) -> SymbolicWorker:
        return SymbolicWorker(self.config)
