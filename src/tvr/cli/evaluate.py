"""`tvr evaluate`: score a predictions file by simulation; write summary.json and detail.jsonl."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tvr.cli._common import views_option
from tvr.trance.eval.evaluate import evaluate_files, print_summary
from tvr.trance.eval.metrics import MAX_STEPS_POLICIES
from tvr.trance.world.vocab import SETTINGS, VIEWS


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "evaluate",
        help="score predictions (Basic: ObjAcc/AttrAcc/ValAcc/Acc; Event, View: AD/AND/LAcc/Acc/EO)",
        description="Apply each predicted step to the initial state with the simulator and compare "
        "with the true final state (paper section 4.3). Prediction lines: "
        '{"id": SAMPLE_ID, "steps": [{"obj": 0..9, "value": "color.red"}, ...]} '
        '(View adds "view": "L"|"C"|"R"). Samples without a prediction count as wrong. '
        "A prediction may have more steps than a reference (4): by default every step is "
        "simulated, as the released evaluator does (see --max-steps-policy).",
    )
    p.add_argument("--samples", required=True, type=Path, help="samples.jsonl with the references")
    p.add_argument("--predictions", required=True, type=Path, help="predictions JSONL")
    p.add_argument("--setting", choices=SETTINGS, default="event", help="default event")
    p.add_argument("--out", type=Path, help="folder for summary.json, detail.jsonl, config.json")
    p.add_argument(
        "--lenient",
        action="store_true",
        help="score bad prediction lines as wrong (and count them) instead of stopping",
    )
    p.add_argument(
        "--max-steps-policy",
        choices=list(MAX_STEPS_POLICIES),
        default="simulate",
        help="Event/View lines with more than 4 steps: simulate = apply every step, as the "
        "released evaluator does (default; counted in summary.json's long_predictions); "
        "strict = a bad line, which stops the evaluation (with --lenient: scored as wrong, the "
        "old behaviour); lenient = a bad line scored as wrong and counted, while other bad "
        "lines still stop it. Basic scores one step: a longer Basic line is a bad line under "
        "simulate and strict, and scored as wrong under lenient",
    )
    p.add_argument(
        "--views",
        type=views_option,
        default=VIEWS,
        help="View setting: the final views scored per sample, e.g. 'L,R' (default L,C,R)",
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    summary = evaluate_files(
        args.samples,
        args.predictions,
        args.setting,
        args.out,
        args.lenient,
        args.views,
        args.max_steps_policy,
    )
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    print_summary(summary)
    if args.out:
        print(f"wrote {args.out}/summary.json and {args.out}/detail.jsonl")
    return 0
