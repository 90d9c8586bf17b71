"""Model-free baselines of VisualTrans, written as predictions (`tvr visualtrans baseline KIND`).

The paper reports none (its Table 2 holds VLMs only); these are the floors the field uses for
a question-answering benchmark, each answering from the question's words alone:

- random: an answer drawn uniformly from what the question offers: one of the option letters
  the question lists (A-D), a subset of its object list (each object in or out with probability
  1/2, so every subset is as likely; the empty set answers "none"), or for a count one of the
  distinct count labels of the file. Seeded: the same seed gives the same file.
- oracle: the label itself, the ceiling (100%): a check that the scorer reads every answer
  of a file, e.g. one made by `tvr visualtrans build`.
- frequent: the most frequent label of the item's subtask and answer format in the file (ties
  broken by the label), the answer of a model that knows only the kind of question.
  VisualTrans is one evaluation set with no training split, so the counts come from the file
  being answered: a question-type prior measured on the test set, an upper bound of what such
  a prior gets.

Each distinct item (duplicates share an id) gets one line in the format `tvr visualtrans
evaluate --predictions` reads, the reply holding the answer in an `<answer>` tag, which both
scoring modes read: {"id": ..., "reply": "<answer>B</answer>", "error": null, "baseline": ...}.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from tvr.core.errors import UserError
from tvr.visualtrans.data.dataset import CHOICE_LETTERS, Dataset, Item, question_options

KINDS: tuple[str, ...] = ("random", "frequent", "oracle")


def random_answer(item: Item, counts: tuple[str, ...], rng: np.random.Generator) -> str:
    """A uniformly random answer among those the question offers (`counts`: the count labels)."""
    options = question_options(item)
    if item.answer_format == "choice":
        letters = CHOICE_LETTERS[: len(options)] if options else CHOICE_LETTERS
        return letters[int(rng.integers(len(letters)))]
    if item.answer_format == "set":
        chosen = [name for name in options if rng.integers(2)]
        return ", ".join(chosen) if chosen else "none"
    return counts[int(rng.integers(len(counts)))] if counts else "0"


def frequent_labels(dataset: Dataset) -> dict[tuple[str, str], str]:
    """The most frequent label of each (subtask, answer format) of the file (ties: the first
    label in sort order); choice letters upper-cased."""
    counts: dict[tuple[str, str], Counter[str]] = {}
    for item in dataset.items:
        label = item.label.strip()
        label = label.upper() if item.answer_format == "choice" else label
        counts.setdefault((item.task_type, item.answer_format), Counter())[label] += 1
    return {key: min(c, key=lambda a: (-c[a], a)) for key, c in counts.items()}


def baseline_predictions(dataset: Dataset, kind: str, seed: int = 0) -> list[dict[str, Any]]:
    """One prediction line per distinct item of the file, in file order."""
    if kind not in KINDS:
        raise UserError(f"unknown baseline {kind!r} (known: {', '.join(KINDS)})")
    rng = np.random.default_rng(seed)
    counts = tuple(sorted({it.label.strip() for it in dataset.items
                           if it.answer_format == "count"}, key=_count_order))  # fmt: skip
    frequent = frequent_labels(dataset) if kind == "frequent" else {}
    out = []
    for item in dataset.unique_items():
        if kind == "random":
            answer = random_answer(item, counts, rng)
        elif kind == "oracle":
            answer = item.label
        else:
            answer = frequent[item.task_type, item.answer_format]
        out.append({"id": item.id, "reply": f"<answer>{answer}</answer>", "error": None,
                    "baseline": kind})  # fmt: skip
    return out


def _count_order(label: str) -> tuple[int, int | str]:
    return (0, int(label)) if label.isdigit() else (1, label)
