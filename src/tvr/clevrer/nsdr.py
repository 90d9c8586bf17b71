"""NS-DR, the chain: programs, perceived objects and motion, predicted dynamics -> the executor.

NS-DR (the paper's section 5) answers a question by running its program on a symbolic scene: the
objects and their observed motion come from the video frame parser (perception), their future
and counterfactual motion and collisions from the dynamics predictor, the program from the
question parser. Each of the three parts is either learned ("model") or ground truth ("gt"), so
a table shows what each learned part costs:

- programs: the question file's own programs, or the parser's (`tvr.clevrer.models.parser`).
- perception: the objects (attributes) and their positions and visibility in the 128 shown
  frames: ground truth (the set's dynamics file, factual run, shown frames), or the frame
  parser's detections tracked over the frames (`tvr.clevrer.models.perception`).
- dynamics: collisions, the unseen future and the counterfactual runs: ground truth (the set's
  dynamics file), or the dynamics predictor's rollouts from the perceived scene
  (`tvr.clevrer.models.dynamics`).

With ground-truth dynamics and learned perception the two are joined (`join_ground_truth`):
perceived objects are matched to the true ones (Hungarian assignment on their mean image
distance over the frames both are seen, at most MATCH_DISTANCE pixels), and the true collisions,
future motion and counterfactual runs of the matched objects are given to them; an unmatched
perceived object has only its observed motion and no counterfactual run (a question removing it
fails, "error"). With all three parts ground truth the joined scene is the set's own and the
answers are the executor's (100% on a generated set).

Every scene is written in the official predicted-dynamics layout to OUT/dynamics/sim_XXXXX.json
(one shard per video on `tvr.core.jobs`: a killed run resumes with the videos not written yet),
then the executor (`tvr.clevrer.eval.execute`) answers OUT/questions.json into OUT/answers.json,
scored into OUT/summary.json. OUT/config.json records the config; a folder of another config is
refused.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tvr.clevrer.data.dynamics import dynamics_from_facts, write_dynamics
from tvr.clevrer.data.layout import find_questions, sim_filename
from tvr.clevrer.data.questions import VideoQuestions, has_answers, read_questions, write_questions
from tvr.clevrer.data.submission import write_submission
from tvr.clevrer.eval.execute import answer_questions
from tvr.clevrer.programs.dynamics import in_out_events, read_dynamics
from tvr.clevrer.programs.facts import Event, Motion, ObjectProps, Run, SceneFacts
from tvr.clevrer.vocab import SHOWN_FRAMES
from tvr.core.errors import UserError
from tvr.core.jobs import run_shards
from tvr.core.manifest import check_same_config, save_config

PARTS: tuple[str, ...] = ("programs", "perception", "dynamics")
SOURCES: tuple[str, ...] = ("gt", "model")
#: a perceived object further than this (mean image distance, pixels) from every true object is
#: not matched to any
MATCH_DISTANCE = 40.0


@dataclass(frozen=True)
class NsdrConfig:
    """One NS-DR evaluation: the set and split, and where each part comes from.

    Args:
        data: a generated CLEVRER set (question files, dynamics/ ground truth, videos and masks
            for the learned perception).
        split: the question file answered.
        programs, perception, dynamics: "gt" or "model" each.
        parser: the parser run folder or checkpoint (programs "model").
        detector: the frame parser's run folder (perception "model").
        dynamics_run: the dynamics predictor's run folder (dynamics "model").
        collisions: "given" (the dynamics' collisions) or "proposed" (found from the motion, as
            NS-DR (NE) does; `tvr.clevrer.programs.dynamics`).
        limit: the split's first N videos only (None: all).
    """

    data: str
    split: str = "test"
    programs: str = "gt"
    perception: str = "gt"
    dynamics: str = "gt"
    parser: str | None = None
    detector: str | None = None
    dynamics_run: str | None = None
    collisions: str = "given"
    limit: int | None = None

    def validate(self) -> NsdrConfig:
        for part, run, flag in (
            ("programs", self.parser, "--parser"),
            ("perception", self.detector, "--detector"),
            ("dynamics", self.dynamics_run, "--dynamics-run"),
        ):
            source = getattr(self, part)
            if source not in SOURCES:
                raise UserError(f"--{part} must be gt or model, got {source!r}")
            if source == "model" and not run:
                raise UserError(f"--{part} model needs {flag} (a trained run)")
        if self.collisions not in ("given", "proposed"):
            raise UserError(f"--collisions must be given or proposed, got {self.collisions!r}")
        if self.limit is not None and self.limit < 1:
            raise UserError(f"--limit must be at least 1, got {self.limit}")
        return self

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# --- scenes --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Observed:
    """What perception gives of one video: the objects and their motion in the shown frames.

    Args:
        objects: each object's attributes (no two alike).
        xy: (T, N, 2) image centres, pixels of the 480x320 frame (x right, y down).
        visible: (T, N) whether each object is seen at each frame.
    """

    objects: tuple[ObjectProps, ...]
    xy: np.ndarray
    visible: np.ndarray


def observed_from_facts(facts: SceneFacts, frames: int = SHOWN_FRAMES) -> Observed:
    """Ground-truth perception: the true objects and their factual motion in the shown frames."""
    motion = facts.factual.motion
    if motion is None:
        raise ValueError("the ground-truth scene has no motion")
    return Observed(facts.objects, motion.xy[:frames].copy(), motion.visible[:frames].copy())


def match_objects(observed: Observed, truth: SceneFacts) -> dict[int, int]:
    """Perceived object -> true object: the assignment of least total mean distance over the
    frames both are seen; pairs never seen together or further than MATCH_DISTANCE apart are
    not matched."""
    from scipy.optimize import linear_sum_assignment

    motion = truth.factual.motion
    assert motion is not None
    t = min(len(observed.xy), len(motion.xy))
    n, m = len(observed.objects), len(truth.objects)
    if not n or not m or not t:
        return {}
    both = observed.visible[:t, :, None] & motion.visible[:t, None, :]  # (T, N, M)
    dist = np.linalg.norm(observed.xy[:t, :, None, :] - motion.xy[:t, None, :, :], axis=-1)
    frames = both.sum(axis=0)
    mean = np.where(frames > 0, (dist * both).sum(axis=0) / np.maximum(frames, 1), np.inf)
    cost = np.where(np.isfinite(mean), mean, 1e9)
    rows, cols = linear_sum_assignment(cost)
    return {int(r): int(c) for r, c in zip(rows, cols, strict=True) if mean[r, c] <= MATCH_DISTANCE}


def _remap_run(run: Run, to_ours: Mapping[int, int], n: int) -> tuple[Motion, list[Event]]:
    """A true run in the perceived objects' numbering (objects without a match are absent)."""
    assert run.motion is not None
    t = len(run.motion.xy)
    xy = np.zeros((t, n, 2))
    vel = np.zeros((t, n, 2))
    visible = np.zeros((t, n), dtype=bool)
    for g, k in to_ours.items():
        xy[:, k] = run.motion.xy[:, g]
        vel[:, k] = run.motion.velocity[:, g]
        visible[:, k] = run.motion.visible[:, g]
    collisions = [
        Event("collision", e.frame, tuple(sorted(to_ours[o] for o in e.objects)))
        for e in run.events
        if e.kind == "collision" and all(o in to_ours for o in e.objects)
    ]
    return Motion(xy, vel, visible), collisions


