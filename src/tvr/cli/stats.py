"""`tvr stats`: the balance statistics of a sample set (Fig. 11 counts and Table 8)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tvr.cli._common import add_data_option, add_file_overwrite_option
from tvr.core.errors import InputError
from tvr.core.jsonl import write_json


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "stats",
        help="print the balance statistics of a samples file",
        description="Counts per balanced factor (visible objects, attribute values, steps, object "
        "index, move type, values) and the n-gram table of the paper's Table 8 "
        "(options, min, max, median, mean, std), beside the paper's numbers. "
        "`tvr report` draws the same statistics.",
    )
    add_data_option(p, "samples.jsonl, or a dataset folder (--split of a `tvr generate` one)")
    p.add_argument("--split", default="test", help="the split of a dataset folder (default test)")
    p.add_argument("--json", action="store_true",
                   help="print the statistics as JSON instead of the tables")  # fmt: skip
    p.add_argument("--out", type=Path, help="also write the statistics to this JSON file")
    add_file_overwrite_option(p, "statistics")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console

    from tvr.trance.data.files import read_samples, samples_file
    from tvr.trance.report.tables import order_sensitive_line, stats_tables
    from tvr.trance.sampling.stats import balance_stats

    path = samples_file(args.data, args.split)
    samples = read_samples(path)
    if not samples:
        raise InputError(path, None, None, "no samples (the file is empty)")
    stats = balance_stats(samples)
    if args.out:
        write_json(args.out, stats)
    if args.json:
        print(json.dumps(stats, indent=2))
        return 0
    console = Console(soft_wrap=True)  # a status line is one line, also when piped
    console.print(f"[bold]{path}[/bold]: {len(samples)} samples")
    console.print(order_sensitive_line(stats))
    for table in stats_tables(stats):
        console.print(table)
    return 0
