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
descriptions without a value in A or B (counted).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tvr.core.errors import InputError, UserError
from tvr.core.jsonl import iter_jsonl
from tvr.core.stats import EXACT_FLIPS, compare_paired_scores
from tvr.vtt.paper import METRICS

DETAIL = "detail.jsonl"
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

COLUMNS = ("metric", "n", "A", "B", "A-B", "95% low", "95% high", "p", "test")


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
    path = Path(path)
    if path.is_dir():
        if not (path / DETAIL).is_file():
            raise UserError(f"{path}: no {DETAIL} in this folder (write it with "
                            "`tvr vtt evaluate --out`)")  # fmt: skip
        return path / DETAIL
    if not path.is_file():
        raise UserError(f"{path}: no such file or folder")
    return path


def default_label(path: str | Path) -> str:
    """A folder's name; for a file its folder's name if it is called detail.jsonl, else its stem."""
    path = Path(path)
    if path.is_dir():
        return path.resolve().name
    return path.resolve().parent.name if path.name == DETAIL else path.stem


def read_detail(path: str | Path, label: str | None = None) -> Detail:
    """Read an evaluation's detail lines (errors name the file, line and field) and, if it lies
    beside them, summary.json's metric_info."""
    file = detail_file(path)
    descriptions: dict[str, Description] = {}
    labels: dict[str, str] = {}
    for lineno, row in iter_jsonl(file):
        if not isinstance(row, dict):
            raise InputError(file, lineno, None, "expected a JSON object")
        if not isinstance(row.get("id"), str):
            raise InputError(file, lineno, "id", "expected the sample id as a string")
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
    return Detail(file, label if label is not None else default_label(path), descriptions,
                  labels, _metric_info(file.parent / SUMMARY, file))  # fmt: skip


def _values(row: dict[str, Any], file: Path, line: int) -> dict[str, float | None]:
    values: dict[str, float | None] = {}
    for metric in METRICS:
        value = row.get(metric)
        if value is not None and (not isinstance(value, int | float) or isinstance(value, bool)):
            raise InputError(file, line, metric, "expected a number or null")
        values[metric] = None if value is None else float(value)
    return values


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
    for this, other in ((b, a), (a, b)):
        for key, d in this.descriptions.items():
            if key not in other.descriptions:
                sample_id, index = key.rsplit("/", 1)
                raise InputError(this.path, d.line, "id",
                                 f"description {index} of {sample_id!r} is not in {other.path} "
                                 "(the two evaluations must score the same split)")  # fmt: skip
    for key, d in b.descriptions.items():
        ref = a.descriptions[key].reference
        if d.reference is not None and ref is not None and d.reference != ref:
            raise InputError(b.path, d.line, "reference",
                             f"{d.reference!r} here, {ref!r} in {a.path}: not the same "
                             "records")  # fmt: skip


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
        both = [k for k, d in a.descriptions.items()
                if d.values[metric] is not None
                and b.descriptions[k].values[metric] is not None]  # fmt: skip
        left_out = len(a.descriptions) - len(both)
        if left_out:
            notes.append(f"{name}: compared on {len(both)} of {len(a.descriptions)} descriptions "
                         f"({left_out} without a value in A or B)")  # fmt: skip
        c = compare_paired_scores(
            {k: a.descriptions[k].values[metric] for k in both},
            {k: b.descriptions[k].values[metric] for k in both},
            resamples, seed,
        )  # fmt: skip
        rows.append({"metric": metric, "name": name, "n": c.n, "a": c.mean_a, "b": c.mean_b,
                     "difference": c.difference, "low": c.interval[0], "high": c.interval[1],
                     "p": c.p_value, "test": "sign-flip, exact" if c.exact else "sign-flip, random",
                     "left_out": left_out})  # fmt: skip
    samples = {key.rsplit("/", 1)[0] for key in a.descriptions}
    return {
        "benchmark": "vtt",
        "a": {"label": a.label, "detail": str(a.path)},
        "b": {"label": b.label, "detail": str(b.path)},
        "samples": len(samples),
        "descriptions": len(a.descriptions),
        "scale": "x100",
        "resamples": resamples,
        "seed": seed,
        "metrics": rows,
        "notes": notes,
    }


def p_text(p: float) -> str:
    return f"{p:.4f}" if p >= 0.0001 else f"{p:.1e}"


def markdown_lines(document: dict[str, Any]) -> list[str]:
    """compare.md: the heading, the metric table, the notes."""
    a, b = document["a"], document["b"]
    lines = [
        f"# VTT: {a['label']} (A) against {b['label']} (B)",
        "",
        f"A: `{a['detail']}`; B: `{b['detail']}`; {document['descriptions']} descriptions of "
        f"{document['samples']} samples, each metric x100 per description. Paired on each "
        "description by the sign-flip randomisation test (exact over every sign pattern when "
        f"at most {EXACT_FLIPS} descriptions differ, else seeded random patterns); 95%: "
        f"percentile bootstrap of A-B ({document['resamples']} resamples, seed "
        f"{document['seed']}).",
        "",
        _row(COLUMNS),
        _row(["---"] + ["---:"] * (len(COLUMNS) - 2) + ["---"]),
    ]
    for r in document["metrics"]:
        lines.append(_row([r["name"], str(r["n"]), f"{r['a']:.2f}", f"{r['b']:.2f}",
                           f"{r['difference']:+.2f}", f"{r['low']:+.2f}", f"{r['high']:+.2f}",
                           p_text(r["p"]), r["test"]]))  # fmt: skip
    if not document["metrics"]:
        lines.append("(no metric was computed in both)")
    if document["notes"]:
        lines.append("")
        lines += [f"Note: {note}." for note in document["notes"]]
    return lines


def _row(cells: Any) -> str:
    return "| " + " | ".join(cells) + " |"
