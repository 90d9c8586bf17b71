"""The `tvr` command: one entry point whose sub-commands live in small modules of this package.

Each sub-command module exposes `register(subparsers)`, which adds its parser and sets `func`;
the modules hold no logic of their own beyond reading options and calling the library.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path
from typing import Any

from tvr import __version__
from tvr.core.errors import UserError
from tvr.core.jsonl import describe_os_error

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
    "tvr.cli.curves",
    "tvr.cli.vlm",
    "tvr.cli.visualtrans",
    "tvr.cli.clevrer",
    "tvr.cli.vtt",
    "tvr.cli.tranco",
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


def os_error_message(err: OSError, parser: argparse.ArgumentParser, args: Any) -> str:
    """One line for an OSError, naming the option whose path it concerns if there is one:
    '--out /sys/x: cannot create the folder (Operation not permitted)'."""
    where = err.filename
    if where is None:
        return err.strerror or str(err)
    for option, value in _path_options(parser, args):
        target, failed = Path(value).absolute(), Path(where).absolute()
        if failed.parent == target.parent and failed.name.startswith(f".{target.name}."):
            # the temporary file of an atomic write of `value`
            return f"{option} {value}: cannot write it ({err.strerror or err})"
        if not (failed == target or target in failed.parents or failed in target.parents):
            continue
        if option == "--out":
            return f"{option} {value}: {describe_os_error(err, value)}"
        reason = err.strerror or str(err)
        return f"{option} {value}: {reason if failed == target else f'{where} ({reason})'}"
    return f"{where}: {err.strerror or err}"


def _path_options(parser: argparse.ArgumentParser, args: Any) -> list[tuple[str, str]]:
    """(option as typed, value) of each option of the sub-command that holds a path."""
    sub = next(
        (a.choices.get(args.command) for a in parser._actions
         if isinstance(a, argparse._SubParsersAction)),
        None,
    )  # fmt: skip
    found = []
    for action in sub._actions if sub else []:
        value = getattr(args, action.dest, None)
        if isinstance(value, (str, Path)) and str(value):
            name = max(action.option_strings, key=len) if action.option_strings else action.dest
            found.append((name, str(value)))
    # --out first: a failed write under two options' paths is most likely the output's
    found.sort(key=lambda item: item[0] != "--out")
    return found


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
    except OSError as err:  # a path the system refused (--out read-only, a file in the way)
        print(f"tvr {args.command}: error: {os_error_message(err, parser, args)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"tvr {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
