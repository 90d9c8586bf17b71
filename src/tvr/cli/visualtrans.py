"""`tvr visualtrans`: describe a VisualTrans file (stats), score model replies (evaluate), write
a model-free baseline's predictions (baseline) and compare two evaluations (compare)."""

from __future__ import annotations

import argparse
from pathlib import Path

from tvr.cli._common import (
    add_data_option,
    add_lenient_option,
    add_overwrite_option,
    non_negative_int,
    print_result,
)
from tvr.cli.verbs import add_compare_verb

DATA_HELP = "VisualTrans.json, or the folder holding it"


def register(subparsers: argparse._SubParsersAction) -> None:
    vt = subparsers.add_parser(
        "visualtrans",
        help="VisualTrans benchmark: describe a data file, score model replies, baselines",
        description="The VisualTrans benchmark (real manipulation scenes; 6 subtasks in 3 "
        "dimensions). See docs/visualtrans.md.",
    )
    sub = vt.add_subparsers(dest="visualtrans_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser(
        "stats",
        help="validate a data file; count items per subtask, scenario and answer format",
        description="Load and validate a VisualTrans JSON file (errors name the item index and "
        "field), then print the counts per subtask, dimension, scenario and answer format, the "
        "duplicate groups and the warnings. With --images, also the missing images (exit "
        "status 1 if any).",
    )
    add_data_option(p, DATA_HELP)
    _stats_options(p)

    p = sub.add_parser(
        "evaluate",
        help="score replies (official or normalized rules): the Table 2 row, per subtask, ...",
        description="Extract each reply's final answer and compare it with the label. "
        "--mode official reproduces the published scorer (comparable with the paper's Table 2); "
        "--mode normalized also accepts case and trailing-punctuation differences, number words "
        "and 'and' in sets. Items without a reply, failed requests and replies without a final "
        "answer count as wrong and are listed. Prints the Table 2 row; with --out also writes "
        "summary.json, summary.md, accuracy.png and detail.jsonl (one line per item, what "
        "`tvr visualtrans compare` reads) there.",
    )
    _evaluate_options(p)

    p = sub.add_parser(
        "baseline",
        help="write the predictions of a model-free baseline (random or frequent)",
        description="Answer every distinct item from its question alone and write the replies "
        "in the predictions format `tvr visualtrans evaluate` reads. random: a uniformly "
        "random answer among those the question offers (one of its option letters, a subset "
        "of its object list, or one of the file's count labels), seeded. frequent: the most "
        "frequent label of the item's subtask and answer format in the file (VisualTrans has no "
        "training split, so this prior is measured on the file it answers). The paper reports "
        "no model-free baseline; see docs/visualtrans.md.",
    )
    p.add_argument("kind", choices=("random", "frequent"), metavar="KIND",
                   help="random or frequent")  # fmt: skip
    add_data_option(p, DATA_HELP)
    p.add_argument("--seed", type=non_negative_int, default=0, help="seed of random (default 0)")
    p.add_argument("--out", required=True, type=Path, help="predictions file to write (JSONL)")
    p.set_defaults(func=baseline_command)

    add_compare_verb(sub, "visualtrans")


def _stats_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--images", type=Path, help="also check that every image exists here")
    p.add_argument("--json", action="store_true", help="print the statistics as JSON")
    p.set_defaults(func=stats_command)


def _evaluate_options(p: argparse.ArgumentParser) -> None:
    add_data_option(p, DATA_HELP)
    p.add_argument("--predictions", required=True, type=Path,
                   help="replies: the results JSONL of `tvr vlm run`, or a baseline's "
                   "predictions (the official runner's output is read too)")  # fmt: skip
    p.add_argument("--mode", choices=("official", "normalized"), default="official",
                   help="default official")  # fmt: skip
    p.add_argument(
        "--out",
        type=Path,
        help="also write summary.json, summary.md, accuracy.png, detail.jsonl here",
    )
    p.add_argument(
        "--unique",
        action="store_true",
        help="score only the first item of each duplicate group (default: every item, as the "
        "published scorer does)",
    )
    add_lenient_option(p, "predictions line (torn, not JSON, no string id)")
    add_overwrite_option(p, "an evaluation")
    p.add_argument("--json", action="store_true", help="print summary.json instead of the table")
    p.set_defaults(func=evaluate_command)