def join_ground_truth(
    observed: Observed, truth: SceneFacts, match: Mapping[int, int] | None = None
) -> dict[str, Any]:
    """The perceived scene with the true dynamics of its matched objects (see the module), in
    the predicted-dynamics layout (positions; the executor's reader derives the velocities);
    `match` (perceived -> true object) when known, else `match_objects`."""
    match = match_objects(observed, truth) if match is None else match
    to_ours = {g: k for k, g in match.items()}
    n = len(observed.objects)
    t0 = len(observed.xy)
    motion, collisions = _remap_run(truth.factual, to_ours, n)
    xy, visible = motion.xy.copy(), motion.visible.copy()
    t = max(len(xy), t0)
    if t > len(xy):  # the true run is shorter than what was observed
        xy = np.concatenate([xy, np.zeros((t - len(xy), n, 2))])
        visible = np.concatenate([visible, np.zeros((t - len(visible), n), dtype=bool)])
    xy[:t0] = observed.xy
    visible[:t0] = observed.visible
    xy[~visible] = 0.0
    factual = Run(
        tuple(sorted(in_out_events(visible) + collisions, key=_event_order)),
        Motion(xy, np.zeros_like(xy), visible),
    )
    counterfactual = {}
    for k, g in match.items():
        if g not in truth.counterfactual:
            continue
        cf_motion, cf_collisions = _remap_run(truth.counterfactual[g], to_ours, n)
        cf_events = in_out_events(cf_motion.visible) + cf_collisions
        counterfactual[k] = Run(tuple(sorted(cf_events, key=_event_order)), cf_motion)
    return dynamics_from_facts(
        SceneFacts(observed.objects, factual, counterfactual, truth.n_shown_frames)
    )


