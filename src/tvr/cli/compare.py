"""`tvr compare`: paired comparison of two evaluations of the same items, of any benchmark
(`--benchmark NAME`, default trance); `tvr BENCH compare` is the same command."""

from __future__ import annotations

import argparse

from tvr.cli.verbs import add_benchmark_option, add_compare_verb


def register(subparsers: argparse._SubParsersAction) -> None:
    p = add_compare_verb(subparsers, "trance")
    if subparsers.dest == "command":  # the top-level `tvr compare` serves every benchmark
        add_benchmark_option(p, "trance")
        p.description += (" With --benchmark NAME, two evaluations of that benchmark, as `tvr "
                          "NAME compare` compares them (its options too).")
