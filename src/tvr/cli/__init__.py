"""The `tvr` command: one entry point whose sub-commands live in small modules of this package.

Each sub-command module exposes `register(subparsers)`, which adds its parser and sets `func`;
the modules hold no logic of their own beyond reading options and calling the library.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import select
import sys
from pathlib import Path
from typing import Any

from tvr import __version__
from tvr.cli._common import TvrParser, output_record
from tvr.core.errors import InputError, UserError, clip
from tvr.core.extras import missing_extra_message
from tvr.core.jsonl import describe_os_error
from tvr.core.output_lock import lock_output, release_all
from tvr.core.output_record import check_output_inputs, guarded_file, write_output_record

#: sub-command modules, in the order `tvr --help` lists them
COMMAND_MODULES: tuple[str, ...] = (
    "tvr.cli.demo",
    "tvr.cli.sample",
    "tvr.cli.stats",
    "tvr.cli.report",
    "tvr.cli.baseline",
    "tvr.cli.evaluate",
    "tvr.cli.compare",
    "tvr.cli.convert",
    "tvr.cli.render",
    "tvr.cli.generate",
    "tvr.cli.train",
    "tvr.cli.predict",
    "tvr.cli.solve",
    "tvr.cli.results",
    "tvr.cli.curves",
    "tvr.cli.trance",
    "tvr.cli.vlm",
    "tvr.cli.visualtrans",
    "tvr.cli.clevrer",
    "tvr.cli.vtt",
    "tvr.cli.tranco",
    "tvr.cli.serve",
    "tvr.cli.export",
    "tvr.cli.verbs",
)


def build_parser() -> argparse.ArgumentParser:
    parser = TvrParser(
        prog="tvr",
        description="Transformation-driven visual reasoning: TRANCE (its commands are top-level "
        "and under `tvr trance`), CLEVRER, VTT, TRANCO and VisualTrans. Every benchmark reads "
        "alike: `tvr BENCH stats|evaluate|baseline|compare|train|predict --data PATH ...` "
        "(docs/cli.md).",
    )
    parser.add_argument("--version", action="version", version=f"tvr {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(subparsers)
    _name_leaves(parser)
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
        prepare = getattr(args, "_prepare", None)
        if prepare is not None:  # options a command fills in from its inputs, before the record
            prepare(args)
        _lock_outputs(args)
        record = _check_output_inputs(args)
        status = _run_guarded(args)
        if record is not None and status == 0:
            write_output_record(args.out, record, getattr(args, "_record_beside", False))
        return status
    except UserError as err:
        print(f"{_prog(args)}: error: {clip(str(err))}{_lenient_hint(err, args)}",
              file=sys.stderr)  # fmt: skip
        return 2
    except ModuleNotFoundError as err:  # an optional package: one line naming its extra
        message = missing_extra_message(err, _prog(args))
        if message is None:
            raise
        print(f"{_prog(args)}: error: {message}", file=sys.stderr)
        return 2
    except BrokenPipeError as err:
        if _stdout_closed():  # `tvr ... | head`: the reader has all it wanted
            return 0
        print(f"{_prog(args)}: error: {os_error_message(err, parser, args)}", file=sys.stderr)
        return 2
    except OSError as err:  # a path the system refused (--out read-only, a file in the way)
        print(f"{_prog(args)}: error: {os_error_message(err, parser, args)}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"{_prog(args)}: interrupted", file=sys.stderr)
        return 130
    finally:
        release_all()


def _prog(args: argparse.Namespace) -> str:
    """The command as its messages name it: "tvr clevrer evaluate", "tvr evaluate"."""
    return getattr(args, "_tvr_prog", None) or f"tvr {args.command}"


def _name_leaves(parser: argparse.ArgumentParser) -> None:
    """Give every sub-command that runs something its full name (`_tvr_prog`), for messages."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        parser.set_defaults(_tvr_prog=parser.prog)
    for sub in subs:
        for child in sub.choices.values():
            _name_leaves(child)


def _lenient_hint(err: UserError, args: argparse.Namespace) -> str:
    """What a scoring command adds to a bad line of its predictions file: --lenient skips it."""
    predictions = getattr(args, "predictions", None)
    if (isinstance(err, InputError) and err.line is not None and getattr(args, "lenient", None)
            is False and isinstance(predictions, Path) and Path(err.path) == predictions):  # fmt: skip
        return " (--lenient skips bad lines, scoring them as wrong)"
    return ""


def _lock_outputs(args: argparse.Namespace) -> None:
    """One writer per output: take the lock of the command's --out (a folder or a file) and of
    its training run folder (--output-dir/--run-name) before the command reads anything, so a
    second run into the same output is refused at once and writes nothing."""
    out = getattr(args, "out", None)
    if isinstance(out, (str, Path)) and str(out) not in ("", "-"):
        lock_output(out)
    output_dir, run_name = getattr(args, "output_dir", None), getattr(args, "run_name", None)
    if output_dir and run_name:
        lock_output(Path(output_dir) / run_name)


def _check_output_inputs(args: argparse.Namespace) -> dict[str, Any] | None:
    """No silent overwrite (`tvr.core.output_record`): for a command with --overwrite, refuse an
    --out folder holding results of other inputs; the record to save once the command is done."""
    if not getattr(args, "_guard_out", False) or getattr(args, "out", None) is None:
        return None
    record = output_record(args)
    check_output_inputs(args.out, record, args.overwrite,
                        beside=getattr(args, "_record_beside", False))  # fmt: skip
    return record


def _run_guarded(args: argparse.Namespace) -> int:
    """Run the command; one whose --out is a file that exists (`add_file_overwrite_option`)
    keeps it unless it writes the same bytes or --overwrite is given (its lines on stdout are
    held until then, so a refused run does not say "wrote")."""
    what, out = getattr(args, "_guard_file", None), getattr(args, "out", None)
    if not what or out is None or str(out) == "-":
        return int(args.func(args) or 0)
    out = Path(out)
    held = out.is_file() and not args.overwrite
    beside = getattr(args, "_guard_beside", None)
    lines = io.StringIO()
    hold = contextlib.redirect_stdout(lines) if held else contextlib.nullcontext()
    with guarded_file(out, args.overwrite, what, beside(out) if beside else ()), hold:
        status = int(args.func(args) or 0)
    sys.stdout.write(lines.getvalue())
    return status


def _stdout_closed() -> bool:
    """Whether standard output's reader went away (a pipe whose read end is closed reports an
    error to poll); if so, point stdout at /dev/null so that the interpreter's last flush does
    not complain."""
    try:
        fd = sys.stdout.fileno()
        poller = select.poll()
        poller.register(fd, select.POLLOUT)
        closed = any(event & select.POLLERR for _, event in poller.poll(0))
    except (OSError, ValueError, AttributeError):
        return False
    if closed:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, fd)
    return closed


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
