"""`tvr compare`: paired comparison of two TRANCE evaluations of the same samples."""

from __future__ import annotations

import argparse

from tvr.cli._common import add_compare_options, compared_inputs, finish_comparison


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "compare",
        help="paired comparison of two TRANCE evaluations of the same samples",
        description="A and B are `tvr evaluate --out` folders (or their detail.jsonl) of one "
        "setting and the same samples (and views). The paper's metrics are compared sample by "
        "sample: ObjAcc, AttrAcc, ValAcc, Acc (Basic) and LAcc, Acc (Event, View) by the exact "
        "McNemar test, AD and AND by the paired sign-flip randomisation test, each with a "
        "seeded 95% bootstrap interval of A-B; then Acc per number of steps, per view or per "
        "attribute, and each side's EO. See docs/results-tables.md.",
    )
    add_compare_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from tvr.trance.eval.compare import compare_evaluations, markdown_lines, read_detail

    (la, a), (lb, b) = compared_inputs(args)
    document = compare_evaluations(read_detail(a, la), read_detail(b, lb),
                                   args.resamples, args.seed)  # fmt: skip
    return finish_comparison(args, document, markdown_lines(document))
