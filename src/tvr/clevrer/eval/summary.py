"""An evaluation's summary: the content of summary.json, and the table printed with the
published numbers (tvr.clevrer.paper) beside ours."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tvr.clevrer.data.questions import DESCRIPTIVE_SUBTYPES, MULTIPLE_CHOICE_TYPES
from tvr.clevrer.eval.score import Score
from tvr.clevrer.paper import PUBLISHED


def summarize(
    score: Score, chance: dict[str, Any], questions: str | Path, predictions: str | Path
) -> dict[str, Any]:
    """summary.json: our scores (fractions 0..1), the random answerer's expected scores on the
    same questions, and the published rows (percent, as printed) with their sources."""
    return {
        "questions_file": str(questions),
        "predictions_file": str(predictions),
        "score": score.to_json(),
        "chance": chance,
        "published": [
            {"model": row.model, "source": row.source, "percent": row.as_dict()}
            for row in PUBLISHED
        ],
    }


def _ours(score: Score) -> list[float | None]:
    data = score.to_json()
    values: list[float | None] = [data["descriptive"]["accuracy"]]
    for t in MULTIPLE_CHOICE_TYPES:
        values += [data[t]["per_option"]["accuracy"], data[t]["per_question"]["accuracy"]]
    return [None if v is None else 100.0 * v for v in values]


def _chance(chance: dict[str, Any]) -> list[float | None]:
    values: list[float | None] = [chance["descriptive"]]
    for t in MULTIPLE_CHOICE_TYPES:
        values += [chance[t]["per_option"], chance[t]["per_question"]]
    return [None if v is None else 100.0 * v for v in values]


def _cells(values: list[float | None]) -> list[str]:
    def pct(v: float | None) -> str:
        return "-" if v is None else f"{v:.1f}"

    cells = [pct(values[0])]
    for i in range(1, len(values), 2):
        cells.append(f"{pct(values[i]):>5} / {pct(values[i + 1]):>5}")
    return cells


def table_lines(score: Score, chance: dict[str, Any], label: str) -> list[str]:
    """The comparison table (accuracy %), ours first, then the expected random answerer on these
    questions, then the published rows; descriptive sub-types and missing answers below."""
    header = ["model", "descriptive", "explanatory", "predictive", "counterfactual", "source"]
    rows = [[label, *_cells(_ours(score)), "these questions"]]
    rows.append(["random answerer (expected)", *_cells(_chance(chance)), "these questions"])
    for row in PUBLISHED:
        rows.append([row.model, *_cells(list(row.values)), row.source])
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header) - 1)]

    def line(r: list[str]) -> str:
        left = r[0].ljust(widths[0])
        mid = "  ".join(c.rjust(w) for c, w in zip(r[1:-1], widths[1:], strict=True))
        return f"{left}  {mid}  {r[-1]}".rstrip()

    data = score.to_json()
    lines = [
        f"{data['questions']} questions of {data['videos']} videos; accuracy %, multiple-choice "
        "types per option / per question",
    ]
    m = data["missing"]
    lines.append(
        f"missing (counted wrong): {m['videos']} videos, {m['questions']} questions, "
        f"{m['options']} options; {data['wrong_kind']} answers of the wrong kind; "
        f"{data['error_options']} options answered 'error'"
    )
    ig = data["ignored"]
    if any(ig.values()):
        lines.append(
            f"ignored (not in the question file): {ig['videos']} videos, {ig['questions']} "
            f"questions, {ig['options']} options"
        )
    lines.append(line(header))
    lines += [line(r) for r in rows]
    subs = data["descriptive"]["subtypes"]
    order = [s for s in DESCRIPTIVE_SUBTYPES if s in subs] + sorted(
        s for s in subs if s not in DESCRIPTIVE_SUBTYPES
    )
    if order:
        parts = [f"{s} {100 * subs[s]['accuracy']:.1f} ({subs[s]['total']})" for s in order]
        lines.append("descriptive sub-types (questions): " + ", ".join(parts))
    mc = data["multiple_choice"]
    if mc["per_option"]["total"]:
        lines.append(
            f"all multiple choice: {100 * mc['per_option']['accuracy']:.1f} per option, "
            f"{100 * mc['per_question']['accuracy']:.1f} per question"
        )
    return lines
