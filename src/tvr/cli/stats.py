"""`tvr stats`: the balance statistics of a sample set (Fig. 11 counts and Table 8)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console

from tvr.core.errors import InputError
from tvr.core.jsonl import write_json
from tvr.trance.data.files import read_samples
from tvr.trance.report.tables import order_sensitive_line, stats_tables
from tvr.trance.sampling.stats import balance_stats


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "stats",
        help="print the balance statistics of a samples file",
        description="Counts per balanced factor (visible objects, attribute values, steps, object "
        "index, move type, values) and the n-gram table of the paper's Table 8 "
        "(options, min, max, median, mean, std), beside the paper's numbers. "
        "`tvr report` draws the same statistics.",
    )
    p.add_argument("samples", type=Path, help="a samples.jsonl file")
    p.add_argument("--json", type=Path, help="also write the statistics to this JSON file")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    samples = read_samples(args.samples)
    if not samples:
        raise InputError(args.samples, None, None, "no samples (the file is empty)")
    stats = balance_stats(samples)
    console = Console()
    console.print(f"[bold]{args.samples}[/bold]: {len(samples)} samples")
    console.print(order_sensitive_line(stats))
    for table in stats_tables(stats):
        console.print(table)
    if args.json:
        write_json(args.json, stats)
    return 0
