"""CLEVRER's metrics: descriptive accuracy (also per sub-type), and for each multiple-choice type
per-option and per-question accuracy (a question is right only if every option is).

Every question of the question file counts: an unanswered question, an unanswered option and an
answer of the wrong kind (choices for a descriptive question, or the reverse) count wrong and are
counted; a choice answered "error" (the released executor's failure) counts wrong. Answers to
questions the file does not hold are ignored and counted. Descriptive answers are compared as
strings, exactly, as the released evaluation does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from tvr.clevrer.data.questions import (
    MULTIPLE_CHOICE_TYPES,
    VideoQuestions,
    has_answers,
)
from tvr.clevrer.data.submission import SubmittedQuestion, SubmittedVideo
from tvr.core.errors import UserError
from tvr.core.gc_pause import without_gc


@dataclass
class Tally:
    """Right answers out of a total."""

    correct: int = 0
    total: int = 0

    def add(self, right: bool) -> None:
        self.correct += int(right)
        self.total += 1

    @property
    def accuracy(self) -> float | None:
        return self.correct / self.total if self.total else None

    def to_json(self) -> dict[str, Any]:
        return {"correct": self.correct, "total": self.total, "accuracy": self.accuracy}


@dataclass
class ChoiceTally:
    """Per-option and per-question tallies of one multiple-choice type."""

    options: Tally = field(default_factory=Tally)
    questions: Tally = field(default_factory=Tally)

    def to_json(self) -> dict[str, Any]:
        return {"per_option": self.options.to_json(), "per_question": self.questions.to_json()}


@dataclass
class Score:
    """The scores of one answer file against one question file."""

    videos: int = 0
    descriptive: Tally = field(default_factory=Tally)
    subtypes: dict[str, Tally] = field(default_factory=dict)
    choice: dict[str, ChoiceTally] = field(
        default_factory=lambda: {t: ChoiceTally() for t in MULTIPLE_CHOICE_TYPES}
    )
    missing: dict[str, int] = field(
        default_factory=lambda: {"videos": 0, "questions": 0, "options": 0}
    )
    wrong_kind: int = 0  # answers of the wrong kind (choices for a descriptive question, ...)
    errors: int = 0  # options answered "error"
    ignored: dict[str, int] = field(
        default_factory=lambda: {"videos": 0, "questions": 0, "options": 0}
    )
    #: one record per question of the question file, in its order: the lines of detail.jsonl
    details: list[dict[str, Any]] = field(default_factory=list, repr=False, compare=False)

    @property
    def multiple_choice(self) -> ChoiceTally:
        """The three multiple-choice types together."""
        total = ChoiceTally()
        for t in self.choice.values():
            total.options.correct += t.options.correct
            total.options.total += t.options.total
            total.questions.correct += t.questions.correct
            total.questions.total += t.questions.total
        return total

    def to_json(self) -> dict[str, Any]:
        return {
            "videos": self.videos,
            "questions": self.descriptive.total + self.multiple_choice.questions.total,
            "descriptive": {
                **self.descriptive.to_json(),
                "subtypes": {k: v.to_json() for k, v in sorted(self.subtypes.items())},
            },
            **{t: c.to_json() for t, c in self.choice.items()},
            "multiple_choice": self.multiple_choice.to_json(),
            "missing": dict(self.missing),
            "wrong_kind": self.wrong_kind,
            "error_options": self.errors,
            "ignored": dict(self.ignored),
        }


@without_gc
def score(questions: Sequence[VideoQuestions], answers: Sequence[SubmittedVideo]) -> Score:
    """Score `answers` against the questions (with their answers) of a question file."""
    if not has_answers(questions):
        raise UserError("the question file has no answers (the test split?): score against "
                        "train or validation, or send the answers to the challenge's server")  # fmt: skip
    by_scene = {v.scene_index: {q.question_id: q for q in v.questions} for v in answers}
    result = Score(videos=len(questions))
    known_scenes = set()
    for video in questions:
        known_scenes.add(video.scene_index)
        given = by_scene.get(video.scene_index)
        if given is None:
            result.missing["videos"] += 1
            given = {}
        for q in video.questions:
            a = given.get(q.question_id)
            if a is None:
                result.missing["questions"] += 1
            line: dict[str, Any] = {"id": f"{video.scene_index}/{q.question_id}",
                                    "scene_index": video.scene_index,
                                    "question_id": q.question_id, "type": q.question_type}  # fmt: skip
            if q.choices is None:
                line["subtype"] = q.subtype
                line["correct"] = _score_descriptive(result, q.answer, q.subtype, a)
            else:
                if not q.choices:
                    raise UserError(f"question {q.question_id} of scene {video.scene_index} has no "
                                    f"choices; {q.question_type} questions need at least one")
                options = _score_choices(
                    result, q.question_type, {c.choice_id: c.answer for c in q.choices}, a
                )
                line["correct"] = all(options.values())
                line["options"] = [{"choice_id": c, "correct": r} for c, r in options.items()]
            line["answered"] = a is not None
            result.details.append(line)
        known = {q.question_id: q for q in video.questions}
        for qid, a in given.items():
            if qid not in known:
                result.ignored["questions"] += 1
            elif a.choices is not None and known[qid].choices is not None:
                ids = {c.choice_id for c in known[qid].choices}
                result.ignored["options"] += sum(1 for c in a.choices if c not in ids)
    for scene, given in by_scene.items():
        if scene not in known_scenes:
            result.ignored["videos"] += 1
            result.ignored["questions"] += len(given)
    return result


def _score_descriptive(
    result: Score, gold: str | None, subtype: str, a: SubmittedQuestion | None
) -> bool:
    right = False
    if a is not None:
        if a.answer is None:
            result.wrong_kind += 1
        else:
            right = a.answer == gold
    result.descriptive.add(right)
    result.subtypes.setdefault(subtype, Tally()).add(right)
    return right


def _score_choices(
    result: Score, qtype: str, gold: dict[int, str | None], a: SubmittedQuestion | None
) -> dict[int, bool]:
    """Score one multiple-choice question; whether each option (by choice id) is right."""
    tally = result.choice[qtype]
    given: dict[int, str] = {}
    if a is not None:
        if a.choices is None:
            result.wrong_kind += 1
        else:
            given = dict(a.choices)
    all_right = True
    rights: dict[int, bool] = {}
    for cid, label in gold.items():
        answer = given.get(cid)
        if answer is None:
            if a is not None:
                result.missing["options"] += 1
        elif answer == "error":
            result.errors += 1
        right = answer is not None and answer == label
        tally.options.add(right)
        rights[cid] = right
        all_right = all_right and right
    tally.questions.add(all_right)
    return rights
