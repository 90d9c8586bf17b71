"""`tvr report`: a report on a dataset (balance plots, Table 8, order-sensitive share, examples)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tvr.cli._common import (
    add_data_option,
    add_overwrite_option,
    non_negative_int,
)


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report",
        help="write a report on a dataset: balance plots, Table 8, examples (HTML, JSON, Markdown)",
        description="Write a report folder on a dataset made by `tvr generate` (or on a "
        "samples.jsonl): plots of the balanced factors like Fig. 11 of the journal paper, the "
        "n-gram table of its Table 8 beside the paper's numbers, the share of order-sensitive "
        "samples, and index.html with example samples (images, object table, reference steps). "
        "Also report.json and report.md.",
    )
    add_data_option(p, "a dataset folder made by `tvr generate`, a folder made by `tvr sample`, "
                    "or a samples.jsonl file")  # fmt: skip
    p.add_argument(
        "--out",
        type=Path,
        metavar="REPORT_DIR",
        help="report folder (default DATA/report, or report/ beside a samples file)",
    )
    p.add_argument(
        "--split",
        help="statistics and examples of this split only (default: all splits combined)",
    )
    p.add_argument(
        "--examples",
        type=non_negative_int,
        default=4,
        metavar="N",
        help="example samples per split on the HTML page (default 4)",
    )
    p.add_argument(
        "--images",
        type=Path,
        metavar="DIR",
        help="for a samples.jsonl: the folder of its PNGs as `tvr render` writes them",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    add_overwrite_option(p, "a report")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from tvr.core.jsonl import check_output_folder
    from tvr.trance.report.sources import open_source
    from tvr.trance.report.tables import order_sensitive_line
    from tvr.trance.report.writer import ReportConfig, write_report

    if args.out is not None:  # a bad --out is one line, before the bar
        check_output_folder(args.out)
    source = open_source(args.data, args.images, progress=not args.quiet)
    out = args.out
    if out is None:
        out = (args.data if args.data.is_dir() else args.data.parent) / "report"
    config = ReportConfig(
        source=str(args.data), out=str(out), split=args.split, examples=args.examples
    )
    report = write_report(source, config)
    stats = report["stats"]
    console = Console(soft_wrap=True)  # a status line is one line, also when piped
    console.print(f"[bold]report:[/bold] {out / 'index.html'}")
    console.print(
        f"{report['scope']}: {stats['samples']:,} samples; splits "
        + ", ".join(f"{k} {v['samples']:,}" for k, v in report["splits"].items())
    )
    console.print(order_sensitive_line(stats))
    steps = " ".join(f"{k}:{v}" for k, v in stats["steps"].items())
    moves = " ".join(f"{k}:{v}" for k, v in stats["move_type"].items())
    console.print(f"steps {steps}; move types {moves}")
    for n, row in stats["ngrams"].items():
        console.print(
            f"{n}: {row['options']:,} options, mean {row['mean']:.4g}, std {row['std']:.4g}"
        )
    console.print(
        f"{len(report['examples'])} examples, {len(report['plots'])} plots, "
        f"report.json and report.md in {out}"
    )
    return 0
