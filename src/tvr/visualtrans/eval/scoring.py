"""Score VLM replies on VisualTrans: judge each item, then aggregate as the paper's Table 2 does.

Modes (docs/visualtrans.md has every rule):

* `official` - the published scorer's rules, so numbers compare with Table 2: counts are a
  scalar exact match of the extracted string with the label; multiple choice takes the first
  character of the extracted answer when it is a letter A-D (any case), else the whole answer
  upper-cased; sets remove brackets, split on commas, strip, de-duplicate and sort, then must
  equal the label read the same way (case-sensitive).
* `normalized` - tvr's careful reading: case and trailing punctuation do not matter, counts
  accept number words, sets also split on "and", "none" is the empty set, and a word that
  starts with a letter ("Because ...") is not an option letter.

Aggregates: overall accuracy over items (micro); per subtask; per dimension as the mean of its
subtasks' accuracies (Table 2's "Mean" columns, which average the two-decimal percentages:
`table2_pct`); per scenario; per answer format. Items with no
answer - no result line, a failed request, or no final answer found - count as wrong and are
listed, never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any

from tvr.core.errors import InputError, UserError
from tvr.visualtrans.data import extract as ex
from tvr.visualtrans.data.dataset import (
    ANSWER_FORMATS,
    DIMENSIONS,
    SUBTASK_LABELS,
    TASK_TYPES,
    Dataset,
    Item,
    item_id,
)
from tvr.vlm.results import is_success, read_results

MODES = ("official", "normalized")
STATUSES = ("answered", "no_answer", "failed", "missing")


@dataclass(frozen=True)
class ItemScore:
    """The verdict on one item: status, correctness, what was extracted and how it was read."""

    item: Item
    status: str
    correct: bool
    extracted: str | None = None
    rule: str | None = None
    prediction: Any = None
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        it = self.item
        return {
            "index": it.index,
            "id": it.id,
            "task_type": it.task_type,
            "dimension": it.dimension,
            "scene": it.scene,
            "format": it.answer_format,
            "label": it.label,
            "status": self.status,
            "correct": self.correct,
            "extracted": self.extracted,
            "rule": self.rule,
            "prediction": self.prediction,
            "error": self.error,
        }


# --- official rules -----------------------------------------------------------------------


def official_choice(answer: str) -> str:
    """The published multiple-choice reading: first character if A-D (any case), else all."""
    answer = answer.strip()
    if answer and answer[0].upper() in ex.CHOICE_LETTERS:
        return answer[0].upper()
    return answer.upper()


def official_objects(text: str) -> list[str]:
    """The published set reading: drop brackets, split on commas, strip, de-duplicate, sort."""
    parts = (p.strip() for p in re.sub(r"[\[\](){}]", "", text).split(","))
    return sorted({p for p in parts if p})


def judge_official(item: Item, reply: str) -> ItemScore:
    found = ex.extract_official(reply)
    if item.answer_format == "count":
        prediction: Any = found.text
        correct = found.text == item.label
    elif item.answer_format == "choice":
        prediction = official_choice(found.text)
        correct = prediction == item.label.upper()
    else:
        prediction = official_objects(found.text)
        correct = prediction == official_objects(item.label)
    status = "answered" if found.found else "no_answer"
    return ItemScore(item, status, correct and found.found, found.text, found.rule, prediction)


# --- normalized rules ---------------------------------------------------------------------


def known_objects(item: Item) -> set[str]:
    """Object names an "and" must not split: the question's object list and the label's items."""
    names = ex.objects_in_question(item.question)
    names.update(n for part in item.label.split(",") if (n := ex.normalize_object_name(part)))
    return names


def normalized_label(item: Item) -> Any:
    """The label read with the normalized readers (a letter, an int or a set of names)."""
    if item.answer_format == "choice":
        return item.label.strip().upper()
    if item.answer_format == "count":
        return ex.read_count(item.label)
    return ex.read_set(item.label, known_objects(item))


def judge_normalized(item: Item, reply: str) -> ItemScore:
    found = ex.extract_normalized(reply)
    prediction: Any = None
    if found.found:
        if item.answer_format == "choice":
            prediction = ex.read_choice(found.text)
        elif item.answer_format == "count":
            prediction = ex.read_count(found.text)
        else:
            prediction = ex.read_set(found.text, known_objects(item))
    if prediction is None:
        return ItemScore(item, "no_answer", False, found.text, found.rule, None)
    correct = prediction == normalized_label(item)
    if isinstance(prediction, frozenset):
        prediction = sorted(prediction)
    return ItemScore(item, "answered", correct, found.text, found.rule, prediction)


def judge(item: Item, reply: str, mode: str) -> ItemScore:
    """The verdict on one reply under `mode`."""
    if mode == "official":
        return judge_official(item, reply)
    if mode == "normalized":
        return judge_normalized(item, reply)
    raise UserError(f"unknown scoring mode {mode!r}; expected one of {', '.join(MODES)}")


# --- replies ------------------------------------------------------------------------------


def adopt_official_line(line: dict[str, Any]) -> dict[str, Any] | None:
    """A record of a line of the official runner's output (the item's fields plus `assistant`),
    whose id is derived from its question and images; None for any other line."""
    question, images = line.get("question"), line.get("images")
    if not isinstance(question, str) or not isinstance(images, list) or "assistant" not in line:
        return None
    reply = line["assistant"]
    return {"id": item_id(question, images), "reply": reply, "error": None}


def load_replies(
    path: str | Path, lenient: bool = False
) -> tuple[dict[str, dict[str, Any]], list[int]]:
    """Records by item id from a `tvr vlm run` results file or from the official runner's
    output, and the numbers of the lines that could not be read: the first such line is an
    InputError unless `lenient` (then its item counts as missing, that is wrong)."""
    results = read_results(path, missing_ok=False, adopt=adopt_official_line, strict=not lenient,
                           payload="reply")  # fmt: skip
    if not results.lines:
        raise InputError(path, None, None, "no results (the file is empty)")
    return results.records, results.unreadable_lines


# --- aggregation --------------------------------------------------------------------------


def _half_up(value: Decimal) -> Decimal:
    return value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def percent_2dp(fraction: float) -> Decimal:
    """A fraction as a percentage with two decimals, halves rounded up (as printed in papers)."""
    return _half_up(Decimal(repr(round(100 * fraction, 9))))


def _block(scores: list[ItemScore]) -> dict[str, Any]:
    n = len(scores)
    correct = sum(s.correct for s in scores)
    return {"items": n, "correct": correct, "accuracy": correct / n if n else None}


@dataclass
class Scoreboard:
    """The verdicts on every scored item and their aggregates."""

    mode: str
    scores: list[ItemScore]
    unique_only: bool = False

    def summary(self) -> dict[str, Any]:
        by_task = {t: [s for s in self.scores if s.item.task_type == t] for t in TASK_TYPES}
        subtasks = {t: {"label": SUBTASK_LABELS[t], **_block(by_task[t])} for t in TASK_TYPES}
        dimensions = {}
        for dim, tasks in DIMENSIONS.items():
            accs = [subtasks[t]["accuracy"] for t in tasks if subtasks[t]["items"]]
            members = [s for t in tasks for s in by_task[t]]
            # Table 2 averages the subtask percentages as printed (two decimals); the exact
            # mean can differ in the last digit (o3's procedural mean: 55.07 vs 55.08)
            rounded = [percent_2dp(a) for a in accs]
            dimensions[dim] = {
                "accuracy": sum(accs) / len(accs) if accs else None,
                "table2_pct": float(_half_up(sum(rounded) / len(rounded))) if rounded else None,
                "subtasks": list(tasks),
                "items": len(members),
                "correct": sum(s.correct for s in members),
            }
        scenes = sorted({s.item.scene for s in self.scores})
        unanswered = [
            {
                "index": s.item.index,
                "id": s.item.id,
                "task_type": s.item.task_type,
                "status": s.status,
                **({"error": s.error} if s.error else {}),
            }
            for s in self.scores
            if s.status != "answered"
        ]
        return {
            "mode": self.mode,
            "unique_only": self.unique_only,
            "overall": _block(self.scores),
            "subtasks": subtasks,
            "dimensions": dimensions,
            "scenes": {sc: _block([s for s in self.scores if s.item.scene == sc]) for sc in scenes},
            "formats": {
                f: _block([s for s in self.scores if s.item.answer_format == f])
                for f in ANSWER_FORMATS
            },
            "status_counts": {st: sum(s.status == st for s in self.scores) for st in STATUSES},
            "unanswered": unanswered,
        }


def score_dataset(
    dataset: Dataset,
    records: Mapping[str, Mapping[str, Any]],
    mode: str,
    unique_only: bool = False,
) -> Scoreboard:
    """Judge every item of the dataset (or its first item per id) against the records by id."""
    if mode not in MODES:
        raise UserError(f"unknown scoring mode {mode!r}; expected one of {', '.join(MODES)}")
    items = dataset.unique_items() if unique_only else dataset.items
    scores = []
    for item in items:
        record = records.get(item.id)
        if record is None:
            scores.append(ItemScore(item, "missing", False))
        elif not is_success(dict(record)):
            error = str(record.get("error") or "no reply")
            scores.append(ItemScore(item, "failed", False, error=error))
        else:
            scores.append(judge(item, str(record["reply"]), mode))
    return Scoreboard(mode, scores, unique_only)
