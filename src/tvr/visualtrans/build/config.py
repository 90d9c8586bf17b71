"""The settings of one VisualTrans build, saved as BUILD/config.json (a rerun must match them)."""

from __future__ import annotations

from dataclasses import dataclass, field

from tvr.core.errors import UserError
from tvr.core.job_config import JobConfig
from tvr.visualtrans.data.dataset import SCENES

FORMAT = "tvr.visualtrans.build/1"
STAGES = ("frames", "filter", "annotate", "questions", "export")
ANNOTATORS = ("endpoint", "scripted")


@dataclass(frozen=True)
class BuildConfig(JobConfig):
    """Everything that shapes a built VisualTrans set.

    Args:
        input: the episodes: a folder of task folders (EgoDex: TASK/N.mp4 beside N.hdf5), or
            with `task` a plain folder of videos of one task.
        task: the scene of a plain folder of videos (None: the input has task folders).
        scenes: the task folders taken (default the release's 12 scenes).
        frames_per_episode: keyframes per episode, start and end included (3: one medium).
        image_size: the keyframes' short side in pixels (None: the video's own size).
        jpeg_quality: of the keyframes.
        annotator: "endpoint" (any OpenAI-compatible server; its URL, key and model are options
            of each run, not saved: filter and annotate may use different models, as the
            paper's o3 and Gemini 2.5 Pro; each stage's report and replies name the model) or
            "scripted" (the testbed's annotator on loopback, answering from `truth`).
        truth: the testbed's truth.jsonl (scripted annotator only).
        error_rate, malformed_rate: the scripted annotator's share of episodes with wrong
            metadata and of replies that are not JSON.
        parse_retries: how often an unreadable or invalid reply is asked again.
        metadata: a human metadata file (JSON lines); its episodes are not sent to the model.
        detector: a local Grounding DINO folder for the object crops (None: no crops).
        seed: seeds the question sampling, the option order and the distractors.
        questions_per_family: at most this many questions per family (0: all).
        low_count_keep: the share of counting questions with an answer of 0 or 1 kept (the
            release's sub-sampling of low-change cases).
    """

    FORMAT_TAG = FORMAT
    OPTION_KIND = "build"

    input: str = ""
    task: str | None = None
    scenes: tuple[str, ...] = field(default=SCENES)
    frames_per_episode: int = 3
    image_size: int | None = 480
    jpeg_quality: int = 95
    annotator: str = "endpoint"
    truth: str | None = None
    error_rate: float = 0.0
    malformed_rate: float = 0.0
    parse_retries: int = 2
    metadata: str | None = None
    detector: str | None = None
    seed: int = 0
    questions_per_family: int = 0
    low_count_keep: float = 0.3

    def validate(self) -> BuildConfig:
        if not self.input:
            raise UserError("give --input DIR (the episode videos)")
        unknown = [s for s in self.scenes if s not in SCENES]
        if unknown:
            raise UserError(f"--scenes: {unknown[0]!r} is not one of the 12 scenes "
                            f"({', '.join(SCENES)})")  # fmt: skip
        if self.task is not None and self.task not in SCENES:
            raise UserError(f"--task: {self.task!r} is not one of the 12 scenes")
        if self.frames_per_episode < 2:
            raise UserError(f"--frames-per-episode must be at least 2 (start and end), got "
                            f"{self.frames_per_episode}")  # fmt: skip
        if self.image_size is not None and self.image_size < 16:
            raise UserError(f"--image-size must be at least 16, got {self.image_size}")
        if not 1 <= self.jpeg_quality <= 100:
            raise UserError(f"--jpeg-quality must be 1..100, got {self.jpeg_quality}")
        if self.annotator not in ANNOTATORS:
            raise UserError(f"--annotator must be one of {', '.join(ANNOTATORS)}")
        if self.annotator == "scripted" and not self.truth:
            raise UserError("the scripted annotator needs --truth TRUTH.jsonl (of the testbed)")
        for name in ("error_rate", "malformed_rate", "low_count_keep"):
            value = getattr(self, name)
            if not 0.0 <= value <= 1.0:
                raise UserError(f"--{name.replace('_', '-')} must be in [0, 1], got {value}")
        if self.parse_retries < 0 or self.questions_per_family < 0 or self.seed < 0:
            raise UserError("--parse-retries, --questions-per-family and --seed must be >= 0")
        return self
