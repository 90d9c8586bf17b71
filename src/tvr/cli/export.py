"""`tvr export`: a benchmark in another ecosystem's format: a Hugging Face dataset folder that
`datasets.load_dataset(FOLDER)` reads offline (hf), lmms-eval tasks over it (lmms-eval), a
VLMEvalKit MCQ TSV (vlmevalkit); docs/ecosystem.md."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

from tvr.cli._common import add_data_option, add_file_overwrite_option, add_overwrite_option
from tvr.core.extras import require_extra

BENCHMARKS = ("trance", "clevrer", "vtt", "tranco", "visualtrans")
#: the benchmarks with an lmms-eval exporter (each registers it in its plugin module)
LMMS_BENCHMARKS = ("visualtrans", "trance", "clevrer", "vtt", "tranco")


def register(subparsers: argparse._SubParsersAction) -> None:
    group = subparsers.add_parser(
        "export",
        help="write a benchmark in another ecosystem's format (hf: a Hugging Face dataset "
        "folder; lmms-eval: its tasks; vlmevalkit: a TSV)",
        description="Write a benchmark's data in another ecosystem's format: `hf`, Parquet "
        "shards and a dataset card that `datasets.load_dataset(FOLDER)` reads offline; "
        "`lmms-eval`, tasks over that folder scored by tvr; `vlmevalkit`, a multiple-choice TSV "
        "(docs/ecosystem.md). Nothing is uploaded.",
    )
    sub = group.add_subparsers(dest="export_command", metavar="FORMAT", required=True)
    p = sub.add_parser(
        "hf",
        help="a Hugging Face dataset folder (Parquet, dataset card; no loading script)",
        description="Read --data with the benchmark's own readers and write --out: "
        "data/CONFIG/SPLIT-NNNNN.parquet (images, and CLEVRER's mp4s, embedded) and README.md "
        "(configs, features, licence, citation, how to score with tvr). The `id` column is the "
        "id tvr's evaluators key predictions by.",
    )
    _folder_options(p, BENCHMARKS, "the benchmark's data, as its own commands read it (a dataset "
                    "folder or its reference file)", "the folder to write")  # fmt: skip
    # the folder is uploaded as it is: its record of local paths stays beside it
    p.set_defaults(func=run_hf, _record_beside=True)

    p = sub.add_parser(
        "lmms-eval",
        help="an lmms-eval task folder (YAML tasks, utils.py calling tvr's prompts and scorers)",
        description="Write --out: the `tvr export hf` folder of --data under hf/, a YAML per "
        "task naming it (dataset_path, absolute) and utils.py, whose doc_to_text renders tvr's "
        "prompt and whose process_results/aggregations call tvr's evaluator. Run it with "
        "`lmms-eval --include_path OUT --tasks TASK` (tvr must be importable there).",
    )
    _folder_options(p, LMMS_BENCHMARKS, "the benchmark's data, as its own commands read it",
                    "the task folder to write")  # fmt: skip
    p.set_defaults(func=run_lmms)

    p = sub.add_parser(
        "vlmevalkit",
        help="a VLMEvalKit custom MCQ TSV (VisualTrans's multiple-choice items)",
        description="Write the multiple-choice items of --data as a VLMEvalKit image MCQ TSV: "
        "index, image (base64; a list literal for several images) or image_path, question, "
        "A-D, answer, category (the task type), id (tvr's item id). Count and set questions are "
        "left out. Scoring through tvr (`tvr visualtrans evaluate`) is the exact path "
        "(docs/ecosystem.md).",
    )
    p.add_argument("--benchmark", choices=("visualtrans",), default="visualtrans",
                   help="the benchmark (default and only: visualtrans)")  # fmt: skip
    add_data_option(p, "the folder of VisualTrans.json or the file")
    p.add_argument("--out", required=True, type=Path, help="the TSV file to write")
    add_file_overwrite_option(p, "items")
    p.add_argument("--image-paths", action="store_true",
                   help="an image_path column (absolute paths) instead of base64 images")  # fmt: skip
    p.set_defaults(func=run_vlmevalkit)


def _folder_options(
    p: argparse.ArgumentParser, benchmarks: tuple[str, ...], data: str, out: str
) -> None:
    """The options of an export that writes a folder: --benchmark, --data, --out, --split,
    --quiet, --overwrite."""
    p.add_argument("--benchmark", choices=benchmarks,
                   help="the benchmark (default: the one whose data --data is)")  # fmt: skip
    p.set_defaults(_prepare=_infer_benchmark)
    add_data_option(p, data)
    p.add_argument("--out", required=True, type=Path, help=out)
    p.add_argument("--split", action="append", choices=("train", "val", "test"),
                   help="a split to export (repeat for several; default every split found)")  # fmt: skip
    p.add_argument("--quiet", action="store_true", help="no progress line")
    add_overwrite_option(p, "an export")


def _infer_benchmark(args: argparse.Namespace) -> None:
    """--benchmark from the data where it is not given: the one benchmark whose recognizer
    (`tvr.core.data_path.register_recognizer`, in each plugin) takes --data."""
    if args.benchmark is not None:
        return
    from tvr.core.data_path import recognized_benchmarks
    from tvr.core.errors import UserError

    if not args.data.exists():
        raise UserError(f"--data {args.data}: no such file or folder")
    found = recognized_benchmarks(args.data)
    if len(found) != 1:
        which = f"it reads as {' and '.join(found)}" if found else "no benchmark recognizes it"
        raise UserError(f"--data {args.data}: give --benchmark ({which})")
    args.benchmark = found[0]


def _splits(args: argparse.Namespace) -> tuple[str, ...] | None:
    return tuple(dict.fromkeys(args.split)) if args.split else None


def _row_progress(quiet: bool) -> Callable[[str, int], None] | None:
    """The writers' progress callback: one line on stderr, rewritten every 50 rows."""
    if quiet:
        return None

    def progress(what: str, n: int) -> None:
        if n % 50 == 0:
            print(f"\r{what}: {n} rows", end="", file=sys.stderr, flush=True)

    return progress


