"""`tvr stats`: the balance statistics of a sample set (Fig. 11 counts and Table 8)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.console import Console
from rich.table import Table

from tvr.trance.balance import BalanceCounts, sample_factors
from tvr.trance.samples_io import read_samples, write_json


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "stats",
        help="print the balance statistics of a samples file",
        description="Counts per balanced factor (visible objects, attribute values, steps, object "
        "index, move type, values) and the n-gram table of the paper's Table 8 "
        "(options, min, max, median, mean, std).",
    )
    p.add_argument("samples", type=Path, help="a samples.jsonl file")
    p.add_argument("--json", type=Path, help="also write the statistics to this JSON file")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    samples = read_samples(args.samples)
    counts = BalanceCounts()
    for s in samples:
        counts.record(sample_factors(s))
    stats = counts.to_dict()
    stats["order_sensitive"] = sum(bool(s.order_sensitive) for s in samples)
    console = Console()
    console.print(
        f"[bold]{args.samples}[/bold]: {len(samples)} samples, "
        f"{stats['order_sensitive']} order-sensitive "
        f"({stats['order_sensitive'] / max(len(samples), 1):.1%})"
    )
    for factor in ("visible_objects", "steps", "object_index", "move_type"):
        row = stats[factor]
        t = Table(title=factor.replace("_", " "))
        for k in row:
            t.add_column(k, justify="right")
        t.add_row(*(str(v) for v in row.values()))
        console.print(t)
    for attr, row in stats["attribute_values"].items():
        t = Table(title=f"object {attr}")
        for k in row:
            t.add_column(k, justify="right")
        t.add_row(*(str(v) for v in row.values()))
        console.print(t)
    t = Table(title="n-gram atomic transformations (Table 8)")
    t.add_column("")
    for n in stats["ngrams"]:
        t.add_column(n, justify="right")
    for key in ("options", "min", "max", "median", "mean", "std"):
        t.add_row(key, *(f"{row[key]:,.4g}" for row in stats["ngrams"].values()))
    console.print(t)
    if args.json:
        write_json(args.json, stats)
    return 0
