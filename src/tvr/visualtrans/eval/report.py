"""Write a VisualTrans score: summary.json, summary.md, accuracy.png and detail.jsonl."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError
from tvr.core.extras import missing_extra
from tvr.core.jsonl import prepare_output_folder
from tvr.visualtrans.data.dataset import DIMENSIONS, SUBTASK_LABELS
from tvr.visualtrans.eval.scoring import Scoreboard, percent_2dp

MARKDOWN_UNANSWERED_LIMIT = 50


def _pct(value: float | None) -> str:
    return "-" if value is None else str(percent_2dp(value))


def _write_text(path: Path, text: str) -> None:
    """Write through a temporary file and rename, so a reader never sees half a file."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def table2_row(summary: dict[str, Any]) -> tuple[list[str], list[str]]:
    """The header and the row of the paper's Table 2 layout, in percent; a dimension's mean is
    the mean of its subtasks' two-decimal percentages, as the paper computes it."""
    header, row = [], []
    for dim, tasks in DIMENSIONS.items():
        for t in tasks:
            header.append(SUBTASK_LABELS[t])
            row.append(_pct(summary["subtasks"][t]["accuracy"]))
        header.append(f"{dim.capitalize()} mean")
        mean = summary["dimensions"][dim]["table2_pct"]
        row.append("-" if mean is None else f"{mean:.2f}")
    header.append("Overall")
    row.append(_pct(summary["overall"]["accuracy"]))
    return header, row


def _table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines)


def _block_rows(blocks: dict[str, dict[str, Any]]) -> list[list[str]]:
    return [
        [name, str(b["items"]), str(b["correct"]), _pct(b["accuracy"])]
        for name, b in blocks.items()
    ]


def summary_markdown(summary: dict[str, Any], title: str = "VisualTrans score") -> str:
    """A Markdown report: the Table 2 row, then each breakdown, then the unanswered items."""
    overall = summary["overall"]
    header, row = table2_row(summary)
    parts = [
        f"# {title}",
        "",
        f"Mode: `{summary['mode']}`"
        + (" (first item of each duplicate group only)" if summary.get("unique_only") else "")
        + f". Items: {overall['items']}, correct: {overall['correct']}, "
        f"overall accuracy (micro): {_pct(overall['accuracy'])} %.",
        "",
        "Accuracy in percent, laid out as the paper's Table 2 (a dimension's mean is the mean "
        "of its subtasks' accuracies; Overall is over items):",
        "",
        _table(header, [row]),
        "",
        "## Per subtask",
        "",
        _table(
            ["subtask", "items", "correct", "accuracy %"],
            [
                [f"{t} ({b['label']})", str(b["items"]), str(b["correct"]), _pct(b["accuracy"])]
                for t, b in summary["subtasks"].items()
            ],
        ),
        "",
        "## Per scenario",
        "",
        _table(["scenario", "items", "correct", "accuracy %"], _block_rows(summary["scenes"])),
        "",
        "## Per answer format",
        "",
        _table(["format", "items", "correct", "accuracy %"], _block_rows(summary["formats"])),
        "",
        "## Items without an answer (counted wrong)",
        "",
        ", ".join(f"{k}: {v}" for k, v in summary["status_counts"].items()),
        "",
    ]
    unanswered = summary["unanswered"]
    for u in unanswered[:MARKDOWN_UNANSWERED_LIMIT]:
        error = f" - {u['error']}" if u.get("error") else ""
        parts.append(f"- item {u['index']} `{u['id']}` ({u['task_type']}): {u['status']}{error}")
    if len(unanswered) > MARKDOWN_UNANSWERED_LIMIT:
        parts.append(
            f"- ... and {len(unanswered) - MARKDOWN_UNANSWERED_LIMIT} more (see summary.json)"
        )
    return "\n".join(parts) + "\n"


def accuracy_chart(summary: dict[str, Any], path: Path, title: str = "VisualTrans") -> None:
    """A bar chart PNG: each subtask, each dimension mean and the overall accuracy, in percent."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise missing_extra(err, "the bar chart") from None
    colors = {"spatial": "#4C72B0", "procedural": "#DD8452", "quantitative": "#55A868"}
    names, values, bar_colors = [], [], []
    for dim, tasks in DIMENSIONS.items():
        for t in tasks:
            names.append(SUBTASK_LABELS[t])
            values.append(100 * (summary["subtasks"][t]["accuracy"] or 0.0))
            bar_colors.append(colors[dim])
        names.append(f"{dim.capitalize()}\nmean")
        values.append(100 * (summary["dimensions"][dim]["accuracy"] or 0.0))
        bar_colors.append(colors[dim])
    names.append("Overall")
    values.append(100 * (summary["overall"]["accuracy"] or 0.0))
    bar_colors.append("#555555")
    fig, ax = plt.subplots(figsize=(10, 4), dpi=100)
    bars = ax.bar(range(len(names)), values, color=bar_colors)
    for bar, value in zip(bars, values, strict=True):
        ax.text(
            bar.get_x() + bar.get_width() / 2, value + 1, f"{value:.1f}", ha="center", fontsize=8
        )
    ax.set_xticks(range(len(names)), names, fontsize=8)
    ax.set_ylim(0, 105)
    ax.set_ylabel("accuracy (%)")
    ax.set_title(f"{title} ({summary['mode']} scoring, {summary['overall']['items']} items)")
    fig.tight_layout()
    tmp = path.with_name(path.name + ".tmp.png")
    fig.savefig(tmp, format="png")
    plt.close(fig)
    os.replace(tmp, path)


def write_report(
    board: Scoreboard, out_dir: str | Path, extra: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Write summary.json, summary.md, accuracy.png and detail.jsonl into `out_dir`."""
    out = prepare_output_folder(out_dir)
    summary = {**(extra or {}), **board.summary()}
    _write_text(out / "summary.json", json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    _write_text(out / "summary.md", summary_markdown(summary))
    _write_text(
        out / "detail.jsonl",
        "".join(json.dumps(s.to_dict(), ensure_ascii=False) + "\n" for s in board.scores),
    )
    try:
        accuracy_chart(summary, out / "accuracy.png")
    except UserError as err:  # the scores stand without their chart
        print(f"note: accuracy.png not drawn: {err}", file=sys.stderr)
    return summary
