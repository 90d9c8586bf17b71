"""`tvr results`: Table 3, 4, 5 and Fig. 7, 8 of the papers for our runs, beside the published."""

from __future__ import annotations

import argparse
from pathlib import Path

from tvr.cli._common import add_overwrite_option
from tvr.trance.world.vocab import SETTINGS


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "results",
        help="result tables and plots of runs (Table 3, 4, 5, Fig. 7, 8), beside the papers'",
        description="Each RUN is a training run folder (scored against --data or the dataset it "
        "was trained on; the evaluation is cached in RUN/eval/), an evaluation folder of "
        "`tvr evaluate` (summary.json) or a predictions file (with --data), "
        "optionally written LABEL=PATH (e.g. Human=tester1.jsonl). Runs with the same label and "
        "different settings share a Table 3 row. Writes table3/table4/table5/fig7/fig8 .md .csv "
        ".json, fig7.png, fig8.png, learning_curves.png and results.md to --out, and prints "
        "the Markdown.",
    )
    p.add_argument("runs", nargs="+", metavar="RUN", help="[LABEL=]PATH")
    p.add_argument("--out", required=True, type=Path, help="folder for the tables and plots")
    p.add_argument(
        "--data",
        action="append",
        default=[],
        type=str,
        metavar="[SETTING=]PATH",
        help="the data the predictions are scored against: a dataset folder of `tvr generate` "
        "(chosen by setting), or a samples.jsonl; repeat for runs of several settings (basic=FILE "
        "event=FILE view=FILE for files)",
    )
    p.add_argument(
        "--split", default="test", help="split of --data for predictions files (default test)"
    )
    p.add_argument(
        "--setting",
        choices=SETTINGS,
        help="setting of predictions files (default: from --data, or inferred)",
    )
    p.add_argument(
        "--only-predicted",
        action="store_true",
        help="score each RUN only on the samples it has predictions for (human testers who "
        "each answered a part), instead of counting the others as wrong",
    )
    p.add_argument(
        "--compare-paper",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="add the papers' published numbers as '(paper)' rows and dashed lines (default on)",
    )
    p.add_argument(
        "--plots", action=argparse.BooleanOptionalAction, default=True, help="write the PNGs"
    )
    add_overwrite_option(p, "results")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tvr.trance.results.make import ResultsOptions, make_results

    opts = ResultsOptions(
        runs=list(args.runs),
        out=str(args.out),
        samples=[d for d in args.data if not Path(d.partition("=")[2] or d).is_dir()],
        data=[d for d in args.data if Path(d.partition("=")[2] or d).is_dir()],
        split=args.split,
        setting=args.setting,
        only_predicted=args.only_predicted,
        compare_paper=args.compare_paper,
        plots=args.plots,
    )
    report = make_results(opts)
    print(report.markdown)
    print(f"wrote {len(report.files)} files to {args.out}")
    return 0
