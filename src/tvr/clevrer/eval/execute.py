"""Answer questions by running their programs on each video's dynamics (ground truth or predicted).

This is NS-DR's last stage and, on ground-truth dynamics with the questions' own programs, the
oracle: every generated question must come out right. A program that fails on a video answers
"error" (scored wrong), as the released executor does; a video without a dynamics file is
reported and left unanswered (its questions count wrong when scored).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from tvr.clevrer.data.cache import cached_facts
from tvr.clevrer.data.layout import sim_filename
from tvr.clevrer.data.questions import VideoQuestions
from tvr.clevrer.data.submission import SubmittedQuestion, SubmittedVideo
from tvr.clevrer.programs.dynamics import read_dynamics
from tvr.clevrer.programs.executor import answer_or_error
from tvr.clevrer.programs.facts import SceneFacts
from tvr.core.progress import step_bar


@dataclass
class ExecutionReport:
    """What `answer_questions` answered, and what it could not."""

    videos: list[SubmittedVideo] = field(default_factory=list)
    missing_dynamics: list[int] = field(default_factory=list)
    errors: int = 0
    answered: int = 0


def answer_questions(
    questions: Sequence[VideoQuestions],
    dynamics: str | Path,
    collisions: str = "given",
    progress: bool = False,
    cache: bool = True,
) -> ExecutionReport:
    """Run every question's program (and each choice's) on DYNAMICS/sim_XXXXX.json; with
    `progress`, a bar over the videos on stderr (about 10 ms a video: the release's validation
    split takes a minute). With `cache`, the dynamics are read from the folder's cache
    (`tvr.clevrer.data.cache`) when it is fresh, and cached when not."""
    report = ExecutionReport()
    root = Path(dynamics)
    if cache:
        scenes = [v.scene_index for v in questions]
        facts = cached_facts(root, scenes, [sim_filename(s) for s in scenes], collisions,
                             lambda path: read_dynamics(path, collisions=collisions))  # fmt: skip
    with step_bar(len(questions), "executing", "video", progress) as bar:
        for video in questions:
            if cache:
                found = facts.get(video.scene_index)
            else:
                path = root / sim_filename(video.scene_index)
                found = read_dynamics(path, collisions=collisions) if path.is_file() else None
            if found is None:
                report.missing_dynamics.append(video.scene_index)
            else:
                _answer_video(video, found, report)
            bar.update(1)
    return report


def _answer_video(video: VideoQuestions, facts: SceneFacts, report: ExecutionReport) -> None:
    """Answer one video's questions into `report`."""
    answers = []
    for q in video.questions:
        program = q.program or ()
        if q.choices is None:
            answer = answer_or_error(program, facts)
            report.errors += answer == "error"
            answers.append(SubmittedQuestion(q.question_id, answer=answer))
        else:
            chosen = {}
            for c in q.choices:
                chosen[c.choice_id] = answer_or_error(program, facts, c.program or ())
                report.errors += chosen[c.choice_id] == "error"
            answers.append(SubmittedQuestion(q.question_id, choices=chosen))
        report.answered += 1
    report.videos.append(SubmittedVideo(video.scene_index, tuple(answers)))
