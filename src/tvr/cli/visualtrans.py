"""`tvr visualtrans`: check a VisualTrans file (summary) and score model replies (score)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tvr.cli._common import add_lenient_option


def register(subparsers: argparse._SubParsersAction) -> None:
    vt = subparsers.add_parser(
        "visualtrans",
        help="VisualTrans benchmark: validate and count a data file, score model replies",
        description="The VisualTrans benchmark (real manipulation scenes; 6 subtasks in 3 "
        "dimensions). See docs/visualtrans.md.",
    )
    sub = vt.add_subparsers(dest="visualtrans_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser(
        "summary",
        help="validate a data file; count items per subtask, scenario and answer format",
        description="Load and validate a VisualTrans JSON file (errors name the item index and "
        "field), then print the counts per subtask, dimension, scenario and answer format, the "
        "duplicate groups and the warnings.",
    )
    p.add_argument("data", type=Path, help="VisualTrans JSON file")
    p.add_argument("--images", type=Path, help="also check that every image exists here")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=summary_command)

    p = sub.add_parser(
        "score",
        help="score replies (official or normalized rules); write summary.json/.md, a chart",
        description="Extract each reply's final answer and compare it with the label. "
        "--mode official reproduces the published scorer (comparable with the paper's Table 2); "
        "--mode normalized also accepts case and trailing-punctuation differences, number words "
        "and 'and' in sets. Items without a reply, failed requests and replies without a final "
        "answer count as wrong and are listed. Writes summary.json, summary.md, accuracy.png "
        "and detail.jsonl (one line per item) into --out.",
    )
    p.add_argument("--data", required=True, type=Path, help="VisualTrans JSON file")
    p.add_argument(
        "--results",
        required=True,
        type=Path,
        help="results JSONL of `tvr vlm run` (the official runner's output is read too)",
    )
    p.add_argument("--mode", choices=("official", "normalized"), default="official")
    p.add_argument("--out", required=True, type=Path, help="output folder")
    p.add_argument(
        "--unique",
        action="store_true",
        help="score only the first item of each duplicate group (default: every item, as the "
        "published scorer does)",
    )
    add_lenient_option(p, "results line (torn, not JSON, no string id)")
    p.add_argument("--json", action="store_true", help="print summary.json instead of the table")
    p.set_defaults(func=score_command)


def summary_command(args: argparse.Namespace) -> int:
    from tvr.visualtrans.dataset import load_dataset

    dataset = load_dataset(args.data)
    summary = dataset.summary()
    if args.images is not None:
        missing = dataset.missing_images(args.images)
        summary["missing_images"] = [{"index": i, "image": p} for i, p in missing]
    if args.json:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
        return 1 if summary.get("missing_images") else 0
    print(f"{summary['file']}: {summary['items']} items, {summary['unique_items']} distinct")
    for title, key in (
        ("subtask", "by_subtask"),
        ("dimension", "by_dimension"),
        ("scenario", "by_scene"),
        ("answer format", "by_format"),
    ):
        print(f"per {title}:")
        for name, n in summary[key].items():
            print(f"  {name:32s} {n:5d}")
    print(f"items with a mask: {summary['with_mask']}")
    print(f"duplicate groups (item indices): {summary['duplicate_groups'] or 'none'}")
    for warning in summary["warnings"]:
        print(f"warning: {warning}")
    if args.images is not None:
        missing = summary["missing_images"]
        print(f"missing images: {len(missing)}")
        for m in missing[:20]:
            print(f"  item {m['index']}: {m['image']}")
        return 1 if missing else 0
    return 0


def score_command(args: argparse.Namespace) -> int:
    from tvr.visualtrans.dataset import load_dataset
    from tvr.visualtrans.report import table2_row, write_report
    from tvr.visualtrans.scoring import load_replies, score_dataset

    dataset = load_dataset(args.data)
    records, unreadable = load_replies(args.results, lenient=args.lenient)
    board = score_dataset(dataset, records, args.mode, unique_only=args.unique)
    summary = write_report(
        board,
        args.out,
        extra={
            "data": str(args.data),
            "results": str(args.results),
            "unreadable_result_lines": unreadable,
        },
    )
    if args.json:
        print(json.dumps(summary, indent=2, ensure_ascii=False))
        return 0
    header, row = table2_row(summary)
    width = max(len(h) for h in header)
    print(f"{args.mode} scoring of {summary['overall']['items']} items (accuracy %):")
    for h, v in zip(header, row, strict=True):
        print(f"  {h:<{width}}  {v:>6}")
    counts = summary["status_counts"]
    print(
        f"without an answer (counted wrong): {counts['no_answer']} no final answer, "
        f"{counts['failed']} failed requests, {counts['missing']} missing"
    )
    if unreadable:
        print(f"unreadable results lines (--lenient; their items count as missing): "
              f"{len(unreadable)}, lines {', '.join(map(str, unreadable[:10]))}"
              + (" ..." if len(unreadable) > 10 else ""))  # fmt: skip
    chart = ", accuracy.png" if (args.out / "accuracy.png").is_file() else ""
    print(f"wrote {args.out}/summary.json, summary.md{chart}, detail.jsonl")
    return 0
