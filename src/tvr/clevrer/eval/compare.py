"""Paired comparison of two CLEVRER evaluations of the same questions (`tvr clevrer compare`).

A and B are the `detail.jsonl` files of two `tvr clevrer evaluate --out` runs (or their
folders): one line per question of the question file, right or wrong, and for a
multiple-choice question whether each option is right. Scored on the same questions, they are
compared with the paper's metrics (Table 3), item by item: descriptive accuracy question by
question; per-option accuracy of each multiple-choice type option by option; per-question
accuracy question by question; and all multiple-choice questions together. Each is right or
wrong per item: the exact McNemar test of the items right in one side only and a seeded
bootstrap interval of A-B (`tvr.results.compare.accuracy_row`). The options of one question are
paired items of their own, as the per-option accuracy counts them (they are not independent,
so that row's p and interval are optimistic). Also descriptive accuracy per sub-type.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tvr.clevrer.data.questions import MULTIPLE_CHOICE_TYPES, QUESTION_TYPES
from tvr.core.errors import InputError, UserError
from tvr.results import compare as shared


@dataclass(frozen=True)
class QuestionDetail:
    """What the comparison reads of one question's detail line."""

    line: int
    type: str
    subtype: str | None  # descriptive questions
    correct: bool
    options: dict[int, bool] | None  # multiple-choice questions: each option right or wrong


@dataclass(frozen=True)
class Detail:
    """One evaluation's detail.jsonl: its questions by "{scene_index}/{question_id}"."""

    path: Path
    label: str
    questions: dict[str, QuestionDetail]


def detail_file(path: str | Path) -> Path:
    """The detail.jsonl of an evaluation folder, or the file itself; UserError if there is none."""
    return shared.detail_file(path, "tvr clevrer evaluate --out")


def _options(raw: Any, file: Path, line: int) -> dict[int, bool]:
    if not isinstance(raw, list) or not raw:
        raise InputError(file, line, "options", "expected the list of the question's options")
    options: dict[int, bool] = {}
    for k, option in enumerate(raw):
        where = f"options[{k}]"
        if not isinstance(option, dict):
            raise InputError(file, line, where, "expected an object")
        cid = option.get("choice_id")
        if not isinstance(cid, int) or isinstance(cid, bool):
            raise InputError(file, line, f"{where}.choice_id", "expected an integer")
        if not isinstance(option.get("correct"), bool):
            raise InputError(file, line, f"{where}.correct", "expected true or false")
        if cid in options:
            raise InputError(file, line, f"{where}.choice_id", f"option {cid} is listed twice")
        options[cid] = option["correct"]
    return options


def read_detail(path: str | Path, label: str | None = None) -> Detail:
    """Read an evaluation's detail lines (errors name the file, line and field)."""
    file = detail_file(path)
    questions: dict[str, QuestionDetail] = {}
    for lineno, row in shared.detail_rows(file):
        key = row["id"]
        if key in questions:
            raise InputError(file, lineno, "id", f"question {key!r} is scored twice")
        qtype = row.get("type")
        if qtype not in QUESTION_TYPES:
            raise InputError(file, lineno, "type", f"expected one of {', '.join(QUESTION_TYPES)}")
        if not isinstance(row.get("correct"), bool):
            raise InputError(file, lineno, "correct", "expected true or false")
        subtype, options = None, None
        if qtype == "descriptive":
            subtype = row.get("subtype")
            if not isinstance(subtype, str):
                raise InputError(file, lineno, "subtype", "expected the descriptive sub-type")
        else:
            options = _options(row.get("options"), file, lineno)
        questions[key] = QuestionDetail(lineno, qtype, subtype, row["correct"], options)
    if not questions:
        raise UserError(f"{file}: no questions")
    return Detail(file, label if label is not None else shared.default_label(path), questions)


