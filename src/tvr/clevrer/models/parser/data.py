"""The parser's samples: (words -> program) pairs of the three parsers, and the paper's selection.

NS-DR parses with separate networks (the paper's appendix B): descriptive questions, the
questions of multiple-choice questions, and their choices. Each sample is one of these ROLES.
Its input is the question type as a marker word (`<descriptive>`, `<explanatory>`, ...) followed
by the words of the question or choice: a choice's program may depend on its question's type
(the release's predictive choices start from `events`, its counterfactual ones from
`all_events`), and the type is known for every question, the test split's included.

"Trained on n programs" (appendix C): n descriptive question-program pairs, n multiple-choice
questions of the three types together, and 4n choices drawn from the choices of all
multiple-choice questions, each drawn at random with a seed (`select_programs`); None takes all.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from tvr.clevrer.data.questions import VideoQuestions
from tvr.clevrer.models.parser.tokens import tokenize

ROLES: tuple[str, ...] = ("descriptive", "question", "choice")
#: choices drawn per program of n (the paper's 4n)
CHOICES_PER_PROGRAM = 4


@dataclass(frozen=True)
class ParserSample:
    """One text to parse: its role, input words, program (None when the file has none), and where
    it comes from (scene, question, choice or None)."""

    role: str
    words: tuple[str, ...]
    program: tuple[str, ...] | None
    scene_index: int
    question_id: int
    choice_id: int | None = None


def type_marker(question_type: str) -> str:
    return f"<{question_type}>"


def parser_samples(
    videos: Iterable[VideoQuestions], with_programs: bool = False
) -> list[ParserSample]:
    """Every question and choice of `videos` as a sample, in file order; `with_programs` keeps
    only those that have a program (what training needs)."""
    out = []
    for v in videos:
        for q in v.questions:
            marker = type_marker(q.question_type)
            role = "descriptive" if q.choices is None else "question"
            texts = [(role, q.question, q.program, None)]
            texts += [("choice", c.choice, c.program, c.choice_id) for c in q.choices or ()]
            for role, text, program, choice_id in texts:
                if with_programs and not program:
                    continue
                words = (marker, *tokenize(text))
                out.append(
                    ParserSample(role, words, program, v.scene_index, q.question_id, choice_id)
                )
    return out


def select_programs(
    samples: Sequence[ParserSample], n: int | None, seed: int
) -> list[ParserSample]:
    """The paper's training selection of `n` programs (see the module), or all with None; the
    order is the samples' own."""
    if n is None:
        return list(samples)
    rng = np.random.default_rng([seed, n])
    keep: list[int] = []
    for role, wanted in (("descriptive", n), ("question", n), ("choice", CHOICES_PER_PROGRAM * n)):
        pool = [i for i, s in enumerate(samples) if s.role == role]
        if len(pool) > wanted:
            pool = list(rng.choice(pool, size=wanted, replace=False))
        keep += pool
    return [samples[i] for i in sorted(keep)]


def role_counts(samples: Iterable[ParserSample]) -> dict[str, int]:
    counts = {r: 0 for r in ROLES}
    for s in samples:
        counts[s.role] += 1
    return counts
