"""`tvr evaluate`: score a predictions file by simulation; write summary.json and detail.jsonl."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from tvr.cli._common import (
    add_data_option,
    add_lenient_option,
    add_overwrite_option,
    views_option,
)
from tvr.trance.eval.policies import MAX_STEPS_POLICIES
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
    add_data_option(p, "the references: samples.jsonl, or a dataset folder (of `tvr sample`, "
                    "`tvr generate`: --split of it, `tvr demo`)",
                    resolve="tvr.trance.data.files:samples_file")  # fmt: skip
    p.add_argument("--predictions", required=True, type=Path, help="predictions JSONL")
    p.add_argument("--split", default="test",
                   help="the split of a `tvr generate` folder given as --data (default test)")  # fmt: skip
    p.add_argument("--setting", choices=SETTINGS,
                   help="the setting, where the data does not say it (its config.json); "
                   "default event")  # fmt: skip
    p.add_argument("--out", type=Path, help="folder for summary.json, detail.jsonl, config.json")
    add_overwrite_option(p, "an evaluation")
    add_lenient_option(p)
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
    from tvr.trance.data.files import samples_file, setting_of_data
    from tvr.trance.eval.evaluate import evaluate_files, print_summary

    samples = samples_file(args.data, args.split)
    summary = evaluate_files(
        samples,
        args.predictions,
        setting_of_data(samples, args.setting),
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
