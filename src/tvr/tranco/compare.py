"""Paired comparison of two TRANCO evaluations of the same samples (`tvr tranco compare`).

A and B are the `detail.jsonl` files of two `tvr tranco evaluate --out` runs (or their folders).
Scored on the same samples, they are compared sample by sample, under one convention:

- EMR (right or wrong per sample, the `exact` field): the exact McNemar test and a seeded
  bootstrap interval of the difference (`tvr.core.stats.compare_paired`);
- R, P, KTD, SD, NSD (a number per sample): the paired sign-flip randomisation test and a seeded
  percentile bootstrap interval of the mean difference (`tvr.core.stats.compare_paired_scores`).
  A sample where A or B has no value (null) is left out of that metric, and counted.

Also EMR by reference length: each side's EMR and the samples only A or only B gets right.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tvr.core.errors import InputError, UserError
from tvr.core.jsonl import iter_jsonl
from tvr.core.stats import (
    EXACT_FLIPS,
    PairedScores,
    compare_paired,
    compare_paired_scores,
    mcnemar_exact,
)
from tvr.tranco.metrics import CONVENTIONS, METRICS

DETAIL = "detail.jsonl"

#: the metrics with a number per sample (EMR, right or wrong, is compared apart)
SCORE_METRICS: tuple[str, ...] = tuple(m for m in METRICS if m != "EMR")

#: metrics where lower is better
LOWER_IS_BETTER: tuple[str, ...] = ("KTD", "SD", "NSD")

COLUMNS = ("metric", "n", "A", "B", "A-B", "95% low", "95% high", "p", "test")


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
    path = Path(path)
    if path.is_dir():
        if not (path / DETAIL).is_file():
            raise UserError(f"{path}: no {DETAIL} in this folder (write it with "
                            "`tvr tranco evaluate --out`)")  # fmt: skip
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


def read_detail(path: str | Path, convention: str, label: str | None = None) -> Detail:
    """Read an evaluation's detail lines (errors name the file, line and field)."""
    if convention not in CONVENTIONS:
        raise UserError(f"unknown convention {convention!r} (known: {', '.join(CONVENTIONS)})")
    file = detail_file(path)
    samples: dict[str, SampleDetail] = {}
    for lineno, row in iter_jsonl(file):
        if not isinstance(row, dict):
            raise InputError(file, lineno, None, "expected a JSON object")
        sample_id = row.get("id")
        if not isinstance(sample_id, str):
            raise InputError(file, lineno, "id", "expected the sample id as a string")
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
    return Detail(file, label if label is not None else default_label(path), samples)


def _values(found: Any, file: Path, line: int, convention: str) -> dict[str, float | None]:
    if not isinstance(found, dict):
        raise InputError(file, line, convention, "expected the metrics of this convention")
    values: dict[str, float | None] = {}
    for metric in SCORE_METRICS:
        value = found.get(metric)
        if value is not None and (not isinstance(value, int | float) or isinstance(value, bool)):
            raise InputError(file, line, f"{convention}.{metric}", "expected a number or null")
        values[metric] = None if value is None else float(value)
    return values


def check_same_samples(a: Detail, b: Detail) -> None:
    """UserError naming the file and line of the first sample that only one scores, or that the
    two give different lengths."""
    for this, other in ((b, a), (a, b)):
        for sample_id, sample in this.samples.items():
            if sample_id not in other.samples:
                raise InputError(this.path, sample.line, "id",
                                 f"sample {sample_id!r} is not in {other.path} (the two "
                                 "evaluations must score the same samples)")  # fmt: skip
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
        row = _score_row(a, b, metric, resamples, seed)
        if not row["n"]:
            notes.append(f"{metric}: left out, no sample has a value in both A and B")
            continue
        if row["left_out"]:
            notes.append(f"{metric}: compared on {row['n']} of {len(a.samples)} samples "
                         f"({row['left_out']} without a value in A or B)")  # fmt: skip
        rows.append(row)
    return {
        "benchmark": "tranco",
        "a": {"label": a.label, "detail": str(a.path)},
        "b": {"label": b.label, "detail": str(b.path)},
        "convention": convention,
        "samples": len(a.samples),
        "resamples": resamples,
        "seed": seed,
        "metrics": rows,
        "emr_by_length": emr_by_length(a, b),
        "lower_is_better": list(LOWER_IS_BETTER),
        "notes": notes,
    }


