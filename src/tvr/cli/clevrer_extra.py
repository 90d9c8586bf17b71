"""`tvr clevrer compare` and `tvr clevrer stats` (registered by `tvr.cli.clevrer`)."""

from __future__ import annotations

import argparse

from tvr.cli._common import (
    add_compare_options,
    add_data_option,
    compared_inputs,
    finish_comparison,
    print_result,
)


def register_compare(sub: argparse._SubParsersAction) -> None:
    """`tvr clevrer compare`."""
    p = sub.add_parser(
        "compare",
        help="paired comparison of two evaluations of the same questions",
        description="A and B are `tvr clevrer evaluate --out` folders (or their detail.jsonl) "
        "of the same question file. The paper's metrics are compared item by item: descriptive "
        "accuracy question by question, each multiple-choice type's per-option accuracy option "
        "by option and per-question accuracy question by question, by the exact McNemar test "
        "with a seeded 95% bootstrap interval of A-B; then descriptive accuracy per sub-type. "
        "See docs/clevrer.md.",
    )
    add_compare_options(p)
    p.set_defaults(func=compare_command)


def compare_command(args: argparse.Namespace) -> int:
    from tvr.clevrer.eval.compare import compare_evaluations, markdown_lines, read_detail

    (la, a), (lb, b) = compared_inputs(args)
    document = compare_evaluations(read_detail(a, la), read_detail(b, lb),
                                   args.resamples, args.seed)  # fmt: skip
    return finish_comparison(args, document, markdown_lines(document))


def register_stats(sub: argparse._SubParsersAction) -> None:
    """`tvr clevrer stats`."""
    p = sub.add_parser(
        "stats",
        help="counts of a set: videos, questions per type and sub-type, answer shares, events",
        description="Read a CLEVRER set (a folder made by `tvr clevrer generate`, or the "
        "release's layout) or one question file, and print its videos and questions, "
        "questions per type beside the release's shares, per descriptive sub-type with its "
        "answer shares, the options of the multiple-choice types and the share labelled "
        "correct, the language prior of the template families and the events per annotated "
        "video. `tvr clevrer report` draws the same counts.",
    )
    add_data_option(p, "the set's folder, or a question file")
    p.add_argument("--split", choices=("train", "val", "test"),
                   help="one split of a set's folder (default: every split it has)")  # fmt: skip
    p.add_argument("--json", action="store_true", help="print the statistics as JSON")
    p.set_defaults(func=stats_command)


def stats_command(args: argparse.Namespace) -> int:
    from tvr.clevrer.report.set_stats import set_stats, stats_lines

    stats = set_stats(args.data, args.split)
    return print_result(stats, stats_lines(stats), args.json)
