"""`tvr curves`: the learning curves of any training runs (TRANCE, CLEVRER, VTT, TRANCO) side by side."""

from __future__ import annotations

import argparse
from pathlib import Path

from tvr.cli._common import require
from tvr.core.jsonl import prepare_output_folder
from tvr.results.curves import MODES, Monitor, choose_metrics, load_runs, write_curves


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "curves",
        help="learning curves of training runs: one panel per metric, one line per run",
        description="Each RUN is a training run folder (any benchmark's: it holds metrics.csv) or "
        "a metrics.csv file, optionally written LABEL=RUN. Draws one panel per metric (every "
        "column but epoch/step/lr/batches, train/loss first; or each --metric) with one line per "
        "run against the epoch counted from 1, and marks each run's best epoch of its monitored "
        "metric (named by --monitor, or by the run's config.json). Writes curves.png, curves.md "
        "(the per-epoch values, one table per metric), curves.csv and curves.json to --out.",
    )
    p.add_argument("runs", nargs="+", metavar="RUN", help="[LABEL=]RUN_FOLDER or metrics.csv")
    p.add_argument("--out", required=True, type=Path, help="folder for the plot and tables")
    p.add_argument(
        "--metric",
        action="append",
        default=[],
        metavar="M",
        help="a metrics.csv column to draw, e.g. val/emr (repeatable; default: every metric)",
    )
    p.add_argument(
        "--monitor",
        metavar="M",
        help="mark each run's best epoch of this metric (default: the `monitor` its config.json "
        "names, else none)",
    )
    p.add_argument(
        "--mode",
        choices=MODES,
        help="whether the --monitor metric is best high or low (default: min for a loss, else max)",
    )
    p.add_argument(
        "--plot", action=argparse.BooleanOptionalAction, default=True, help="write curves.png"
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    require(args.monitor is not None or args.mode is None, "--mode goes with --monitor")
    monitor = Monitor.named(args.monitor, args.mode) if args.monitor else None
    runs = load_runs(args.runs, monitor)
    metrics = choose_metrics(runs, args.metric or None)  # a wrong --metric: before any writing
    prepare_output_folder(args.out)
    report = write_curves(runs, args.out, metrics, plot=args.plot)
    for r in report.runs:
        best = r.best()
        marked = f", best {r.monitor.metric} at epoch {best[0]}" if r.monitor and best else ""
        print(f"{r.label}: {len(r.rows)} epochs{marked} ({r.metrics_csv})")
    print(f"metrics: {', '.join(report.metrics)}")
    print(f"wrote {len(report.files)} files to {args.out}")
    return 0
