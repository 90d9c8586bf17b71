"""Question files of the release (``train.json``, ``validation.json``, ``test.json``): a typed
form, the reader with checks and the writer.

A question file is a JSON list with one entry per video::

    [{scene_index, video_filename, questions: [
        {question_id, question, question_type: "descriptive", program: [...], answer}
      | {question_id, question, question_type: "explanatory" | "predictive" | "counterfactual",
         program: [...], choices: [{choice_id, choice, program: [...],
                                    answer: "correct" | "wrong"}]}]}]

Programs are postfix token lists. Answers are strings as released: counts "0".."5", "yes"/"no",
attribute names; a choice is "correct" or "wrong". The test split has no programs and no answers:
the reader takes them as absent (None). Fields tvr does not know (``question_subtype``, ...) are
kept in `extra`, so a file read and written again has the same content.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tvr.clevrer.data.fields import Fields, dump_json, load_json
from tvr.core.errors import InputError, UserError
from tvr.core.gc_pause import without_gc
from tvr.core.jsonl import write_text

QUESTION_TYPES: tuple[str, ...] = ("descriptive", "explanatory", "predictive", "counterfactual")
MULTIPLE_CHOICE_TYPES: tuple[str, ...] = QUESTION_TYPES[1:]
CHOICE_ANSWERS: tuple[str, ...] = ("correct", "wrong")

#: the descriptive sub-types (the paper's appendix A), named by the program's last module
DESCRIPTIVE_SUBTYPES: tuple[str, ...] = (
    "count", "exist", "query_color", "query_shape", "query_material",
)  # fmt: skip

_CHOICE_KEYS = ("choice_id", "choice", "program", "answer")
_QUESTION_KEYS = ("question_id", "question", "question_type", "program", "answer", "choices")


@dataclass(frozen=True)
class Choice:
    """One option of a multiple-choice question."""

    choice_id: int
    choice: str
    program: tuple[str, ...] | None = None
    answer: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Question:
    """One question: descriptive (with `answer`) or multiple choice (with `choices`)."""

    question_id: int
    question: str
    question_type: str
    program: tuple[str, ...] | None = None
    answer: str | None = None
    choices: tuple[Choice, ...] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_descriptive(self) -> bool:
        return self.question_type == "descriptive"

    @property
    def subtype(self) -> str:
        """A descriptive question's sub-type: ``question_subtype`` if the file gives one, else the
        last module of its program (count, exist, query_color, ...); "other" when neither tells."""
        given = self.extra.get("question_subtype")
        if isinstance(given, str) and given:
            return given
        if self.program:
            return self.program[-1] if self.program[-1] in DESCRIPTIVE_SUBTYPES else "other"
        return "other"


@dataclass(frozen=True)
class VideoQuestions:
    """The questions of one video."""

    scene_index: int
    video_filename: str
    questions: tuple[Question, ...]
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "scene_index": self.scene_index,
            "video_filename": self.video_filename,
            "questions": [_question_json(q) for q in self.questions],
            **self.extra,
        }

    @classmethod
    def from_json(cls, data: Any, path: str | Path = "<questions>", where: str = "") -> VideoQuestions:
        """Check one entry of a question file (`where` is its position, e.g. "[3]")."""
        return _parse_video(Fields(path), data, where)


def _question_json(q: Question) -> dict[str, Any]:
    out: dict[str, Any] = {
        "question_id": q.question_id,
        "question": q.question,
        "question_type": q.question_type,
    }
    if q.program is not None:
        out["program"] = list(q.program)
    if q.choices is not None:
        out["choices"] = [_choice_json(c) for c in q.choices]
    elif q.answer is not None:
        out["answer"] = q.answer
    out.update(q.extra)
    return out


def _choice_json(c: Choice) -> dict[str, Any]:
    out: dict[str, Any] = {"choice_id": c.choice_id, "choice": c.choice}
    if c.program is not None:
        out["program"] = list(c.program)
    if c.answer is not None:
        out["answer"] = c.answer
    out.update(c.extra)
    return out


def write_questions(path: str | Path, videos: Iterable[VideoQuestions | Mapping[str, Any]]) -> int:
    """Write a question file atomically; entries may be VideoQuestions or dicts in the released
    layout (checked first). Returns the number of videos."""
    entries = []
    for i, v in enumerate(videos):
        video = v if isinstance(v, VideoQuestions) else VideoQuestions.from_json(v, path, f"[{i}]")
        entries.append(video.to_json())
    write_text(Path(path), dump_json(entries))
    return len(entries)


@without_gc
def read_questions(path: str | Path) -> list[VideoQuestions]:
    """Read and check a question file; faults name the file and the field."""
    f = Fields(path)
    data = f.sequence(load_json(path), "")
    videos = [_parse_video(f, v, f"[{i}]") for i, v in enumerate(data)]
    seen: dict[int, int] = {}
    for i, v in enumerate(videos):
        if v.scene_index in seen:
            raise f.fail(f"[{i}].scene_index", f"scene {v.scene_index} is also entry "
                         f"[{seen[v.scene_index]}]")  # fmt: skip
        seen[v.scene_index] = i
    return videos


def check_answers(videos: Sequence[VideoQuestions], path: str | Path) -> None:
    """Refuse a question file to score against unless every question carries its answer: the
    test split (no answers at all) is a UserError saying so; one missing answer an InputError
    naming its field (`[i].questions[j].answer` or `...choices[k].answer`)."""
    missing, total = [], 0
    for i, v in enumerate(videos):
        for j, q in enumerate(v.questions):
            total += 1
            if q.choices is None:
                if q.answer is None:
                    missing.append((f"[{i}].questions[{j}].answer", v.scene_index, q.question_id))
                continue
            for k, c in enumerate(q.choices):
                if c.answer is None:
                    missing.append((f"[{i}].questions[{j}].choices[{k}].answer", v.scene_index,
                                    q.question_id))  # fmt: skip
                    break
    if not missing:
        return
    if len(missing) == total:
        raise UserError(f"{path}: the question file has no answers (the test split?): score "
                        "against train or validation, or send the answers to the challenge's "
                        "server")  # fmt: skip
    field, scene, qid = missing[0]
    more = f" ({len(missing) - 1} more questions lack theirs)" if len(missing) > 1 else ""
    raise InputError(path, None, field, f"question {qid} of scene {scene} has no answer (null); "
                     f"scoring needs every question's answer{more}")  # fmt: skip


def has_answers(videos: Iterable[VideoQuestions]) -> bool:
    """Whether every question carries its answer (false for the test split)."""
    for v in videos:
        for q in v.questions:
            if q.choices is None:
                if q.answer is None:
                    return False
            elif any(c.answer is None for c in q.choices):
                return False
    return True


def _parse_video(f: Fields, data: Any, where: str) -> VideoQuestions:
    f.mapping(data, where, ("scene_index", "video_filename", "questions"))
    scene_index = f.integer(data["scene_index"], (where, ".scene_index"), minimum=0)
    video_filename = f.string(data["video_filename"], (where, ".video_filename"))
    questions = []
    ids: set[int] = set()
    for i, raw in enumerate(f.sequence(data["questions"], (where, ".questions"))):
        q = _parse_question(f, raw, f"{where}.questions[{i}]", scene_index)
        if q.question_id in ids:
            raise f.fail(f"{where}.questions[{i}].question_id",
                         f"question {q.question_id} appears twice in scene {scene_index}")
        ids.add(q.question_id)
        questions.append(q)
    extra = {k: v for k, v in data.items() if k not in ("scene_index", "video_filename",
                                                          "questions")}  # fmt: skip
    return VideoQuestions(scene_index, video_filename, tuple(questions), extra)


def _parse_question(f: Fields, raw: Any, where: str, scene_index: int) -> Question:
    f.mapping(raw, where, ("question_id", "question", "question_type"))
    qid = f.integer(raw["question_id"], (where, ".question_id"), minimum=0)
    text = f.string(raw["question"], (where, ".question"))
    qtype = f.string(raw["question_type"], (where, ".question_type"), QUESTION_TYPES)
    program = _program(f, raw, where)
    extra = {k: v for k, v in raw.items() if k not in _QUESTION_KEYS}
    if qtype == "descriptive":
        if "choices" in raw:
            raise f.fail((where, ".choices"), "a descriptive question has an answer, not choices")
        answer = None
        if raw.get("answer") is not None:
            answer = f.string(raw["answer"], (where, ".answer"))
        return Question(qid, text, qtype, program, answer, None, extra)
    if raw.get("answer") is not None:
        raise f.fail((where, ".answer"), f"a {qtype} question answers per choice, not as a whole")
    if "choices" not in raw:
        raise f.fail((where, ".choices"), "missing")
    choices = []
    ids: set[int] = set()
    raw_choices = f.sequence(raw["choices"], (where, ".choices"))
    if not raw_choices:
        # an empty list would score as right wherever "right unless a choice is wrong" is the rule
        raise f.fail((where, ".choices"), f"question {qid} of scene {scene_index} has no choices; "
                     f"{qtype} questions need at least one")
    for i, c in enumerate(raw_choices):
        at = f"{where}.choices[{i}]"
        f.mapping(c, at, ("choice_id", "choice"))
        cid = f.integer(c["choice_id"], (at, ".choice_id"), minimum=0)
        if cid in ids:
            raise f.fail((at, ".choice_id"), f"choice {cid} appears twice in question {qid}")
        ids.add(cid)
        answer = None
        if c.get("answer") is not None:
            answer = f.string(c["answer"], (at, ".answer"), CHOICE_ANSWERS)
        choices.append(
            Choice(cid, f.string(c["choice"], (at, ".choice")), _program(f, c, at), answer,
                   {k: v for k, v in c.items() if k not in _CHOICE_KEYS})
        )  # fmt: skip
    return Question(qid, text, qtype, program, None, tuple(choices), extra)


def _program(f: Fields, raw: dict[str, Any], where: str) -> tuple[str, ...] | None:
    if raw.get("program") is None:
        return None
    return f.strings(raw["program"], (where, ".program"))