def _event_order(e: Event) -> tuple[int, str, tuple[int, ...]]:
    return (e.frame, e.kind, e.objects)


# --- the parts -----------------------------------------------------------------------------------
@dataclass
class SceneWorker:
    """Builds one video's scene file from the configured parts (holds the loaded models)."""

    config: NsdrConfig
    perceive: Callable[[int], Observed] | None = None
    predict: Callable[[Observed, int], dict[str, Any]] | None = None

    def build(self, job: Job, dest: Path, progress: Callable[[int], None]) -> None:
        write_dynamics(dest, scene_layout(self, job.key), check=False)
        progress(1)

    def close(self) -> None:
        pass


def _truth(data: str, scene_index: int, collisions: str = "given") -> SceneFacts:
    path = Path(data) / "dynamics" / sim_filename(scene_index)
    if not path.is_file():
        raise UserError(
            f"{data}: no ground-truth dynamics {path.name} (make the set with "
            "dynamics, or use --perception/--dynamics model)"
        )
    return read_dynamics(path, collisions=collisions)


def scene_layout(worker: SceneWorker, scene_index: int) -> dict[str, Any]:
    """One video's scene in the predicted-dynamics layout, from the configured parts."""
    cfg = worker.config
    match = None
    if cfg.perception == "gt":
        truth = _truth(cfg.data, scene_index)
        observed = observed_from_facts(truth)
        match = {k: k for k in range(len(truth.objects))}  # the true objects themselves
    else:
        assert worker.perceive is not None
        observed = worker.perceive(scene_index)
        truth = _truth(cfg.data, scene_index) if cfg.dynamics == "gt" else None
    if cfg.dynamics == "model":
        assert worker.predict is not None
        return worker.predict(observed, scene_index)
    assert truth is not None
    return join_ground_truth(observed, truth, match)


def make_worker(config: NsdrConfig) -> SceneWorker:
    """A worker with the learned parts of `config` loaded."""
    worker = SceneWorker(config)
    if config.perception == "model":
        worker.perceive = load_perception(config)
    if config.dynamics == "model":
        worker.predict = load_dynamics(config)
    return worker


def observed_from_tracks(tracks: Any, frames: int = SHOWN_FRAMES) -> Observed:
    """The frame parser's tracks (`tvr.clevrer.models.perception.Tracks`: objects, frame indices,
    xy, visible) as an Observed of frames 0..frames-1; a frame without proposals sees nothing."""
    index = np.asarray(tracks.frame_indices, dtype=int)
    keep = (index >= 0) & (index < frames)
    n = len(tracks.objects)
    xy = np.zeros((frames, n, 2))
    visible = np.zeros((frames, n), dtype=bool)
    xy[index[keep]] = np.nan_to_num(np.asarray(tracks.xy, dtype=np.float64)[keep])
    visible[index[keep]] = np.asarray(tracks.visible, dtype=bool)[keep]
    xy[~visible] = 0.0
    return Observed(tuple(tracks.objects), xy, visible)


def load_perception(config: NsdrConfig) -> Callable[[int], Observed]:
    """The frame parser of `config.detector` on each video's frames, then tracking (the
    perception package's `observed_scene_reader`), as scene index -> Observed."""
    from tvr.clevrer.models.perception import observed_scene_reader

    read = observed_scene_reader(str(config.detector), config.data)
    return lambda scene_index: observed_from_tracks(read(scene_index))