def _emr_row(a: Detail, b: Detail, resamples: int, seed: int) -> dict[str, Any]:
    c = compare_paired(
        {k: s.exact for k, s in a.samples.items()},
        {k: s.exact for k, s in b.samples.items()},
        resamples, seed,
    )  # fmt: skip
    return {"metric": "EMR", "n": c.samples, "a": c.acc_a, "b": c.acc_b,
            "difference": c.difference, "low": c.interval[0], "high": c.interval[1],
            "p": c.p_value, "test": "McNemar exact", "only_a": c.only_a, "only_b": c.only_b,
            "left_out": 0}  # fmt: skip


def _score_row(a: Detail, b: Detail, metric: str, resamples: int, seed: int) -> dict[str, Any]:
    both = [k for k, s in a.samples.items()
            if s.values[metric] is not None
            and b.samples[k].values[metric] is not None]  # fmt: skip
    left_out = len(a.samples) - len(both)
    if not both:
        return {"metric": metric, "n": 0, "left_out": left_out}
    c = compare_paired_scores(
        {k: a.samples[k].values[metric] for k in both},
        {k: b.samples[k].values[metric] for k in both},
        resamples, seed,
    )  # fmt: skip
    return _row_of(metric, c, left_out)


def _row_of(metric: str, c: PairedScores, left_out: int) -> dict[str, Any]:
    """One row of the table from a sign-flip comparison."""
    return {"metric": metric, "n": c.n, "a": c.mean_a, "b": c.mean_b, "difference": c.difference,
            "low": c.interval[0], "high": c.interval[1], "p": c.p_value,
            "test": "sign-flip, exact" if c.exact else "sign-flip, random",
            "left_out": left_out}  # fmt: skip


def emr_by_length(a: Detail, b: Detail) -> list[dict[str, Any]]:
    """Per reference length: samples, each side's EMR, the samples only A or only B gets right,
    and the exact McNemar p of that length."""
    counts: dict[int, Counter[str]] = {}
    for sample_id, sa in a.samples.items():
        sb = b.samples[sample_id]
        c = counts.setdefault(sa.length, Counter())
        c["samples"] += 1
        c["a"] += sa.exact
        c["b"] += sb.exact
        c["a_only"] += sa.exact and not sb.exact
        c["b_only"] += sb.exact and not sa.exact
    return [
        {"length": length, "samples": c["samples"], "a": c["a"] / c["samples"],
         "b": c["b"] / c["samples"], "a_only": c["a_only"], "b_only": c["b_only"],
         "p": mcnemar_exact(c["a_only"], c["b_only"])}
        for length, c in sorted(counts.items())
    ]  # fmt: skip


def p_text(p: float) -> str:
    return f"{p:.4f}" if p >= 0.0001 else f"{p:.1e}"


def markdown_lines(document: dict[str, Any]) -> list[str]:
    """compare.md: the heading, the metric table, the notes, EMR by length."""
    a, b = document["a"], document["b"]
    lines = [
        f"# TRANCO: {a['label']} (A) against {b['label']} (B)",
        "",
        f"A: `{a['detail']}`; B: `{b['detail']}`; {document['samples']} samples, convention "
        f"{document['convention']}. Paired on each sample: EMR by the exact McNemar test, the "
        "others by the sign-flip randomisation test (exact over every sign pattern when at most "
        f"{EXACT_FLIPS} samples differ, else seeded random patterns); 95%: percentile bootstrap "
        f"of A-B ({document['resamples']} resamples, seed {document['seed']}). Lower is better for "
        f"{', '.join(document['lower_is_better'])}.",
        "",
        _row(COLUMNS),
        _row(["---"] + ["---:"] * (len(COLUMNS) - 2) + ["---"]),
    ]
    for r in document["metrics"]:
        lines.append(_row([r["metric"], str(r["n"]), f"{r['a']:.4f}", f"{r['b']:.4f}",
                           f"{r['difference']:+.4f}", f"{r['low']:+.4f}", f"{r['high']:+.4f}",
                           p_text(r["p"]), r["test"]]))  # fmt: skip
    emr = next(r for r in document["metrics"] if r["metric"] == "EMR")
    lines += ["", f"EMR: {emr['only_a']} samples right in A only, {emr['only_b']} in B only."]
    lines += [f"Note: {note}." for note in document["notes"]]
    lines += ["", "## EMR by reference length", "",
              _row(("steps", "samples", "A", "B", "A only", "B only", "p")),
              _row(["---"] + ["---:"] * 6)]  # fmt: skip
    for r in document["emr_by_length"]:
        lines.append(_row([str(r["length"]), str(r["samples"]), f"{r['a']:.4f}", f"{r['b']:.4f}",
                           str(r["a_only"]), str(r["b_only"]), p_text(r["p"])]))  # fmt: skip
    return lines


def _row(cells: Any) -> str:
    return "| " + " | ".join(cells) + " |"
