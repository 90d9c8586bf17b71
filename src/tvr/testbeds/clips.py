"""TRANCE clips: a TRANCO testbed rendered from TRANCE Event samples, with an open-world split.

Each sample is a TRANCE Event sample drawn by TRANCE's balanced sampler
(`tvr.trance.sampling.sampler.ShardSampler`, `min_steps` to `max_steps` steps, 2 to 4 by
default: TRANCE has 1 to 4 steps, TRANCO 2 to 7, and one-step samples are left out so that every
sample is a sequence). Its images come from the centre camera with the raster renderer of
`tvr.trance.render` (OpenGL through EGL; Mesa's llvmpipe on a CPU):

- the initial and the final state images (`width` x `height`, TRANCE's training size 160x120 by
  default);
- one clip per atomic transformation, `frames_per_clip` frames (3) of the change happening at
  times t in (0, 1) of the step: the object slides from its old to its new position (a move in
  from or out to the invisible area follows the object along the stretch of its path inside the
  visible area, from where it enters to its new place or from its place to where it leaves, as
  TRANCE draws no object outside that area: so every frame shows the object, although the state
  before a move in and the state after a move out do not), its colour blends in linear RGB, its
  size grows or shrinks, and a new material or shape cross-fades (the images before and after
  the step, blended). Sliding objects may pass through others; nothing else in the scene moves.

Frame times (`frame_times`): "sparse" (default) draws one t uniformly from each of the
`frames_per_clip` equal parts of (0, 1) with a generator seeded by (seed, clip id), like the
sparse temporal sampling of TRANCO's real clips; "even" takes t = j / (F - 1), so the first and
last frames are the states before and after the step (but for a move in or out, see above).

The open-world split: a transformation's type is (its value, the shape of its object before
the step), e.g. ("color.red", "cylinder"). For every value one shape is held out, drawn with the
seed (among the shapes the value can apply to: "shape.cube" never applies to a cube), so 33 of
the 96 possible types are held out. Training samples use only the other types; validation and
test samples use only held-out types (the sampler refuses any other step, like CLEVR-CoGenT's
condition B). So no test transformation type ever occurs in training, while each held-out value
and each shape does occur there, in other combinations: a model must compose them. Sample ids
are `<split><index:05d>`, clip ids `<sample id>_<step index>`, so no clip is in two splits.

The output is the TRANCO dataset layout (`tvr.tranco.data.layout`, whose names and paths it
imports; docs/tranco.md) as plain JSON lines and JPEG files. The stored tiny candidate sets
of val and test come from the `candidates` function that the caller passes (`tvr tranco testbed`
passes `tvr.tranco.data.candidates.tiny_candidates`). The job runs on `tvr.core.jobs`: shard
(split, k) is a folder DATASET/shards/<split>-0000k/ built at a temporary path and renamed into
place, so a killed run loses only the shards in progress and a rerun builds the missing ones;
a shard's samples come from (seed, split, k) alone (balance counts per shard), so one process or
several (`workers`) make the same files.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from tvr.core import jobs as engine
from tvr.core.errors import UserError
from tvr.core.extras import missing_extra
from tvr.core.job_config import JobConfig
from tvr.core.jsonl import iter_jsonl, read_json, write_json, write_jsonl
from tvr.core.manifest import check_same_config
from tvr.render.scene import SceneDescription, SceneObject
from tvr.trance.data.sample import Sample
from tvr.trance.render.scene import build_scene, scene_object
from tvr.trance.sampling.sampler import SamplerConfig, ShardSampler
from tvr.trance.world import simulator as world
from tvr.trance.world import vocab
from tvr.trance.world.camera import CAMERA_BASE
from tvr.tranco.data.layout import (
    CLIPS_DIR,
    CLIPS_FILE,
    DATASET_FILE,
    SPLITS,
    STATES_DIR,
    clip_id,
    frame_path,
    split_file,
    state_path,
)
from tvr.tranco.data.layout import FORMAT as LAYOUT_FORMAT

FRAME_TIMES = ("sparse", "even")
RECORDS_FILE = "records.jsonl"
#: a shard's wall and CPU seconds, kept apart so that records.jsonl is the same on every run
TIMING_FILE = "timing.json"
SHARDS_DIR = "shards"
VIEW = "C"
#: generator streams: the held-out types, the clips' frame times
_HELD_OUT_STREAM = 0x686F
_TIMES_STREAM = 0x7469

CandidateSets = Callable[[Sequence[tuple[str, Sequence[str]]], int, int], dict[str, list[str]]]


@dataclass(frozen=True)
class ClipsConfig(JobConfig):
    """A TRANCE-clips testbed (saved as config.json and in dataset.json).

    Args:
        sizes: samples of train, val and test.
        seed: the samples, the held-out types, the frame times and the candidate sets.
        min_steps, max_steps: steps per sample (TRANCE allows 1 to 4).
        frames_per_clip: frames rendered per step clip.
        width, height: the image size (TRANCE's training size 160x120 by default).
        frame_times: "sparse" (seeded, one per part of the step) or "even" (0 .. 1).
        preset: the raster renderer's quality preset ("preview", "default").
        jpeg_quality: of every image.
        tiny_candidates: size of the stored val/test candidate sets (TRANCO's 100).
        shard_size: samples per shard of the job.
    """

    OPTION_KIND = "testbed"

    sizes: tuple[int, int, int] = (47, 5, 8)  # 60 in Table 2's proportions
    seed: int = 0
    min_steps: int = 2
    max_steps: int = 4
    frames_per_clip: int = 3
    width: int = 160
    height: int = 120
    frame_times: str = "sparse"
    preset: str = "default"
    jpeg_quality: int = 95
    tiny_candidates: int = 100
    shard_size: int = 10

    def validate(self) -> ClipsConfig:
        checks = {
            "sizes": len(self.sizes) == 3
            and all(n >= 0 for n in self.sizes)
            and self.sizes[0] >= 1,
            "min_steps": 1 <= self.min_steps <= vocab.MAX_STEPS,
            "max_steps": self.min_steps <= self.max_steps <= vocab.MAX_STEPS,
            "frames_per_clip": self.frames_per_clip >= 1,
            "width": self.width >= 8,
            "height": self.height >= 8,
            "frame_times": self.frame_times in FRAME_TIMES,
            "jpeg_quality": 1 <= self.jpeg_quality <= 100,
            "tiny_candidates": self.tiny_candidates >= 1,
            "shard_size": self.shard_size >= 1,
        }
        bad = [k for k, ok in checks.items() if not ok]
        if bad:
            raise UserError(f"testbed option '{bad[0]}': bad value {getattr(self, bad[0])!r}")
        from tvr.trance.render.presets import PRESETS

        if self.preset not in PRESETS:
            raise UserError(f"testbed option 'preset': expected one of {', '.join(PRESETS)}, "
                            f"got {self.preset!r}")  # fmt: skip
        return self

    def sampler(self) -> SamplerConfig:
        return SamplerConfig(min_steps=self.min_steps, max_steps=self.max_steps)

    def split_seed(self, split: str) -> int:
        """The sampler seed of a split."""
        return 3 * self.seed + SPLITS.index(split)

    def shards(self) -> list[tuple[str, int]]:
        """(split, k) of every shard, splits in order."""
        return [
            (split, k)
            for split, n in zip(SPLITS, self.sizes, strict=True)
            for k in range(-(-n // self.shard_size))
        ]

    def shard_range(self, split: str, k: int) -> range:
        """The split's sample indices of shard k."""
        n = self.sizes[SPLITS.index(split)]
        return range(k * self.shard_size, min(n, (k + 1) * self.shard_size))


# --- the open-world rule -----------------------------------------------------------------------
def held_out_types(seed: int) -> frozenset[tuple[int, int]]:
    """The held-out (value index, shape index) types: one shape per value, drawn with `seed`
    among the shapes the value applies to."""
    rng = np.random.default_rng([seed, _HELD_OUT_STREAM])
    out = set()
    for value in range(vocab.NUM_VALUES):
        shapes = [s for s in range(len(vocab.SHAPES)) if not _is_noop(value, s)]
        out.add((value, shapes[int(rng.integers(len(shapes)))]))
    return frozenset(out)


def _is_noop(value: int, shape: int) -> bool:
    """A shape value applied to an object of that shape changes nothing."""
    return vocab.VALUES[value] == f"shape.{vocab.SHAPES[shape]}"


def type_name(value: int, shape: int) -> str:
    """A type as the files write it: "color.red/cylinder"."""
    return f"{vocab.VALUES[value]}/{vocab.SHAPES[shape]}"


def step_types(sample: Sample) -> list[tuple[int, int]]:
    """(value, shape of the object before the step) of each step of a sample."""
    state = world.objects_to_array(sample.objects)
    out = []
    for step in sample.steps:
        out.append((step.value, int(state[step.obj, world.COL_SHAPE])))
        state, _ = world.apply_step(state, step.obj, step.value)
    return out


class OpenWorldSampler(ShardSampler):
    """TRANCE's balanced sampler that refuses every step whose type is not `allowed`."""

    def __init__(
        self,
        config: SamplerConfig,
        seed: int,
        shard: int,
        held_out: frozenset[tuple[int, int]],
        use_held_out: bool,
    ) -> None:
        super().__init__(config, seed, shard)
        self.held_out = held_out
        self.use_held_out = use_held_out

    def _try(self, att, obj, value, move_type, old_area):  # type: ignore[no-untyped-def]
        kind = (value, int(att.state[obj, world.COL_SHAPE]))
        if (kind in self.held_out) != self.use_held_out:
            return None
        return super()._try(att, obj, value, move_type, old_area)


def shard_samples(config: ClipsConfig, split: str, k: int) -> list[Sample]:
    """The samples of shard k of a split, from (seed, split, k) alone; ids `<split><index:05d>`."""
    sampler = OpenWorldSampler(
        config.sampler(), config.split_seed(split), k, held_out_types(config.seed), split != "train"
    )
    samples = []
    for j, index in enumerate(config.shard_range(split, k)):
        s = sampler.sample(j)
        s.id = f"{split}{index:05d}"
        samples.append(s)
    return samples


# --- frames ------------------------------------------------------------------------------------
def frame_times(config: ClipsConfig, clip: str) -> list[float]:
    """The step times t in [0, 1] of a clip's frames."""
    f = config.frames_per_clip
    if config.frame_times == "even":
        return [j / (f - 1) for j in range(f)] if f > 1 else [0.5]
    digest = int.from_bytes(hashlib.sha256(clip.encode()).digest()[:8], "big") >> 1
    rng = np.random.default_rng([config.seed, _TIMES_STREAM, digest])
    return [(j + float(rng.uniform())) / f for j in range(f)]


def _lerp(a: Sequence[float], b: Sequence[float], t: float) -> tuple[float, ...]:
    return tuple((1.0 - t) * x + t * y for x, y in zip(a, b, strict=True))


def _moving_object(before: dict[str, Any], after: dict[str, Any], index: int, t: float,
                   attr: str) -> SceneObject | None:  # fmt: skip
    """The transformed object at time t of a position, colour or size step (None: outside the
    visible area)."""
    a, b = scene_object(index, before), scene_object(index, after)
    if attr == "position":
        span = visible_span(before["position"], after["position"])
        if span is None:
            return None
        s = span[0] + t * (span[1] - span[0])  # the clip follows the visible stretch
        return dataclasses.replace(a, location=_lerp(a.location, b.location, s))
    if attr == "color":
        return dataclasses.replace(a, rgb=_lerp(a.rgb, b.rgb, t))
    if attr == "size":
        return dataclasses.replace(
            a,
            location=_lerp(a.location, b.location, t),
            scale=_lerp(a.scale, b.scale, t),
            radius=(1.0 - t) * a.radius + t * b.radius,
        )
    raise ValueError(f"no in-between object for a {attr} step")


def visible_span(start: Sequence[float], end: Sequence[float]) -> tuple[float, float] | None:
    """The times [lo, hi] within [0, 1] at which the straight path from grid point `start` to
    `end` lies in the visible area (None: never); [0, 1] for a move inside it."""
    lo, hi = 0.0, 1.0
    for a, b in zip(start, end, strict=True):
        d = float(b) - float(a)
        if d == 0.0:
            if not vocab.VISIBLE_MIN <= a <= vocab.VISIBLE_MAX:
                return None
            continue
        t1, t2 = (vocab.VISIBLE_MIN - a) / d, (vocab.VISIBLE_MAX - a) / d
        lo, hi = max(lo, min(t1, t2)), min(hi, max(t1, t2))
    return (lo, hi) if lo <= hi else None


def _with_object(desc: SceneDescription, index: int, obj: SceneObject | None) -> SceneDescription:
    others = tuple(o for o in desc.objects if o.index != index)
    return dataclasses.replace(desc, objects=others + ((obj,) if obj is not None else ()))


class SampleRenderer:
    """Renders a sample's state images and step clips with one raster renderer."""

    def __init__(self, config: ClipsConfig, renderer: Any) -> None:
        self.config = config
        self.renderer = renderer

    def scene(self, sample: Sample, objects: list[dict[str, Any]]) -> SceneDescription:
        camera = sample.cameras.get(VIEW) or CAMERA_BASE[VIEW]
        desc = build_scene(objects, camera, sample.lights)
        return dataclasses.replace(desc, width=self.config.width, height=self.config.height)

    def render(self, sample: Sample) -> tuple[np.ndarray, np.ndarray, list[list[np.ndarray]]]:
        """(initial image, final image, frames of each step clip)."""
        rotations = [float(o.get("rotation", 0.0)) for o in sample.objects]
        states = [world.objects_to_array(sample.objects)]
        for step in sample.steps:
            states.append(world.apply_step(states[-1], step.obj, step.value)[0])
        objects = [world.array_to_objects(s, rotations) for s in states]
        images: dict[int, np.ndarray] = {}

        def state_image(i: int) -> np.ndarray:
            if i not in images:
                images[i] = self.renderer.render_image(self.scene(sample, objects[i]))
            return images[i]

        clips = []
        for i, step in enumerate(sample.steps):
            times = frame_times(self.config, f"{sample.id}_{i}")
            if step.attr in ("material", "shape"):
                a, b = state_image(i).astype(np.float32), state_image(i + 1).astype(np.float32)
                frames = [np.rint((1.0 - t) * a + t * b).astype(np.uint8) for t in times]
            else:
                base = self.scene(sample, objects[i])
                frames = []
                for t in times:
                    moving = _moving_object(objects[i][step.obj], objects[i + 1][step.obj],
                                            step.obj, t, step.attr)  # fmt: skip
                    frames.append(self.renderer.render_image(_with_object(base, step.obj, moving)))
            clips.append(frames)
        return state_image(0), state_image(len(sample.steps)), clips


# --- records -----------------------------------------------------------------------------------
def describe(obj: dict[str, Any]) -> str:
    """ "small red rubber cylinder"."""
    return f"{obj['size']} {obj['color']} {obj['material']} {obj['shape']}"


def sample_records(
    config: ClipsConfig, sample: Sample, split: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The layout's sample record (without candidates) and clip records of a sample."""
    state = world.objects_to_array(sample.objects)
    rotations = [0.0] * len(sample.objects)
    clips = []
    ids = []
    for i, step in enumerate(sample.steps):
        obj = world.array_to_objects(state, rotations)[step.obj]
        kind = (step.value, int(state[step.obj, world.COL_SHAPE]))
        c = clip_id(sample.id, i)
        ids.append(c)
        clips.append({
            "id": c, "split": split, "sample": sample.id, "index": i,
            "label": f"{vocab.VALUES[step.value]} ({describe(obj)}, object {step.obj})",
            "segment": [float(i), float(i + 1)],
            "frames": [frame_path(c, j) for j in range(config.frames_per_clip)],
            "type": type_name(*kind),
            **({"move": step.move_type} if step.move_type else {}),
            "times": [round(t, 6) for t in frame_times(config, c)],
        })  # fmt: skip
        state, _ = world.apply_step(state, step.obj, step.value)
    record = {
        "id": sample.id,
        "clips": ids,
        "initial": state_path(sample.id, "initial"),
        "final": state_path(sample.id, "final"),
        "steps": len(ids),
        "task": "TRANCE Event",
        "domain": "TRANCE",
        "trance": sample.to_dict(),
    }
    return record, clips


# --- the job on the engine ---------------------------------------------------------------------
@dataclass(frozen=True)
class ClipsJob:
    key: tuple[str, int]


class ClipsWorker:
    """Samples and renders shards with one raster renderer."""

    def __init__(self, config: ClipsConfig, threads: int | None) -> None:
        from tvr.trance.render import make_renderer

        if threads:
            os.environ.setdefault("LP_NUM_THREADS", str(threads))
        self.config = config
        try:
            self.renderer = make_renderer("raster", config.preset)
        except ImportError as err:
            raise missing_extra(err, "the raster renderer") from None
        self.images = SampleRenderer(config, self.renderer)

    def build(self, job: ClipsJob, dest: Path, progress: Callable[[int], None]) -> None:
        from PIL import Image

        split, k = job.key
        dest.mkdir()
        q = self.config.jpeg_quality

        def save(rel: str, image: np.ndarray) -> None:
            path = dest / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            Image.fromarray(image).save(path, format="JPEG", quality=q)

        t0, c0 = time.perf_counter(), time.process_time()
        samples = shard_samples(self.config, split, k)
        t_sample = time.perf_counter() - t0
        records = []
        for sample in samples:
            record, clips = sample_records(self.config, sample, split)
            initial, final, frames = self.images.render(sample)
            save(record["initial"], initial)
            save(record["final"], final)
            for clip, images in zip(clips, frames, strict=True):
                for rel, image in zip(clip["frames"], images, strict=True):
                    save(rel, image)
            records.append({"sample": record, "clips": clips})
            progress(1)
        seconds = {
            "sample": round(t_sample, 4),
            "total": round(time.perf_counter() - t0, 4),
            "cpu": round(time.process_time() - c0, 4),  # all threads of the process
        }
        write_json(dest / TIMING_FILE, seconds)  # first: records.jsonl marks the shard done
        write_jsonl(dest / RECORDS_FILE, records)

    def close(self) -> None:
        self.renderer.close()


@dataclass
class ClipsTask:
    """The testbed as a `tvr.core.jobs.ShardTask`: key (split, k) is DATASET/shards/<split>-0000k,
    finished when its records.jsonl is there; progress counts samples."""

    config: ClipsConfig
    out: Path

    @property
    def name(self) -> str:
        return f"tranco testbed {self.out}"

    def plan(self) -> list[tuple[str, int]]:
        return self.config.shards()

    def path(self, key: tuple[str, int]) -> Path:
        return self.out / SHARDS_DIR / f"{key[0]}-{key[1]:05d}"

    def is_built(self, key: tuple[str, int]) -> bool:
        return (self.path(key) / RECORDS_FILE).is_file()

    def label(self, key: tuple[str, int]) -> str:
        return f"{key[0]}-{key[1]:05d}"

    def prepare(self) -> None:
        engine.prepare_job_folder(self.out, self.config.to_dict(), SHARDS_DIR)

    def jobs(self, todo: list[tuple[str, int]]) -> Iterator[ClipsJob]:
        yield from (ClipsJob(k) for k in todo)

    def make_worker(self, threads: int | None) -> ClipsWorker:
        return ClipsWorker(self.config, threads)


# --- assembly ----------------------------------------------------------------------------------
@dataclass
class TestbedReport:
    """What a testbed run made, and how fast: `render_seconds` and `render_cpu_seconds` are the
    workers' wall and CPU time (all threads) summed over every shard, sampling and rendering."""

    samples: dict[str, int]
    clips: dict[str, int]
    frames: int
    held_out: list[str]
    seconds: float
    render_seconds: float
    render_cpu_seconds: float = 0.0


def open_world_violations(samples: dict[str, list[dict[str, Any]]],
                          clips: dict[str, list[dict[str, Any]]]) -> list[str]:  # fmt: skip
    """Test (and val) clips whose type occurs in training, as messages (empty: none)."""
    seen = {c["type"] for s in samples["train"] for c in clips[s["id"]]}
    return [
        f"{split} clip {c['id']} has type {c['type']}, which occurs in training"
        for split in ("val", "test")
        for s in samples[split]
        for c in clips[s["id"]]
        if c["type"] in seen
    ]


def assemble(config: ClipsConfig, out: Path, task: ClipsTask,
             candidates: CandidateSets) -> TestbedReport:  # fmt: skip
    """Gather the shards, check the open world, store the tiny candidates, write the layout."""
    samples: dict[str, list[dict[str, Any]]] = {s: [] for s in SPLITS}
    clips: dict[str, list[dict[str, Any]]] = {}
    render_seconds = render_cpu = 0.0
    for key in task.plan():
        shard = task.path(key)
        engine.move_shard_folders(shard, out, (STATES_DIR, CLIPS_DIR))
        timing = shard / TIMING_FILE
        if timing.is_file():
            seconds = read_json(timing)
            render_seconds += seconds["total"]
            render_cpu += seconds.get("cpu", 0.0)
        for _, r in iter_jsonl(shard / RECORDS_FILE):
            if "seconds" in r:  # a shard written before timing.json
                render_seconds += r["seconds"]["total"]
                render_cpu += r["seconds"].get("cpu", 0.0)
                continue
            samples[key[0]].append(r["sample"])
            clips[r["sample"]["id"]] = r["clips"]
    problems = open_world_violations(samples, clips)
    if problems:  # never expected: the samplers refuse such steps
        raise RuntimeError(f"the testbed breaks its open-world rule: {problems[0]}")
    for split in ("val", "test"):
        if samples[split]:
            tiny = candidates([(s["id"], s["clips"]) for s in samples[split]],
                              config.tiny_candidates, config.seed)  # fmt: skip
            for s in samples[split]:
                s["candidates"] = tiny[s["id"]]
    (out / STATES_DIR).mkdir(exist_ok=True)
    (out / CLIPS_DIR).mkdir(exist_ok=True)
    for split in SPLITS:
        write_jsonl(out / split_file(split), samples[split])
    write_jsonl(out / CLIPS_FILE,
                (c for split in SPLITS for s in samples[split] for c in clips[s["id"]]))  # fmt: skip
    counts = {s: len(samples[s]) for s in SPLITS}
    clip_counts = {s: sum(x["steps"] for x in samples[s]) for s in SPLITS}
    held = sorted(type_name(*t) for t in held_out_types(config.seed))
    write_json(out / DATASET_FILE, {
        "format": LAYOUT_FORMAT,
        "source": "trance-clips",
        "config": config.to_dict(),
        "frames_per_clip": config.frames_per_clip,
        "splits": counts,
        "clips": clip_counts,
        "skipped_videos": [],
        "open_world": {
            "rule": "a type is (value, shape of the object before the step); one shape per "
                    "value is held out; train uses only the other types, val and test only "
                    "held-out ones",
            "held_out": held,
        },
    })  # fmt: skip
    frames = sum(clip_counts.values()) * config.frames_per_clip + 2 * sum(counts.values())
    return TestbedReport(counts, clip_counts, frames, held, 0.0, render_seconds, render_cpu)


def generate_clips(
    config: ClipsConfig,
    out: str | Path,
    candidates: CandidateSets,
    workers: int = 1,
    progress: bool = True,
) -> TestbedReport:
    """Make (or finish) the testbed of `config` in folder `out`; `candidates(samples, size,
    seed)` gives the stored tiny sets (sample id -> clip ids) of one split's (id, clips)."""
    t0 = time.perf_counter()
    config = config.validate()
    out = Path(out)
    check_same_config(out, config.to_dict(), what="a TRANCE-clips testbed")
    task = ClipsTask(config, out)
    engine.run_with_bar(task, lambda k: len(config.shard_range(*k)), sum(config.sizes),
                        workers=workers, desc="tranco testbed", unit="sample",
                        progress=progress)  # fmt: skip
    report = assemble(config, out, task, candidates)
    report.seconds = time.perf_counter() - t0
    return report
