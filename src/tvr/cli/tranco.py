"""`tvr tranco`: the TRANCO benchmark's commands (evaluate, baseline)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tvr.cli._common import non_negative_int, positive_int, require

SETTING_HELP = (
    "candidate sets: tiny (each sample's listed candidates, @100 in the paper), full (every "
    "clip of the samples file) or auto (tiny if every sample lists candidates; the default)"
)


def register(subparsers: argparse._SubParsersAction) -> None:
    tr = subparsers.add_parser(
        "tranco",
        help="TRANCO benchmark: score predicted clip sequences, write baseline predictions",
        description="TRANCO (the ordered step clips of a real process between its initial and "
        "final images, chosen among candidate clips never seen in training). Files are JSON "
        "lines; see docs/tranco.md.",
    )
    sub = tr.add_subparsers(dest="tranco_command", metavar="SUBCOMMAND", required=True)

    p = sub.add_parser(
        "evaluate",
        help="score a predictions file against the samples (EMR, R, P, KTD, SD, NSD)",
        description='Score predictions ({"id", "clips"} per line) against samples ({"id", '
        '"clips", "candidates"?} per line): EMR, Recall, Precision, KTD, SD and NSD, overall '
        "and per number of steps, under both conventions (eq2: the paper's printed Eq. 2 and "
        "its tables; prose: the text's definitions). A sample without a prediction is scored "
        "as an empty prediction and counted. Prints the paper's Table 6 and 7 beside ours.",
    )
    p.add_argument("--samples", required=True, type=Path, help="samples file (JSON lines)")
    p.add_argument("--predictions", required=True, type=Path, help="predictions file (JSON lines)")
    p.add_argument("--convention", choices=("eq2", "prose"), default="eq2",
                   help="the convention of the printed table (default eq2, the paper's); "
                   "summary.json holds both")  # fmt: skip
    p.add_argument("--candidates", choices=("auto", "tiny", "full"), default="auto",
                   help=SETTING_HELP)  # fmt: skip
    p.add_argument("--out", type=Path, help="write summary.json, detail.jsonl and table.md here")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=evaluate_command)

    p = sub.add_parser(
        "baseline",
        help="write the predictions of the paper's random baseline",
        description="random: for each sample, n steps uniform on --min-steps..--max-steps (the "
        "paper: 2 to 7), then n distinct candidates in a random order. Seeded.",
    )
    p.add_argument("--samples", required=True, type=Path, help="samples file (JSON lines)")
    p.add_argument("--kind", required=True, choices=("random",))
    p.add_argument("--candidates", choices=("auto", "tiny", "full"), default="auto",
                   help=SETTING_HELP)  # fmt: skip
    p.add_argument("--seed", type=non_negative_int, default=0, help="default 0")
    p.add_argument("--min-steps", type=positive_int, default=2, help="default 2 (the paper's)")
    p.add_argument("--max-steps", type=positive_int, default=7, help="default 7 (the paper's)")
    p.add_argument("--out", required=True, type=Path, help="predictions file to write")
    p.set_defaults(func=baseline_command)


def evaluate_command(args: argparse.Namespace) -> int:
    from tvr.core.jsonl import prepare_output_folder, write_json, write_jsonl, write_text
    from tvr.tranco.data.formats import read_predictions, read_samples
    from tvr.tranco.evaluate import detail_records, evaluate, summarize, table_lines

    samples = read_samples(args.samples)
    predictions = read_predictions(args.predictions, {s.id for s in samples})
    evaluation = evaluate(samples, predictions, args.candidates)
    summary = summarize(evaluation, samples=str(args.samples), predictions=str(args.predictions))
    lines = table_lines(summary, args.convention, f"ours: {args.predictions.name}")
    if args.out is not None:
        out = prepare_output_folder(args.out)
        write_json(out / "summary.json", summary)
        write_jsonl(out / "detail.jsonl", detail_records(evaluation))
        write_text(out / "table.md", "```\n" + "\n".join(lines) + "\n```\n")
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print("\n".join(lines))
        if args.out is not None:
            print(f"wrote {args.out}/summary.json, detail.jsonl, table.md")
    return 0


def baseline_command(args: argparse.Namespace) -> int:
    from tvr.tranco.data.formats import read_samples, write_predictions
    from tvr.tranco.random_baseline import random_predictions

    require(args.min_steps <= args.max_steps,
            f"--min-steps {args.min_steps} is above --max-steps {args.max_steps}")  # fmt: skip
    samples = read_samples(args.samples)
    setting, predictions = random_predictions(
        samples, args.seed, args.candidates, args.min_steps, args.max_steps
    )
    count = write_predictions(args.out, predictions)
    print(f"wrote {count} predictions of the random baseline ({setting} candidates) to {args.out}")
    return 0
