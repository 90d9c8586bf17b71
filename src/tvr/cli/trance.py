"""`tvr trance`: TRANCE's commands under its own name, as every other benchmark has them.

They are the top-level commands (`tvr trance evaluate` is `tvr evaluate`): both forms stay.
"""

from __future__ import annotations

import argparse
import importlib

#: the top-level commands that are not TRANCE's: the groups of the other benchmarks and the
#: commands that serve several
NOT_TRANCE = frozenset({"tvr.cli.trance", "tvr.cli.vlm", "tvr.cli.visualtrans", "tvr.cli.clevrer",
                        "tvr.cli.vtt", "tvr.cli.tranco", "tvr.cli.serve",
                        "tvr.cli.verbs"})  # fmt: skip


def register(subparsers: argparse._SubParsersAction) -> None:
    tr = subparsers.add_parser(
        "trance",
        help="TRANCE benchmark: the top-level commands under the benchmark's name",
        description="TRANCE (Basic, Event, View: infer the atomic steps between two images; "
        "scored by simulation). These are tvr's top-level commands: `tvr trance evaluate` is "
        "`tvr evaluate`. See docs/datasets.md, docs/models.md, docs/results.md.",
    )
    sub = tr.add_subparsers(dest="trance_command", metavar="SUBCOMMAND", required=True)
    from tvr.cli import COMMAND_MODULES

    for name in COMMAND_MODULES:  # in the order `tvr --help` lists them
        if name not in NOT_TRANCE:
            importlib.import_module(name).register(sub)
    # TRANCE's own, with no top-level form
    importlib.import_module("tvr.cli.trance_parser").register(sub)
