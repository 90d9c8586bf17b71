"""Paired comparison of two TRANCO evaluations of the same samples (`tvr tranco compare`).

A and B are the `detail.jsonl` files of two `tvr tranco evaluate --out` runs (or their folders).
Scored on the same samples, they are compared sample by sample, under one convention:

- EMR (right or wrong per sample, the `exact` field): the exact McNemar test and a seeded
  bootstrap interval of the difference (`tvr.core.stats.compare_paired`);
- R, P, KTD, SD, NSD (a number per sample): the paired sign-flip randomisation test and a seeded
  percentile bootstrap interval of the mean difference (`tvr.core.stats.compare_paired_scores`).
  A sample where A or B has no value (null) is left out of that metric, and counted.

Also EMR by reference length: each side's EMR and the samples only A or only B gets right.
What every comparison does alike (the detail files, a metric's row, the table, the files
written) is `tvr.results.compare`'s.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tvr.core.errors import InputError, UserError
from tvr.results import compare as shared
from tvr.tranco.eval.metrics import CONVENTIONS, METRICS

#: the metrics with a number per sample (EMR, right or wrong, is compared apart)
SCORE_METRICS: tuple[str, ...] = tuple(m for m in METRICS if m != "EMR")

#: metrics where lower is better
LOWER_IS_BETTER: tuple[str, ...] = ("KTD", "SD", "NSD")


@dataclass(frozen=True)
class SampleDetail:
    """What the comparison reads of one sample's detail line."""

    line: int
    length: int
    exact: bool
    values: dict[str, float | None]  # one convention's metric -> value (None: no value)


@dataclass(frozen=True)
class Detail:
    """One evaluation's detail.jsonl, read under one convention."""

    path: Path
    label: str
    samples: dict[str, SampleDetail]


def detail_file(path: str | Path) -> Path:
    """The detail.jsonl of an evaluation folder, or the file itself; UserError if there is none."""
    return shared.detail_file(path, "tvr tranco evaluate --out")


def read_detail(path: str | Path, convention: str, label: str | None = None) -> Detail:
    """Read an evaluation's detail lines (errors name the file, line and field)."""
    if convention not in CONVENTIONS:
        raise UserError(f"unknown convention {convention!r} (known: {', '.join(CONVENTIONS)})")
    file = detail_file(path)
    samples: dict[str, SampleDetail] = {}
    for lineno, row in shared.detail_rows(file):
        sample_id = row["id"]
        if sample_id in samples:
            raise InputError(file, lineno, "id", f"sample {sample_id!r} is scored twice")
        length = row.get("length")
        if not isinstance(length, int) or isinstance(length, bool) or length < 1:
            raise InputError(file, lineno, "length", "expected the number of reference steps")
        if not isinstance(row.get("exact"), bool):
            raise InputError(file, lineno, "exact", "expected true or false")
        samples[sample_id] = SampleDetail(
            lineno, length, row["exact"], _values(row.get(convention), file, lineno, convention)
        )
    if not samples:
        raise UserError(f"{file}: no samples")
    return Detail(file, label if label is not None else shared.default_label(path), samples)


def _values(found: Any, file: Path, line: int, convention: str) -> dict[str, float | None]:
    if not isinstance(found, dict):
        raise InputError(file, line, convention, "expected the metrics of this convention")
    value = shared.number_or_none
    return {metric: value(found.get(metric), file, line, f"{convention}.{metric}")
            for metric in SCORE_METRICS}  # fmt: skip


def check_same_samples(a: Detail, b: Detail) -> None:
    """UserError naming the file and line of the first sample that only one scores, or that the
    two give different lengths."""
    shared.check_same_keys((a.path, a.samples), (b.path, b.samples),
                           lambda key: f"sample {key!r}", "samples")  # fmt: skip
    for sample_id, sample in b.samples.items():
        length = a.samples[sample_id].length
        if sample.length != length:
            raise InputError(b.path, sample.line, "length",
                             f"sample {sample_id!r} has {sample.length} steps here and {length} "
                             f"in {a.path}: not the same samples")  # fmt: skip


def compare_evaluations(
    a: Detail, b: Detail, convention: str, resamples: int = 10000, seed: int = 0
) -> dict[str, Any]:
    """The compare.json document: A against B, metric by metric and EMR by length."""
    check_same_samples(a, b)
    notes: list[str] = []
    rows = []
    for metric in METRICS:
        if metric == "EMR":
            rows.append(_emr_row(a, b, resamples, seed))
            continue
        row = shared.score_row(metric, _scores(a, metric), _scores(b, metric), resamples, seed)
        note = shared.coverage_note(metric, row, len(a.samples), "sample")
        if note:
            notes.append(note)
        if row["n"]:
            rows.append(row)
    return {
        "benchmark": "tranco",
        **shared.sides(a, b),
        "convention": convention,
        "samples": len(a.samples),
        "resamples": resamples,
        "seed": seed,
        "metrics": rows,
        "emr_by_length": emr_by_length(a, b),
        "lower_is_better": list(LOWER_IS_BETTER),
        "notes": notes,
    }


def _scores(detail: Detail, metric: str) -> dict[str, float | None]:
    return {k: s.values[metric] for k, s in detail.samples.items()}


def _exact(detail: Detail) -> dict[str, bool]:
    return {k: s.exact for k, s in detail.samples.items()}


def _emr_row(a: Detail, b: Detail, resamples: int, seed: int) -> dict[str, Any]:
    return shared.accuracy_row("EMR", _exact(a), _exact(b), resamples, seed)


def emr_by_length(a: Detail, b: Detail) -> list[dict[str, Any]]:
    """Per reference length: samples, each side's EMR, the samples only A or only B gets right,
    and the exact McNemar p of that length."""
    lengths = {k: s.length for k, s in a.samples.items()}
    return shared.accuracy_by("length", lengths, _exact(a), _exact(b))


def markdown_lines(document: dict[str, Any]) -> list[str]:
    """compare.md: the heading, the metric table, the notes, EMR by length."""
    how = (
        f"{document['samples']} samples, convention {document['convention']}. Paired on each "
        "sample: EMR by the exact McNemar test, the others by "
        f"{shared.sign_flip_text(document, 'sample')}. Lower is better for "
        f"{', '.join(document['lower_is_better'])}."
    )
    lines = [
        *shared.heading_lines("TRANCO", document, how),
        *shared.metric_table(document["metrics"]),
    ]
    emr = next(r for r in document["metrics"] if r["metric"] == "EMR")
    lines += ["", f"EMR: {emr['only_a']} samples right in A only, {emr['only_b']} in B only."]
    lines += [f"Note: {note}." for note in document["notes"]]
    lines += ["", "## EMR by reference length", "",
              shared.table_row(("steps", "samples", "A", "B", "A only", "B only", "p")),
              shared.table_row(["---"] + ["---:"] * 6)]  # fmt: skip
    for r in document["emr_by_length"]:
        lines.append(shared.table_row([str(r["length"]), str(r["samples"]), f"{r['a']:.4f}",
                                       f"{r['b']:.4f}", str(r["a_only"]), str(r["b_only"]),
                                       shared.p_text(r["p"])]))  # fmt: skip
    return lines
