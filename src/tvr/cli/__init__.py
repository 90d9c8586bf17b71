"""The `tvr` command: one entry point whose sub-commands live in small modules of this package.

Each sub-command module exposes `register(subparsers)`, which adds its parser and sets `func`;
the modules hold no logic of their own beyond reading options and calling the library.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from tvr import __version__
from tvr.core.errors import UserError

#: sub-command modules, in the order `tvr --help` lists them
COMMAND_MODULES: tuple[str, ...] = (
    "tvr.cli.demo",
    "tvr.cli.sample",
    "tvr.cli.stats",
    "tvr.cli.report",
    "tvr.cli.baseline",
    "tvr.cli.evaluate",
    "tvr.cli.convert",
    "tvr.cli.render",
    "tvr.cli.generate",
    "tvr.cli.train",
    "tvr.cli.predict",
    "tvr.cli.results",
    "tvr.cli.vlm",
    "tvr.cli.visualtrans",
    "tvr.cli.serve",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tvr",
        description="Transformation-driven visual reasoning: make TRANCE data, run baselines, "
        "evaluate predictions by simulation.",
    )
    parser.add_argument("--version", action="version", version=f"tvr {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except UserError as err:
        print(f"tvr {args.command}: error: {err}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"tvr {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
