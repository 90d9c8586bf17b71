"""The paper's language-only answerers as submissions, and the random one's expected accuracy.

- random (the paper's "Q-type (random)"): a descriptive answer drawn uniformly from its
  sub-type's answer space (count 0-5, exist yes/no, the 8 colours, 3 shapes, 2 materials), each
  option of a multiple-choice question "correct" or "wrong" with probability 1/2;
- frequent ("Q-type (frequent)"): the most frequent answer of the training questions of the same
  descriptive sub-type, and the most frequent option label of the same multiple-choice type
  (ties broken by the answer's name, so the result does not depend on file order).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from tvr.clevrer.data.questions import MULTIPLE_CHOICE_TYPES, Question, VideoQuestions
from tvr.clevrer.data.submission import SubmittedQuestion, SubmittedVideo
from tvr.clevrer.vocab import COLORS, MATERIALS, SHAPES

#: each descriptive sub-type's answers (the paper's appendix A)
ANSWER_SPACES: dict[str, tuple[str, ...]] = {
    "count": ("0", "1", "2", "3", "4", "5"),
    "exist": ("yes", "no"),
    "query_color": COLORS,
    "query_shape": SHAPES,
    "query_material": MATERIALS,
}


def answer_space(q: Question, others: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The answers a descriptive question's sub-type allows; `others` for an unknown sub-type
    (tvr passes the distinct answers of the file's descriptive questions)."""
    space = ANSWER_SPACES.get(q.subtype)
    return others if space is None else space


def random_answers(questions: Sequence[VideoQuestions], seed: int = 0) -> list[SubmittedVideo]:
    """Random answers to every question (reproducible per seed)."""
    rng = np.random.default_rng(seed)
    seen = _descriptive_answers(questions)
    out = []
    for v in questions:
        answers = []
        for q in v.questions:
            if q.choices is None:
                space = answer_space(q, seen) or ("",)
                answers.append(SubmittedQuestion(q.question_id, answer=space[rng.integers(len(space))]))
            else:
                labels = {c.choice_id: ("correct", "wrong")[rng.integers(2)] for c in q.choices}
                answers.append(SubmittedQuestion(q.question_id, choices=labels))
        out.append(SubmittedVideo(v.scene_index, tuple(answers)))
    return out


def frequent_answers(
    train: Sequence[VideoQuestions], questions: Sequence[VideoQuestions]
) -> list[SubmittedVideo]:
    """The most frequent training answer of each descriptive sub-type / option label of each
    multiple-choice type, given to every question of `questions`."""
    counts: dict[str, Counter[str]] = {}
    for v in train:
        for q in v.questions:
            if q.choices is None:
                if q.answer is not None:
                    counts.setdefault(q.subtype, Counter())[q.answer] += 1
            else:
                for c in q.choices:
                    if c.answer is not None:
                        counts.setdefault(q.question_type, Counter())[c.answer] += 1
    best = {k: min(c, key=lambda a: (-c[a], a)) for k, c in counts.items()}
    out = []
    for v in questions:
        answers = []
        for q in v.questions:
            if q.choices is None:
                answers.append(SubmittedQuestion(q.question_id, answer=best.get(q.subtype, "")))
            else:
                label = best.get(q.question_type, "wrong")
                answers.append(
                    SubmittedQuestion(q.question_id, choices={c.choice_id: label for c in q.choices})
                )
        out.append(SubmittedVideo(v.scene_index, tuple(answers)))
    return out


def chance_level(questions: Sequence[VideoQuestions]) -> dict[str, Any]:
    """The expected accuracy of `random_answers` on these questions: descriptive (mean of
    1/|answer space| where the answer lies in it), and per type 1/2 per option and the mean of
    2^-options per question."""
    seen = _descriptive_answers(questions)
    desc: list[float] = []
    per_question: dict[str, list[float]] = {t: [] for t in MULTIPLE_CHOICE_TYPES}
    options: dict[str, int] = {t: 0 for t in MULTIPLE_CHOICE_TYPES}
    for v in questions:
        for q in v.questions:
            if q.choices is None:
                space = answer_space(q, seen)
                desc.append(1.0 / len(space) if q.answer in space else 0.0)
            else:
                per_question[q.question_type].append(0.5 ** len(q.choices))
                options[q.question_type] += len(q.choices)
    out: dict[str, Any] = {"descriptive": float(np.mean(desc)) if desc else None}
    for t in MULTIPLE_CHOICE_TYPES:
        out[t] = {
            "per_option": 0.5 if options[t] else None,
            "per_question": float(np.mean(per_question[t])) if per_question[t] else None,
        }
    return out


def _descriptive_answers(questions: Sequence[VideoQuestions]) -> tuple[str, ...]:
    """The distinct answers of the descriptive questions, sorted."""
    found = {
        q.answer
        for v in questions
        for q in v.questions
        if q.choices is None and q.answer is not None
    }
    return tuple(sorted(found))
