"""An evaluation's summary.json and its table, with Table 2's anchors beside ours."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tvr.vtt.eval.metrics.suite import MetricScores
from tvr.vtt.paper import ANCHORS, METRICS, TABLE2_SOURCE, table2_row

NOT_RUN = "n/a"
#: the table's metric columns: Table 2's names, B@4 saying its convention (the paper's)
COLUMNS = [f"{v} (paper)" if k == "BLEU_4" else v for k, v in METRICS.items()]
MARK = "†"  # marks a value computed in a setting other than the paper's


def summarize(
    records: str | Path,
    predictions: str | Path,
    split: str,
    counts: dict[str, int],
    metrics: dict[str, MetricScores],
    by_transformations: dict[str, Any],
    by_category: dict[str, Any],
    split_samples: int | None = None,
    only_present: bool = False,
) -> dict[str, Any]:
    """summary.json: means x100 (None where a metric did not run), how each metric ran, the
    counts of missing and ignored predictions, the breakdowns, and the paper's anchor rows.
    `split_samples`: the split's samples (default: the scored ones); `only_present`: only the
    samples with a prediction were scored (`--only-present`)."""
    notes = []
    for name, metric in metrics.items():
        info = metric.info
        if not info.get("available"):
            notes.append(f"{name} unavailable: {info.get('reason')}")
        elif info.get("label"):
            notes.append(f"{MARK} {name}: {info['label']}: {info.get('setting')}")
    return {
        "records_file": str(records),
        "predictions_file": str(predictions),
        "split": split,
        "samples": counts["samples"],
        "split_samples": counts["samples"] if split_samples is None else split_samples,
        "only_present": only_present,
        "descriptions": counts["descriptions"],
        "missing": {"samples": counts["missing_samples"],
                    "descriptions": counts["missing_descriptions"]},
        "extra_descriptions_ignored": counts["extra_descriptions"],
        "predictions_ignored": {"other_split": counts["other_split_predictions"],
                                "unknown_id": counts["unknown_predictions"]},
        "metrics": {name: metric.mean for name, metric in metrics.items()},
        "metric_info": {name: metric.info for name, metric in metrics.items()},
        "notes": notes,
        "by_transformations": by_transformations,
        "by_category": by_category,
        "paper": {"source": TABLE2_SOURCE,
                  "rows": {model: table2_row(model) for model in ANCHORS}},
    }  # fmt: skip


def _cell(value: float | None, marked: bool = False) -> str:
    if value is None:
        return NOT_RUN
    return f"{value:.2f}{MARK if marked else ''}"


def _grid(header: list[str], rows: list[list[str]]) -> list[str]:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(r: list[str]) -> str:
        cells = [r[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)]
        return "  ".join(cells).rstrip()

    return [line(header), *(line(r) for r in rows)]


def table_lines(summary: dict[str, Any], label: str) -> list[str]:
    """The counts, ours against Table 2's anchors (x100), the notes and the breakdowns. The B@4
    column is the paper's convention (its header says so); the standard one follows the table."""
    marked = {name: bool(info.get("label")) for name, info in summary["metric_info"].items()}
    header = ["model", *COLUMNS]
    ours = [label] + [_cell(summary["metrics"][m], marked[m]) for m in METRICS]
    rows = [ours] + [
        [f"{model} (paper)"] + [_cell(summary["paper"]["rows"][model][m]) for m in METRICS]
        for model in ANCHORS
    ]
    samples = f"{summary['samples']} samples"
    if summary.get("only_present"):
        samples = (f"{summary['samples']} of {summary['split_samples']} samples (only those "
                   "present in the predictions, --only-present)")  # fmt: skip
    lines = [f"{summary['split']}: {samples}, {summary['descriptions']} "
             f"descriptions; x100, each description against its reference; paper rows: "
             f"{summary['paper']['source']}"]  # fmt: skip
    missing = summary["missing"]
    ignored = summary["predictions_ignored"]
    lines.append(
        f"missing (scored as empty): {missing['descriptions']} descriptions, "
        f"{missing['samples']} samples without a prediction; ignored: "
        f"{summary['extra_descriptions_ignored']} extra descriptions, "
        f"{ignored['other_split']} predictions of other splits, {ignored['unknown_id']} unknown ids"
    )
    lines += _grid(header, rows)
    standard = summary["metrics"].get("BLEU_4_standard")
    if standard is not None:
        lines.append(f"B@4 (paper): NLTK smoothing method 7, as Table 2 (a perfect description of "
                     f"5+ words scores 111.67); standard B@4 (method 3, at most 100): "
                     f"{standard:.2f}")  # fmt: skip
    lines += summary["notes"]
    if missing["samples"] and not summary.get("only_present"):
        lines.append(
            f"{missing['samples']} of {summary['samples']} {summary['split']} samples have no "
            "prediction and were scored as empty descriptions; --only-present scores only the "
            "samples in the file (as Table 2's Human and multi-turn rows)"
        )
    for title, key in (("transformations", "by_transformations"), ("category", "by_category")):
        groups = summary[key]
        header = [title, "samples", "descr.", *COLUMNS]
        rows = [[k, str(g["samples"]), str(g["descriptions"])]
                + [_cell(g[m], marked[m]) for m in METRICS] for k, g in groups.items()]  # fmt: skip
        lines.append("")
        lines.append(f"by {title} (Fig. 3):")
        lines += _grid(header, rows)
    return lines
