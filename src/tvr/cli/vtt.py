"""`tvr vtt`: the VTT benchmark's commands (stats of the released records, evaluate)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    vt = subparsers.add_parser(
        "vtt",
        help="VTT (visual transformation telling): check the records, score descriptions",
        description="VTT: describe the N transformations between N+1 state images of an "
        "instructional video. Files are in the release's layout (meta/vtt.jsonl, states/). "
        "See docs/vtt.md.",
    )
    sub = vt.add_subparsers(dest="vtt_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser(
        "stats",
        help="validate the released records and print split statistics against Table 1",
        description="Read and validate meta/vtt.jsonl (errors name the file, line and field), "
        "check the state images if --states is given, and print the numbers of Table 1 "
        "(categories, topics, samples, states, transformations, unique descriptions per "
        "source and split) with the paper's beside them.",
    )
    p.add_argument("--records", required=True, type=Path, help="the records file (vtt.jsonl)")
    p.add_argument("--states", type=Path,
                   help="the folder of state images ({id}_{N+1}_{i}.jpg) to check")  # fmt: skip
    p.add_argument("--verify-images", action="store_true",
                   help="also decode each state image's header (needs Pillow; slower)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the statistics as JSON")
    p.set_defaults(func=stats_command)

    p = sub.add_parser(
        "evaluate",
        help="score predicted descriptions with the paper's metrics",
        description="Score a prediction file (JSON lines {\"id\", \"transformations\": [N "
        "strings]}) against the records of one split as the paper's evaluation does: each "
        "description against its reference, averaged over descriptions, x100: BLEU-4 (NLTK, "
        "smoothing 7), METEOR, ROUGE-L, CIDEr-D (coco-caption), SPICE (only with a local "
        "CoreNLP) and BERTScore (roberta-large layer 17 rescaled with a local model; otherwise "
        "a small offline model, labelled as not the paper's setting). Missing descriptions are "
        "scored as empty and counted. Prints Table 2's anchors beside ours.",
    )
    p.add_argument("--records", required=True, type=Path, help="the records file (vtt.jsonl)")
    p.add_argument("--predictions", required=True, type=Path, help="the prediction file")
    p.add_argument("--split", choices=("train", "val", "test"), default="test",
                   help="the split to score (default test)")  # fmt: skip
    p.add_argument("--out", type=Path, help="write summary.json, detail.jsonl and table.md here")
    p.add_argument("--spice-corenlp", type=Path, metavar="DIR",
                   help="a folder with stanford-corenlp-3.6.0.jar and its -models.jar; "
                   "without it SPICE is reported unavailable")  # fmt: skip
    p.add_argument("--bertscore-model", type=Path, metavar="DIR",
                   help="a local roberta-large (the paper's BERTScore); without it the offline "
                   "all-MiniLM-L6-v2, labelled as not the paper's setting")  # fmt: skip
    p.add_argument("--no-bertscore", action="store_true",
                   help="skip BERTScore (reported unavailable)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print summary.json instead of the table")
    p.set_defaults(func=evaluate_command)


def stats_command(args: argparse.Namespace) -> int:
    from tvr.vtt.data.records import check_states, read_records
    from tvr.vtt.data.stats import split_statistics, stats_lines

    records = read_records(args.records)
    checked = None
    if args.states is not None:
        checked = check_states(records, args.states, args.records, verify=args.verify_images)
    stats = split_statistics(records)
    if args.json:
        print(json.dumps({**stats, "state_images_checked": checked}, indent=2))
        return 0
    print(f"{args.records}: {len(records)} records, valid")
    if checked is not None:
        print(f"{args.states}: all {checked:,} state images present"
              + (" and readable" if args.verify_images else ""))  # fmt: skip
    print("\n".join(stats_lines(stats)))
    return 0


def evaluate_command(args: argparse.Namespace) -> int:
    from tvr.core.errors import UserError
    from tvr.vtt.evaluate import evaluate, write_evaluation
    from tvr.vtt.metrics.suite import MetricOptions

    if args.no_bertscore and args.bertscore_model is not None:
        raise UserError("--no-bertscore and --bertscore-model exclude each other")
    options = MetricOptions(spice_corenlp=args.spice_corenlp,
                            bertscore_model=args.bertscore_model,
                            bertscore=not args.no_bertscore)  # fmt: skip
    if args.out is not None:  # a bad --out fails before the long part
        from tvr.core.jsonl import prepare_output_folder

        prepare_output_folder(args.out)
    result = evaluate(args.records, args.predictions, args.split, options)
    if args.out is not None:
        write_evaluation(result, args.out)
    if args.json:
        print(json.dumps(result.summary, indent=2))
    else:
        print("\n".join(result.table))
        if args.out is not None:
            print(f"wrote {args.out}/summary.json, detail.jsonl, table.md")
    return 0
