"""Paired comparison of two VisualTrans evaluations of the same items (`tvr visualtrans compare`).

A and B are `tvr visualtrans evaluate --out` folders (detail.jsonl, and summary.json for the
scoring mode) or their detail.jsonl files: one line per scored item of the data file, right or
wrong. Scored on the same items (by their position in the file, which duplicates make
necessary: they share an id), they are compared item by item with the paper's metrics
(Table 2): overall accuracy and the accuracy of each subtask, by the exact McNemar test of the
items right in one side only with a seeded bootstrap interval of A-B
(`tvr.results.compare.accuracy_row`). Also each side's dimension means (the mean of its
subtasks' accuracies, as Table 2 averages them; not tested), accuracy per answer format, and
the items without an answer. Evaluations scored in different modes (official, normalized) are
compared, with a note.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tvr.core.errors import InputError, UserError
from tvr.results import compare as shared
from tvr.visualtrans.data.dataset import DIMENSIONS, SUBTASK_LABELS, TASK_TYPES

SUMMARY = "summary.json"


@dataclass(frozen=True)
class ItemDetail:
    """What the comparison reads of one item's detail line."""

    line: int
    id: str
    task_type: str
    format: str | None
    answered: bool
    correct: bool


@dataclass(frozen=True)
class Detail:
    """One evaluation's items by their index in the data file, and its scoring mode."""

    path: Path
    label: str
    items: dict[int, ItemDetail]
    mode: str | None


def detail_file(path: str | Path) -> Path:
    """The detail.jsonl of an evaluation folder, or the file itself; UserError if there is none."""
    return shared.detail_file(path, "tvr visualtrans evaluate --out")


def _mode(file: Path) -> str | None:
    """The scoring mode in summary.json beside the detail file, if it is there and says one."""
    try:
        summary = json.loads((file.parent / SUMMARY).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    mode = summary.get("mode") if isinstance(summary, dict) else None
    return mode if isinstance(mode, str) else None


def read_detail(path: str | Path, label: str | None = None) -> Detail:
    """Read an evaluation's detail lines (errors name the file, line and field)."""
    file = detail_file(path)
    items: dict[int, ItemDetail] = {}
    for lineno, row in shared.detail_rows(file):
        index = row.get("index")
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise InputError(file, lineno, "index", "expected the item's index (0, 1, ...)")
        if index in items:
            raise InputError(file, lineno, "index", f"item {index} is scored twice")
        task = row.get("task_type")
        if task not in TASK_TYPES:
            raise InputError(file, lineno, "task_type", f"expected one of {', '.join(TASK_TYPES)}")
        if not isinstance(row.get("correct"), bool):
            raise InputError(file, lineno, "correct", "expected true or false")
        fmt = row.get("format")
        items[index] = ItemDetail(lineno, row["id"], task, fmt if isinstance(fmt, str) else None,
                                  row.get("status") == "answered", row["correct"])  # fmt: skip
    if not items:
        raise UserError(f"{file}: no items")
    return Detail(file, label if label is not None else shared.default_label(path), items,
                  _mode(file))  # fmt: skip


def check_same_items(a: Detail, b: Detail) -> None:
    """UserError naming the file and line of the first item that only one scores, or that is
    another question in the other (another data file)."""
    shared.check_same_keys((a.path, a.items), (b.path, b.items),
                           lambda key: f"item {key}", "items")  # fmt: skip
    for index, item in b.items.items():
        other = a.items[index]
        if item.id != other.id:
            raise InputError(b.path, item.line, "id", f"item {index} is {item.id} here and "
                             f"{other.id} in {a.path}: not the same data file")  # fmt: skip


def _correct(detail: Detail, task: str | None = None) -> dict[str, bool]:
    return {str(i): it.correct for i, it in detail.items.items()
            if task is None or it.task_type == task}  # fmt: skip


def _dimension_means(detail: Detail) -> dict[str, float | None]:
    """Each dimension's mean of its subtasks' accuracies (subtasks without items left out)."""
    out: dict[str, float | None] = {}
    for dim, tasks in DIMENSIONS.items():
        accs = []
        for t in tasks:
            right = [it.correct for it in detail.items.values() if it.task_type == t]
            if right:
                accs.append(sum(right) / len(right))
        out[dim] = sum(accs) / len(accs) if accs else None
    return out


def compare_evaluations(
    a: Detail, b: Detail, resamples: int = 10000, seed: int = 0
) -> dict[str, Any]:
    """The compare.json document: overall and per-subtask accuracy, A against B."""
    check_same_items(a, b)
    rows = [shared.accuracy_row("overall", _correct(a), _correct(b), resamples, seed,
                                name="Overall")]  # fmt: skip
    for task in TASK_TYPES:
        ca = _correct(a, task)
        if ca:
            rows.append(shared.accuracy_row(task, ca, _correct(b, task), resamples, seed,
                                            name=SUBTASK_LABELS[task]))  # fmt: skip
    formats = {str(i): it.format or "?" for i, it in a.items.items()}
    notes = []
    if a.mode and b.mode and a.mode != b.mode:
        notes.append(f"A was scored in {a.mode} mode and B in {b.mode} mode")
    means_a, means_b = _dimension_means(a), _dimension_means(b)
    unanswered = {side: sum(not it.answered for it in d.items.values())
                  for side, d in (("a", a), ("b", b))}  # fmt: skip
    return {
        "benchmark": "visualtrans",
        **shared.sides(a, b),
        "modes": {"a": a.mode, "b": b.mode},
        "items": len(a.items),
        "resamples": resamples,
        "seed": seed,
        "metrics": rows,
        "dimension_means": {d: {"a": means_a[d], "b": means_b[d]} for d in DIMENSIONS},
        "by_format": shared.accuracy_by("format", formats, _correct(a), _correct(b)),
        "unanswered": unanswered,
        "notes": notes,
    }


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def markdown_lines(document: dict[str, Any]) -> list[str]:
    """compare.md: the heading, the metric table, the notes, dimension means, formats."""
    how = (
        f"{document['items']} items. Paired on each item: the exact McNemar test; 95%: "
        f"bootstrap of A-B ({document['resamples']} resamples, seed {document['seed']})."
    )
    lines = [*shared.heading_lines("VisualTrans", document, how),
             *shared.metric_table(document["metrics"], name="name")]  # fmt: skip
    overall = document["metrics"][0]
    lines += ["", f"Overall: {overall['only_a']} items right in A only, {overall['only_b']} in B "
              f"only. Without an answer (counted wrong): A {document['unanswered']['a']}, "
              f"B {document['unanswered']['b']}."]  # fmt: skip
    lines += [f"Note: {note}." for note in document["notes"]]
    lines += [
        "",
        "## Dimension means (Table 2: the mean of the subtasks' accuracies)",
        "",
        shared.table_row(("dimension", "A", "B")),
        shared.table_row(("---", "---:", "---:")),
    ]
    for dim, m in document["dimension_means"].items():
        lines.append(shared.table_row((dim, _pct(m["a"]), _pct(m["b"]))))
    lines += [
        "",
        "## Accuracy by answer format",
        "",
        *shared.accuracy_by_table(document["by_format"], "format", "format"),
    ]
    return lines
