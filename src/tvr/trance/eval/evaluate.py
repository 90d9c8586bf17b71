"""`tvr evaluate` as a library call: read samples and predictions, score, write the outputs.

Writes into the output folder:
    summary.json   the metrics, breakdowns, and counts of missing, bad and long predictions
    detail.jsonl   one line per scored sample (and view): distance, correct, loose correct,
                   the first broken rule and at which step, the reference and the prediction
    config.json    the files and options this evaluation used
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from tvr.core.jsonl import FILE_MODE, prepare_output_folder, write_json
from tvr.trance.eval.detail import detail_jsonl
from tvr.trance.eval.metrics import max_steps_for, read_predictions, score, step_limit, summarize
from tvr.trance.eval.references import reference_table
from tvr.trance.world.vocab import VIEWS


def evaluate_files(
    samples_path: str | Path,
    predictions_path: str | Path,
    setting: str,
    out: str | Path | None = None,
    lenient: bool = False,
    views: tuple[str, ...] = VIEWS,
    max_steps_policy: str = "simulate",
) -> dict[str, Any]:
    """Score a predictions file against a samples file; write the outputs if `out` is given.

    The references come from the samples file's cache (`references.py`), built on first use.
    Predictions longer than a reference follow `max_steps_policy` (metrics.MAX_STEPS_POLICIES).
    """
    step_limit(setting, max_steps_policy)  # a bad policy is refused before any file is read
    ref = reference_table(samples_path, setting, views)
    pred = read_predictions(
        predictions_path, ref, lenient=lenient, max_steps_policy=max_steps_policy
    )
    s = score(ref, pred)
    summary = summarize(ref, pred, s)
    summary["samples_file"] = str(samples_path)
    summary["predictions_file"] = str(predictions_path)
    if pred.problems:
        summary["problems"] = pred.problems[:100]
    if out is not None:
        out = prepare_output_folder(out)
        write_bytes(out / "detail.jsonl", detail_jsonl(ref, pred, s))
        write_json(out / "summary.json", summary)
        write_json(
            out / "config.json",
            {
                "samples": str(samples_path),
                "predictions": str(predictions_path),
                "setting": setting,
                "lenient": lenient,
                "max_steps_policy": max_steps_policy,
                "views": list(views),
            },
        )
    return summary


def write_bytes(path: Path, chunks: Iterable[bytes]) -> None:
    """Write byte chunks to a file atomically and durably (temporary file, fsync, os.replace)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, FILE_MODE)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _fmt(x: Any) -> str:
    return "-" if x is None else f"{x:.4f}" if isinstance(x, float) else str(x)


def summary_table(summary: dict[str, Any], title: str | None = None) -> Table:
    """A rich table of a summary: the metrics, then the breakdowns."""
    setting = summary["setting"]
    table = Table(title=title or f"TRANCE {setting} - {summary['samples']} samples")
    if setting == "basic":
        cols = ["ObjAcc", "AttrAcc", "ValAcc", "Acc"]
        table.add_column("subset")
        table.add_column("count", justify="right")
        for c in cols:
            table.add_column(c, justify="right")
        m = summary["metrics"]
        table.add_row("all", str(summary["samples"]), *(_fmt(m[c]) for c in cols))
        for attr, b in summary["by_attribute"].items():
            table.add_row(f"attr={attr}", str(b["count"]), "", "", "", _fmt(b["Acc"]))
        return table
    cols = ["AD", "AND", "LAcc", "Acc"]
    table.add_column("subset")
    table.add_column("count", justify="right")
    for c in cols:
        table.add_column(c, justify="right")
    table.add_column("EO", justify="right")
    m = summary["metrics"]
    table.add_row("all", str(summary["samples"]), *(_fmt(m[c]) for c in cols), "")
    for k, b in summary["by_steps"].items():
        table.add_row(
            f"{k} step{'s' if k != '1' else ''}", str(b["count"]), *(_fmt(b[c]) for c in cols), ""
        )
    for v, b in summary.get("by_view", {}).items():
        table.add_row(f"view {v}", str(b["count"]), *(_fmt(b[c]) for c in cols), "")
    o = summary["order_sensitive"]
    table.add_row("order-sensitive", str(o["count"]), *(_fmt(o[c]) for c in cols), _fmt(o["EO"]))
    table.caption = "EO = (LAcc - Acc) / LAcc exists on the order-sensitive samples only: its row"
    return table


def print_summary(
    summary: dict[str, Any], console: Console | None = None, title: str | None = None
) -> None:
    console = console or Console(soft_wrap=True)
    console.print(summary_table(summary, title))
    notes = []
    if summary["missing"]:
        notes.append(
            f"{summary['missing']} sample(s) had no readable prediction and count as wrong"
        )
    if summary["invalid"]:
        unnamed = summary["invalid"] - summary.get("invalid_rows", summary["invalid"])
        line = (f"{summary['invalid']} bad prediction line(s) skipped and scored as wrong "
                "(--lenient, or --max-steps-policy lenient for long ones)")  # fmt: skip
        if unnamed:  # a torn line names no sample: its sample, if any, is among the missing
            line += (f"; {unnamed} of them named no sample that could be read (their samples "
                     "are among those without a readable prediction)")  # fmt: skip
        notes.append(line)
    long = summary.get("long_predictions", 0)
    if long:
        limit = max_steps_for(setting := summary["setting"])
        what = f"predictions with more than {limit} step{'s' if limit > 1 else ''}: {long}"
        if summary.get("max_steps_policy") == "simulate" and setting != "basic":
            notes.append(f"{what} (every step simulated, --max-steps-policy simulate)")
        else:
            notes.append(f"{what} (bad lines, scored as wrong)")
    for n in notes:
        console.print(f"[yellow]note:[/yellow] {n}")
