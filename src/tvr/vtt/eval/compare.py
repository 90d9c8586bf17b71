"""Paired comparison of two VTT evaluations of the same descriptions (`tvr vtt compare`).

A and B are `tvr vtt evaluate --out` folders (detail.jsonl, and summary.json for how each metric
ran) or their detail.jsonl files. Each description (sample id, step index) of the split is
scored by both, so every metric that both computed (BLEU-4, METEOR, ROUGE-L, CIDEr-D, SPICE,
BERTScore; x100 per description) is compared description by description: the paired sign-flip
randomisation test and a seeded percentile bootstrap interval of the mean difference
(`tvr.core.stats.compare_paired_scores`).

Left out with a note: a metric that did not run in A or B ("unavailable", or no values), and a
metric computed in different settings (one labelled "not the paper's setting", the other not).
Noted and compared: settings that differ only in their wording (versions, model paths), and
descriptions without a value in A or B (counted). What every comparison does alike (the detail
files, a metric's row, the table, the files written) is `tvr.results.compare`'s.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tvr.core.errors import InputError, UserError
from tvr.results import compare as shared
from tvr.results.compare import DETAIL
from tvr.vtt.paper import METRICS

SUMMARY = "summary.json"

#: the metrics' names in the table
NAMES: dict[str, str] = {
    "BLEU_4": "BLEU-4",
    "METEOR": "METEOR",
    "ROUGE_L": "ROUGE-L",
    "CIDEr": "CIDEr-D",
    "SPICE": "SPICE",
    "BERTScore": "BERTScore",
}


@dataclass(frozen=True)
class Description:
    """What the comparison reads of one description's detail line."""

    line: int
    reference: str | None
    values: dict[str, float | None]  # metric -> x100 score (None: no value)


@dataclass
class Detail:
    """One evaluation's descriptions, keyed "{id}/{index}", and how each metric ran."""

    path: Path
    label: str
    descriptions: dict[str, Description]
    labels: dict[str, str] = field(default_factory=dict)  # metric -> its `{metric}_note`
    info: dict[str, dict[str, Any]] = field(default_factory=dict)  # summary.json's metric_info


def detail_file(path: str | Path) -> Path:
    """The detail.jsonl of an evaluation folder, or the file itself; UserError if there is none."""
    return shared.detail_file(path, "tvr vtt evaluate --out")


def read_detail(path: str | Path, label: str | None = None) -> Detail:
    """Read an evaluation's detail lines (errors name the file, line and field) and, if it lies
    beside them, summary.json's metric_info."""
    file = detail_file(path)
    descriptions: dict[str, Description] = {}
    labels: dict[str, str] = {}
    for lineno, row in shared.detail_rows(file):
        index = row.get("index")
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise InputError(file, lineno, "index", "expected the description's index (0, 1, ...)")
        key = f"{row['id']}/{index}"
        if key in descriptions:
            raise InputError(file, lineno, "index",
                             f"description {index} of {row['id']!r} is scored twice")  # fmt: skip
        reference = row.get("reference")
        if reference is not None and not isinstance(reference, str):
            raise InputError(file, lineno, "reference", "expected the reference text")
        descriptions[key] = Description(lineno, reference, _values(row, file, lineno))
        for metric in METRICS:
            if isinstance(row.get(f"{metric}_note"), str):
                labels.setdefault(metric, row[f"{metric}_note"])
    if not descriptions:
        raise UserError(f"{file}: no descriptions")
    return Detail(file, label if label is not None else shared.default_label(path), descriptions,
                  labels, _metric_info(file.parent / SUMMARY, file))  # fmt: skip


def _values(row: dict[str, Any], file: Path, line: int) -> dict[str, float | None]:
    return {
        metric: shared.number_or_none(row.get(metric), file, line, metric) for metric in METRICS
    }


def _metric_info(summary: Path, detail: Path) -> dict[str, dict[str, Any]]:
    """summary.json's metric_info, or {} where there is no summary.json beside the detail (or the
    detail file is not called detail.jsonl, so it may not be that summary's)."""
    if detail.name != DETAIL or not summary.is_file():
        return {}
    try:
        info = json.loads(summary.read_text(encoding="utf-8")).get("metric_info", {})
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
        raise UserError(f"{summary}: not the summary.json of `tvr vtt evaluate`") from None
    if not isinstance(info, dict) or not all(isinstance(v, dict) for v in info.values()):
        raise InputError(summary, None, "metric_info", "expected an object per metric")
    return info