def _say_no_images(no_images: dict[str, list[str]]) -> None:
    """One note per table whose image columns are null in every row: the data had no images."""
    for table, columns in no_images.items():
        print(f"note: {table}: no image files found beside --data; the image column(s) "
              f"{', '.join(columns)} are null in every row (give the dataset folder that holds "
              "the images, e.g. a `tvr generate` one)", file=sys.stderr)  # fmt: skip


def run_hf(args: argparse.Namespace) -> int:
    require_extra("hf", "tvr export hf", "pyarrow", "datasets")
    from tvr.core.hf_export import exporter, write_hf_dataset

    dataset = exporter("hf", args.benchmark)(args.data, _splits(args))
    out = Path(args.out)
    report = write_hf_dataset(dataset, out, _row_progress(args.quiet))
    if not args.quiet:
        print(file=sys.stderr)
    _say_no_images(report.no_images)
    for config, splits_rows in report.rows.items():
        rows = ", ".join(f"{s} {n}" for s, n in splits_rows.items())
        print(f"{config}: {rows}")
    print(f"wrote {report.total_rows} rows, {report.bytes / 1e6:.1f} MB in "
          f"{report.seconds:.1f} s to {out} (datasets.load_dataset({str(out)!r}))")  # fmt: skip
    return 0


def run_lmms(args: argparse.Namespace) -> int:
    require_extra("hf", "tvr export lmms-eval", "pyarrow", "datasets")
    from tvr.core.hf_export import exporter
    from tvr.core.lmms_export import tvr_request_flags, write_lmms_tasks

    export = exporter("lmms-eval", args.benchmark)(args.data, _splits(args))
    out = Path(args.out)
    report = write_lmms_tasks(export, out, _row_progress(args.quiet))
    if not args.quiet:
        print(file=sys.stderr)
    _say_no_images(report.no_images)
    print(f"wrote {len(report.tasks)} task(s) ({', '.join(report.tasks)}) and {report.hf_rows} "
          f"rows to {out} (lmms-eval --include_path {out} --tasks {export.group})")  # fmt: skip
    flags = sorted({tvr_request_flags(t) for t in export.tasks if t.name in report.tasks})
    if flags:
        print(f"lmms-eval sends temperature and max_tokens: the same request from tvr is "
              f"`tvr vlm run ... {' / '.join(flags)}`; replies are scored raw (the tasks set "
              "reasoning_tags: none)")  # fmt: skip
    return 0


def run_vlmevalkit(args: argparse.Namespace) -> int:
    from tvr.core.errors import UserError
    from tvr.visualtrans.vlmevalkit_export import write_visualtrans_tsv

    out = Path(args.out)
    if out.is_dir():
        raise UserError(f"--out {out}: a folder; give the TSV file to write")
    out.parent.mkdir(parents=True, exist_ok=True)
    rows = write_visualtrans_tsv(args.data, out, image_paths=args.image_paths)
    print(f"wrote {rows} multiple-choice items to {out}")
    return 0