def check_same_questions(a: Detail, b: Detail) -> None:
    """UserError naming the file and line of the first question that only one scores, or that
    the two score as different types or with different options."""
    shared.check_same_keys((a.path, a.questions), (b.path, b.questions),
                           lambda key: f"question {key!r}", "questions")  # fmt: skip
    for key, q in b.questions.items():
        other = a.questions[key]
        if q.type != other.type:
            raise InputError(b.path, q.line, "type", f"question {key!r} is {q.type} here and "
                             f"{other.type} in {a.path}: not the same questions")  # fmt: skip
        if (
            q.options is not None
            and other.options is not None
            and (set(q.options) != set(other.options))
        ):
            raise InputError(b.path, q.line, "options", f"question {key!r} has other options "
                             f"here than in {a.path}: not the same questions")  # fmt: skip


def _correct(detail: Detail, types: tuple[str, ...]) -> dict[str, bool]:
    return {k: q.correct for k, q in detail.questions.items() if q.type in types}


def _option_correct(detail: Detail, types: tuple[str, ...]) -> dict[str, bool]:
    return {f"{k}/{cid}": right for k, q in detail.questions.items() if q.type in types
            for cid, right in (q.options or {}).items()}  # fmt: skip


def compare_evaluations(
    a: Detail, b: Detail, resamples: int = 10000, seed: int = 0
) -> dict[str, Any]:
    """The compare.json document: A against B on each of the paper's metrics, then descriptive
    accuracy per sub-type."""
    check_same_questions(a, b)
    rows: list[dict[str, Any]] = []
    notes: list[str] = []

    def add(metric: str, name: str, ca: dict[str, bool], cb: dict[str, bool]) -> None:
        if ca:
            rows.append(shared.accuracy_row(metric, ca, cb, resamples, seed, name=name))
        else:
            notes.append(f"{name}: left out, no such questions")

    add("descriptive", "descriptive", _correct(a, ("descriptive",)), _correct(b, ("descriptive",)))
    for qtype in (*MULTIPLE_CHOICE_TYPES, "multiple_choice"):
        types = MULTIPLE_CHOICE_TYPES if qtype == "multiple_choice" else (qtype,)
        name = "all multiple choice" if qtype == "multiple_choice" else qtype
        add(f"{qtype}.per_option", f"{name} per option",
            _option_correct(a, types), _option_correct(b, types))  # fmt: skip
        add(f"{qtype}.per_question", f"{name} per question", _correct(a, types), _correct(b, types))
    subtypes = {k: q.subtype for k, q in a.questions.items() if q.type == "descriptive"}
    descriptive_a, descriptive_b = _correct(a, ("descriptive",)), _correct(b, ("descriptive",))
    by_subtype = shared.accuracy_by("subtype", subtypes, descriptive_a, descriptive_b)
    return {
        "benchmark": "clevrer",
        **shared.sides(a, b),
        "questions": len(a.questions),
        "resamples": resamples,
        "seed": seed,
        "metrics": rows,
        "descriptive_by_subtype": by_subtype,
        "notes": notes,
    }


def markdown_lines(document: dict[str, Any]) -> list[str]:
    """compare.md: the heading, the metric table, the notes, descriptive accuracy per sub-type."""
    how = (f"{document['questions']} questions. Paired on each question (per option: on each "
           "option, the options of one question counted as separate items, as the per-option "
           "accuracy counts them): the exact McNemar test; 95%: bootstrap of A-B "
           f"({document['resamples']} resamples, seed {document['seed']}).")  # fmt: skip
    lines = [*shared.heading_lines("CLEVRER", document, how),
             *shared.metric_table(document["metrics"], name="name")]  # fmt: skip
    lines += [f"Note: {note}." for note in document["notes"]]
    if document["descriptive_by_subtype"]:
        lines += ["", "## Descriptive accuracy by sub-type", "",
                  *shared.accuracy_by_table(document["descriptive_by_subtype"], "subtype",
                                            "sub-type")]  # fmt: skip
    return lines
