"""`tvr export lmms-eval`: a benchmark as a task folder that `lmms-eval --include_path FOLDER`
loads (docs/ecosystem.md)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tvr.cli._common import add_data_option, add_overwrite_option
from tvr.core.extras import require_extra

#: the benchmarks with an lmms-eval exporter (each registers it in its plugin module)
LMMS_BENCHMARKS = ("visualtrans", "trance", "clevrer", "vtt", "tranco")


def register_lmms(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "lmms-eval",
        help="an lmms-eval task folder (YAML tasks, utils.py calling tvr's prompts and scorers)",
        description="Write --out: the `tvr export hf` folder of --data under hf/, a YAML per "
        "task naming it (dataset_path, absolute) and utils.py, whose doc_to_text renders tvr's "
        "prompt and whose process_results/aggregations call tvr's evaluator. Run it with "
        "`lmms-eval --include_path OUT --tasks TASK` (tvr must be importable there).",
    )
    p.add_argument("--benchmark", required=True, choices=LMMS_BENCHMARKS, help="the benchmark")
    add_data_option(p, "the benchmark's data, as its own commands read it")
    p.add_argument("--out", required=True, type=Path, help="the task folder to write")
    p.add_argument("--split", action="append", choices=("train", "val", "test"),
                   help="a split to export (repeat for several; default every split found)")  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no progress line")
    add_overwrite_option(p, "an export")
    p.set_defaults(func=run_lmms)


def run_lmms(args: argparse.Namespace) -> int:
    require_extra("hf", "tvr export lmms-eval", "pyarrow", "datasets")
    from tvr.core.hf_export import exporter
    from tvr.core.jsonl import prepare_output_folder
    from tvr.core.lmms_export import write_lmms_tasks

    splits = tuple(dict.fromkeys(args.split)) if args.split else None
    export = exporter("lmms-eval", args.benchmark)(args.data, splits)
    out = prepare_output_folder(args.out)

    def progress(what: str, n: int) -> None:
        if n % 50 == 0:
            print(f"\r{what}: {n} rows", end="", file=sys.stderr, flush=True)

    report = write_lmms_tasks(export, out, None if args.quiet else progress)
    if not args.quiet:
        print(file=sys.stderr)
    print(f"wrote {len(report.tasks)} task(s) ({', '.join(report.tasks)}) and {report.hf_rows} "
          f"rows to {out} (lmms-eval --include_path {out} --tasks {export.group})")  # fmt: skip
    return 0