def load_dynamics(config: NsdrConfig) -> Callable[[Observed, int], dict[str, Any]]:
    """The dynamics predictor of `config.dynamics_run` (the dynamics package's
    `scene_predictor`), as (Observed, scene index) -> its predicted-dynamics layout."""
    from tvr.clevrer.models.dynamics import scene_predictor

    return scene_predictor(str(config.dynamics_run))


# --- the job -------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Job:
    key: int


@dataclass
class SceneTask:
    """The scene files of an NS-DR folder as a `tvr.core.jobs.ShardTask` (one video a shard)."""

    config: NsdrConfig
    out: Path
    scenes: list[int] = field(default_factory=list)

    @property
    def name(self) -> str:
        return f"clevrer nsdr {self.out}"

    def plan(self) -> list[int]:
        return list(self.scenes)

    def path(self, key: int) -> Path:
        return self.out / "dynamics" / sim_filename(key)

    def is_built(self, key: int) -> bool:
        return self.path(key).is_file()

    def label(self, key: int) -> str:
        return f"video {key}"

    def prepare(self) -> None:
        (self.out / "dynamics").mkdir(parents=True, exist_ok=True)

    def jobs(self, todo: list[int]) -> Iterator[Job]:
        yield from (Job(k) for k in todo)

    def make_worker(self, threads: int | None) -> SceneWorker:
        if threads is not None and (self.config.perception == "model"
                                    or self.config.dynamics == "model"):
            # a pool process gets its share of the cores: without it each process ran torch on
            # every core, and two such processes on two cores were ten times slower
            import torch

            torch.set_num_threads(threads)
        return make_worker(self.config)


@dataclass
class NsdrResult:
    """What `run_nsdr` wrote: the answer file, the summary (None without answers to score) and
    the evaluation table's lines."""

    answers: Path
    summary: dict[str, Any] | None
    lines: list[str]


def programs_to_run(
    config: NsdrConfig, videos: list[VideoQuestions], progress: bool = False
) -> list[VideoQuestions]:
    """The questions with the programs NS-DR runs: their own, or the parser's."""
    if config.programs == "gt":
        return videos
    from tvr.clevrer.models.parser.predict import Parser, parse_questions

    return parse_questions(Parser.load(str(config.parser)), videos, progress)


def run_nsdr(
    config: NsdrConfig, out: str | Path, workers: int = 1, progress: bool = True
) -> NsdrResult:
    """Answer `config.split` with NS-DR into folder `out` (see the module); resumes a killed run."""
    from tqdm import tqdm

    from tvr.clevrer.results import evaluate_into

    config.validate()
    out = Path(out)
    check_same_config(out, config.to_dict(), what="an NS-DR run")
    questions_file = find_questions(config.data, config.split)
    videos = read_questions(questions_file)
    if config.limit is not None:
        videos = videos[: config.limit]
    save_config(out, config.to_dict())
    programs = out / "questions.json"
    if not programs.is_file():
        write_questions(programs, programs_to_run(config, videos, progress))
    task = SceneTask(config, out, [v.scene_index for v in videos])
    todo = [k for k in task.plan() if not task.is_built(k)]
    with tqdm(
        total=len(todo), disable=not progress or not todo, unit="video", desc="scenes"
    ) as bar:
        run_shards(task, todo, workers=workers, progress=bar.update)
    report = answer_questions(  # the run's own dynamics, written once: no cache beside them
        read_questions(programs), out / "dynamics", config.collisions, progress, cache=False
    )
    answers = out / "answers.json"
    write_submission(answers, report.videos)
    lines = [
        f"NS-DR ({', '.join(f'{p} {getattr(config, p)}' for p in PARTS)}): answered "
        f"{report.answered} questions of {len(report.videos)} videos, {report.errors} "
        "program errors"
    ]
    summary = None
    if has_answers(videos):
        if config.limit is not None:  # score the videos answered, against their own questions
            questions_file = out / "gold_questions.json"
            write_questions(questions_file, videos)
        summary = evaluate_into(questions_file, answers, out)
        lines += (out / "summary.md").read_text().strip().strip("`").strip().splitlines()
    return NsdrResult(answers, summary, lines)