def check_same_descriptions(a: Detail, b: Detail) -> None:
    """UserError naming the file and line of the first description that only one scores, or
    whose reference differs."""
    shared.check_same_keys((a.path, a.descriptions), (b.path, b.descriptions),
                           _description_name, "split")  # fmt: skip
    for key, d in b.descriptions.items():
        ref = a.descriptions[key].reference
        if d.reference is not None and ref is not None and d.reference != ref:
            raise InputError(b.path, d.line, "reference",
                             f"{d.reference!r} here, {ref!r} in {a.path}: not the same "
                             "records")  # fmt: skip


def _description_name(key: str) -> str:
    """How the messages name a description: the key "s2/2" is description 2 of 's2'."""
    sample_id, index = key.rsplit("/", 1)
    return f"description {index} of {sample_id!r}"


def _unavailable(detail: Detail, metric: str) -> str | None:
    """Why `metric` has no values in `detail`, or None if it has some."""
    info = detail.info.get(metric, {})
    if info and not info.get("available", True):
        return str(info.get("reason") or "unavailable")
    if all(d.values[metric] is None for d in detail.descriptions.values()):
        return "no values"
    return None


def _label(detail: Detail, metric: str) -> str | None:
    """The metric's label ("not the paper's setting"), from summary.json or the detail lines."""
    if metric in detail.info:
        return detail.info[metric].get("label")
    return detail.labels.get(metric)


def compare_evaluations(
    a: Detail, b: Detail, resamples: int = 10000, seed: int = 0
) -> dict[str, Any]:
    """The compare.json document: A against B, metric by metric, over the descriptions."""
    check_same_descriptions(a, b)
    rows, notes = [], []
    for metric in METRICS:
        name = NAMES.get(metric, metric)
        missing = [(side, why) for side, d in (("A", a), ("B", b))
                   if (why := _unavailable(d, metric)) is not None]  # fmt: skip
        if missing:
            why = "; ".join(f"{side}: {reason}" for side, reason in missing)
            notes.append(f"{name}: left out, not computed in {' and '.join(s for s, _ in missing)}"
                         f" ({why})")  # fmt: skip
            continue
        label_a, label_b = _label(a, metric), _label(b, metric)
        if label_a != label_b:
            paper = "the paper's setting"
            notes.append(f"{name}: left out, computed in different settings (A: "
                         f"{label_a or paper}; B: {label_b or paper})")  # fmt: skip
            continue
        if label_a:
            notes.append(f"{name}: {label_a} in both")
        setting_a = a.info.get(metric, {}).get("setting")
        setting_b = b.info.get(metric, {}).get("setting")
        if setting_a and setting_b and setting_a != setting_b:
            notes.append(f"{name}: the settings read differently (A: {setting_a}; B: {setting_b})")
        row = shared.score_row(metric, _scores(a, metric), _scores(b, metric), resamples, seed,
                               name=name)  # fmt: skip
        note = shared.coverage_note(name, row, len(a.descriptions), "description")
        if note:
            notes.append(note)
        if row["n"]:
            rows.append(row)
    samples = {key.rsplit("/", 1)[0] for key in a.descriptions}
    return {
        "benchmark": "vtt",
        **shared.sides(a, b),
        "samples": len(samples),
        "descriptions": len(a.descriptions),
        "scale": "x100",
        "resamples": resamples,
        "seed": seed,
        "metrics": rows,
        "notes": notes,
    }


def _scores(detail: Detail, metric: str) -> dict[str, float | None]:
    return {k: d.values[metric] for k, d in detail.descriptions.items()}


def markdown_lines(document: dict[str, Any]) -> list[str]:
    """compare.md: the heading, the metric table, the notes."""
    how = (
        f"{document['descriptions']} descriptions of {document['samples']} samples, each metric "
        "x100 per description. Paired on each description by "
        f"{shared.sign_flip_text(document, 'description')}."
    )
    lines = [*shared.heading_lines("VTT", document, how),
             *shared.metric_table(document["metrics"], name="name", digits=2)]  # fmt: skip
    if not document["metrics"]:
        lines.append("(no metric was computed in both)")
    if document["notes"]:
        lines.append("")
        lines += [f"Note: {note}." for note in document["notes"]]
    return lines