def stats_command(args: argparse.Namespace) -> int:
    from tvr.visualtrans.data.dataset import load_dataset

    dataset = load_dataset(args.data)
    summary = dataset.summary()
    if args.images is not None:
        missing = dataset.missing_images(args.images)
        summary["missing_images"] = [{"index": i, "image": p} for i, p in missing]
    lines = [f"{summary['file']}: {summary['items']} items, {summary['unique_items']} distinct"]
    for title, key in (
        ("subtask", "by_subtask"),
        ("dimension", "by_dimension"),
        ("scenario", "by_scene"),
        ("answer format", "by_format"),
    ):
        lines.append(f"per {title}:")
        lines += [f"  {name:32s} {n:5d}" for name, n in summary[key].items()]
    lines.append(f"items with a mask: {summary['with_mask']}")
    lines.append(f"duplicate groups (item indices): {summary['duplicate_groups'] or 'none'}")
    lines += [f"warning: {warning}" for warning in summary["warnings"]]
    if args.images is not None:
        missing = summary["missing_images"]
        lines.append(f"missing images: {len(missing)}")
        lines += [f"  item {m['index']}: {m['image']}" for m in missing[:20]]
    print_result(summary, lines, args.json)
    return 1 if summary.get("missing_images") else 0


def evaluate_command(args: argparse.Namespace) -> int:
    from tvr.visualtrans.data.dataset import load_dataset
    from tvr.visualtrans.eval.report import table2_row, write_report
    from tvr.visualtrans.eval.scoring import load_replies, score_dataset

    dataset = load_dataset(args.data)
    records, unreadable = load_replies(args.predictions, lenient=args.lenient)
    board = score_dataset(dataset, records, args.mode, unique_only=args.unique)
    extra = {"data": str(dataset.path), "predictions": str(args.predictions),
             "unreadable_result_lines": unreadable}  # fmt: skip
    if args.out is not None:
        summary = write_report(board, args.out, extra=extra)
    else:
        summary = {**extra, **board.summary()}
    header, row = table2_row(summary)
    width = max(len(h) for h in header)
    lines = [f"{args.mode} scoring of {summary['overall']['items']} items (accuracy %):"]
    lines += [f"  {h:<{width}}  {v:>6}" for h, v in zip(header, row, strict=True)]
    counts = summary["status_counts"]
    lines.append(f"without an answer (counted wrong): {counts['no_answer']} no final answer, "
                 f"{counts['failed']} failed requests, {counts['missing']} missing")  # fmt: skip
    if unreadable:
        lines.append(f"unreadable predictions lines (--lenient; their items count as missing): "
                     f"{len(unreadable)}, lines {', '.join(map(str, unreadable[:10]))}"
                     + (" ..." if len(unreadable) > 10 else ""))  # fmt: skip
    wrote = None
    if args.out is not None:
        chart = ", accuracy.png" if (args.out / "accuracy.png").is_file() else ""
        wrote = f"wrote {args.out}/summary.json, summary.md{chart}, detail.jsonl"
    return print_result(summary, lines, args.json, wrote)


def baseline_command(args: argparse.Namespace) -> int:
    from tvr.core.jsonl import write_jsonl
    from tvr.visualtrans.data.dataset import load_dataset
    from tvr.visualtrans.eval.baselines import baseline_predictions

    lines = baseline_predictions(load_dataset(args.data), args.kind, args.seed)
    n = write_jsonl(args.out, lines)
    print(f"wrote {args.kind} predictions for {n} distinct items to {args.out}")
    return 0
