"""The challenge's answer file (what its evaluation server takes): typed form, checked reader,
writer.

Layout: a JSON list, one entry per video::

    [{scene_index, questions: [{question_id, answer}
                               | {question_id, choices: [{choice_id, answer}]}]}]

A descriptive answer is a string ("2", "yes", "cube"); a choice's answer is "correct" or "wrong".
"error" is also read for a choice, as the released executor writes it when a program fails
(scoring counts it wrong); any other value is a fault naming the file and field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tvr.clevrer.data.fields import Fields, dump_json, load_json
from tvr.clevrer.data.questions import CHOICE_ANSWERS, VideoQuestions
from tvr.core.errors import UserError
from tvr.core.gc_pause import without_gc
from tvr.core.jsonl import skip_if_lenient, write_text

#: what a choice's answer may be in a submission: the two labels and the executor's failure token
SUBMITTED_CHOICE_ANSWERS: tuple[str, ...] = (*CHOICE_ANSWERS, "error")


@dataclass(frozen=True)
class SubmittedQuestion:
    """The answer to one question: `answer` for a descriptive one, `choices` (choice id ->
    "correct"/"wrong") for a multiple-choice one."""

    question_id: int
    answer: str | None = None
    choices: Mapping[int, str] | None = None

    def to_json(self) -> dict[str, Any]:
        if self.choices is not None:
            return {
                "question_id": self.question_id,
                "choices": [{"choice_id": c, "answer": a} for c, a in self.choices.items()],
            }
        return {"question_id": self.question_id, "answer": self.answer}


@dataclass(frozen=True)
class SubmittedVideo:
    """The answers for one video."""

    scene_index: int
    questions: tuple[SubmittedQuestion, ...]

    def to_json(self) -> dict[str, Any]:
        return {"scene_index": self.scene_index, "questions": [q.to_json() for q in self.questions]}


def write_submission(path: str | Path, videos: Iterable[SubmittedVideo]) -> int:
    """Write an answer file atomically; returns the number of videos."""
    entries = [v.to_json() for v in videos]
    write_text(Path(path), dump_json(entries))
    return len(entries)


@without_gc
def read_submission(path: str | Path, problems: list | None = None) -> list[SubmittedVideo]:
    """Read and check an answer file. With a `problems` list (--lenient) a bad video entry is
    added to it and skipped (its questions are then missing, so scored wrong) instead of
    raised; a file that is not a JSON list of entries is refused either way."""
    f = Fields(path)
    data = f.sequence(load_json(path), "")
    videos = []
    seen: dict[int, int] = {}
    for i, raw in enumerate(data):
        with skip_if_lenient(problems):
            video = _parse_video(f, raw, f"[{i}]")
            if video.scene_index in seen:
                raise f.fail(f"[{i}].scene_index", f"scene {video.scene_index} is also entry "
                             f"[{seen[video.scene_index]}]")  # fmt: skip
            seen[video.scene_index] = i
            videos.append(video)
    return videos


def submission_from_questions(videos: Iterable[VideoQuestions]) -> list[SubmittedVideo]:
    """The answers a question file itself holds, as a submission (the oracle's answers)."""
    out = []
    for v in videos:
        answers = []
        for q in v.questions:
            if q.answer is None and (q.choices is None or any(c.answer is None for c in q.choices)):
                raise UserError(f"scene {v.scene_index}, question {q.question_id}: no answer in "
                                "the question file (the test split?)")  # fmt: skip
            if q.choices is None:
                answers.append(SubmittedQuestion(q.question_id, answer=q.answer))
            else:
                answers.append(
                    SubmittedQuestion(q.question_id, choices={c.choice_id: c.answer for c in q.choices})
                )
        out.append(SubmittedVideo(v.scene_index, tuple(answers)))
    return out


def _parse_video(f: Fields, raw: Any, where: str) -> SubmittedVideo:
    f.mapping(raw, where, ("scene_index", "questions"))
    scene = f.integer(raw["scene_index"], (where, ".scene_index"), minimum=0)
    questions = []
    ids: set[int] = set()
    for i, q in enumerate(f.sequence(raw["questions"], (where, ".questions"))):
        at = f"{where}.questions[{i}]"
        f.mapping(q, at, ("question_id",))
        qid = f.integer(q["question_id"], (at, ".question_id"), minimum=0)
        if qid in ids:
            raise f.fail((at, ".question_id"), f"question {qid} of scene {scene} is answered twice")
        ids.add(qid)
        has_answer, has_choices = "answer" in q, "choices" in q
        if has_answer == has_choices:
            raise f.fail(at, "expected either 'answer' (a descriptive question) or 'choices' "
                         "(a multiple-choice one)")  # fmt: skip
        if has_answer:
            questions.append(SubmittedQuestion(qid, answer=f.string(q["answer"], (at, ".answer"))))
            continue
        choices: dict[int, str] = {}
        for k, c in enumerate(f.sequence(q["choices"], (at, ".choices"))):
            ck = f"{at}.choices[{k}]"
            f.mapping(c, ck, ("choice_id", "answer"))
            cid = f.integer(c["choice_id"], (ck, ".choice_id"), minimum=0)
            if cid in choices:
                raise f.fail((ck, ".choice_id"), f"choice {cid} is answered twice")
            choices[cid] = f.string(c["answer"], (ck, ".answer"), SUBMITTED_CHOICE_ANSWERS)
        questions.append(SubmittedQuestion(qid, choices=choices))
    return SubmittedVideo(scene, tuple(questions))
