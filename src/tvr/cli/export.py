"""`tvr export hf`: a benchmark as a folder that `datasets.load_dataset(FOLDER)` reads offline."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tvr.cli._common import add_data_option, add_overwrite_option
from tvr.core.extras import require_extra

BENCHMARKS = ("trance", "clevrer", "vtt", "tranco", "visualtrans")


def register(subparsers: argparse._SubParsersAction) -> None:
    group = subparsers.add_parser(
        "export",
        help="write a benchmark in another ecosystem's format (hf: a Hugging Face dataset folder; lmms-eval: its tasks; vlmevalkit: a TSV)",
        description="Write a benchmark's data in another ecosystem's format. `tvr export hf`: "
        "Parquet shards and a dataset card that `datasets.load_dataset(FOLDER)` reads offline "
        "(docs/ecosystem.md). Nothing is uploaded.",
    )
    sub = group.add_subparsers(dest="export_command", metavar="FORMAT", required=True)
    p = sub.add_parser(
        "hf",
        help="a Hugging Face dataset folder (Parquet, dataset card; no loading script)",
        description="Read --data with the benchmark's own readers and write --out: "
        "data/CONFIG/SPLIT-NNNNN.parquet (images, and CLEVRER's mp4s, embedded) and README.md "
        "(configs, features, licence, citation, how to score with tvr). The `id` column is the id tvr's evaluators key predictions by.",
    )
    p.add_argument("--benchmark", required=True, choices=BENCHMARKS, help="the benchmark")
    add_data_option(p, "the benchmark's data, as its own commands read it (a dataset folder or "
                    "its reference file)")  # fmt: skip
    p.add_argument("--out", required=True, type=Path, help="the folder to write")
    p.add_argument("--split", action="append", choices=("train", "val", "test"),
                   help="a split to export (repeat for several; default every split found)")  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no progress line")
    add_overwrite_option(p, "an export")
    p.set_defaults(func=run_hf)

    from tvr.cli.export_lmms import register_lmms

    register_lmms(sub)

    from tvr.cli.export_vlmevalkit import register_vlmevalkit

    register_vlmevalkit(sub)


def run_hf(args: argparse.Namespace) -> int:
    require_extra("hf", "tvr export hf", "pyarrow", "datasets")
    from tvr.core.hf_export import exporter, write_hf_dataset
    from tvr.core.jsonl import prepare_output_folder

    splits = tuple(dict.fromkeys(args.split)) if args.split else None
    dataset = exporter("hf", args.benchmark)(args.data, splits)
    out = prepare_output_folder(args.out)

    def progress(what: str, n: int) -> None:
        if n % 50 == 0:
            print(f"\r{what}: {n} rows", end="", file=sys.stderr, flush=True)

    report = write_hf_dataset(dataset, out, None if args.quiet else progress)
    if not args.quiet:
        print(file=sys.stderr)
    for config, splits_rows in report.rows.items():
        rows = ", ".join(f"{s} {n}" for s, n in splits_rows.items())
        print(f"{config}: {rows}")
    print(f"wrote {report.total_rows} rows, {report.bytes / 1e6:.1f} MB in "
          f"{report.seconds:.1f} s to {out} (datasets.load_dataset({str(out)!r}))")  # fmt: skip
    return 0
