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
from tvr.cli._common import TvrParser
from tvr.core.errors import InputError, UserError, clip

# Start-up imports only what parsing needs: the chosen command's module comes with its parser
# (LazySubParsers) and the rest of the library inside its handler; the helpers of `main` below
# import theirs when they run.

#: the sub-commands in the order `tvr --help` lists them: (name, module, help). A module is
#: imported only when its command is parsed (`tvr --help` imports none) and its `register`
#: gives the same name and help (tests/test_cli_startup.py checks)
# fmt: off
COMMANDS: tuple[tuple[str, str, str], ...] = (
    ("demo", "tvr.cli.demo",
     "sample a small Event set and score the oracle, reversed and random baselines"),
    ("sample", "tvr.cli.sample",
     "make balanced symbolic TRANCE samples (no images)"),
    ("stats", "tvr.cli.stats",
     "print the balance statistics of a samples file"),
    ("report", "tvr.cli.report",
     "write a report on a dataset: balance plots, Table 8, examples (HTML, JSON, "
     "Markdown)"),
    ("baseline", "tvr.cli.baseline",
     "write baseline predictions (oracle, reversed, random)"),
    ("evaluate", "tvr.cli.evaluate",
     "score predictions (Basic: ObjAcc/AttrAcc/ValAcc/Acc; Event, View: "
     "AD/AND/LAcc/Acc/EO)"),
    ("compare", "tvr.cli.compare",
     "paired comparison of two TRANCE evaluations of the same samples"),
    ("convert", "tvr.cli.convert",
     "convert between tvr samples and the public release's data.jsonl"),
    ("render", "tvr.cli.render",
     "render samples' images (init.C, fin.L, fin.C, fin.R) with Cycles or the "
     "raster backend"),
    ("generate", "tvr.cli.generate",
     "make a TRANCE image dataset (sample, render, store; resumable, parallel, Ray)"),
    ("train", "tvr.cli.train",
     "train a TranceNet model (CNN/ResNet/BCNN/DUDA encoders, GRU/Transformer "
     "decoders)"),
    ("predict", "tvr.cli.predict",
     "write predictions.jsonl of a trained model"),
    ("solve", "tvr.cli.solve",
     "write the symbolic solver's predictions (parse, match, derive steps, order "
     "them)"),
    ("results", "tvr.cli.results",
     "result tables and plots of runs (Table 3, 4, 5, Fig. 7, 8), beside the papers'"),
    ("curves", "tvr.cli.curves",
     "learning curves of training runs: one panel per metric, one line per run"),
    ("trance", "tvr.cli.trance",
     "TRANCE benchmark: the top-level commands under the benchmark's name"),
    ("vlm", "tvr.cli.vlm",
     "run a vision-language model (OpenAI-compatible API) on any of the five "
     "benchmarks"),
    ("visualtrans", "tvr.cli.visualtrans",
     "VisualTrans benchmark: describe a data file, score model replies, baselines"),
    ("clevrer", "tvr.cli.clevrer",
     "CLEVRER benchmark: score answers, write baseline answers"),
    ("vtt", "tvr.cli.vtt",
     "VTT (visual transformation telling): check the records, score descriptions"),
    ("tranco", "tvr.cli.tranco",
     "TRANCO benchmark: score predicted clip sequences, write baseline predictions"),
    ("serve", "tvr.cli.serve",
     "web apps: TRANCE's human test and viewer, CLEVRER's viewer, VTT's rating pages"),
    ("export", "tvr.cli.export",
     "write a benchmark in another ecosystem's format (hf: a Hugging Face dataset "
     "folder; lmms-eval: its tasks; vlmevalkit: a TSV)"),
)
# fmt: on
#: the modules of COMMANDS, in that order
COMMAND_MODULES: tuple[str, ...] = tuple(module for _, module, _ in COMMANDS)


class LazySubParsers(argparse._SubParsersAction):
    """Sub-commands whose parsers are built only when one is chosen: `add_lazy` lists a name
    and its help (enough for `tvr --help` and for "invalid choice"); parsing that name imports
    its module and calls its `register`, whose `add_parser` takes the placeholder's place."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._lazy: dict[str, str] = {}

    def add_lazy(self, name: str, module: str, help: str) -> None:
        self.add_parser(name, help=help)
        self._lazy[name] = module

    def add_parser(self, name: str, **kwargs: Any) -> argparse.ArgumentParser:
        if self._lazy.pop(name, None) is None:
            return super().add_parser(name, **kwargs)
        order = list(self._name_parser_map)
        index = next(i for i, a in enumerate(self._choices_actions) if a.dest == name)
        del self._name_parser_map[name]
        del self._choices_actions[index]
        parser = super().add_parser(name, **kwargs)
        self._choices_actions.insert(index, self._choices_actions.pop())
        by_name = dict(self._name_parser_map)
        self._name_parser_map.clear()
        self._name_parser_map.update({n: by_name.pop(n) for n in order if n in by_name})
        self._name_parser_map.update(by_name)
        return parser

    def load(self, name: str) -> None:
        """Build the real parser of sub-command `name` if it is still a placeholder."""
        module = self._lazy.get(name)
        if module is not None:
            importlib.import_module(module).register(self)
            if name in self._lazy:  # the module did not register it: keep the parse honest
                raise RuntimeError(f"{module}.register() did not add the command {name!r}")
            _name_leaves(self._name_parser_map[name])

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:  # fmt: skip
        self.load(values[0])
        super().__call__(parser, namespace, values, option_string)


def build_parser(lazy: bool = False, argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The `tvr` parser; `lazy`: each command's parser is built only once it is chosen (what
    `main` does, so that start-up imports only the chosen command's modules). A benchmark
    installed as a plugin with no CLI module of its own gets its `tvr NAME` group
    (`tvr.cli.verbs.register`, which loads the plugins): always when not lazy, and when lazy only
    for `argv` whose command is none of COMMANDS."""
    parser = TvrParser(
        prog="tvr",
        description="Transformation-driven visual reasoning: TRANCE (its commands are top-level "
        "and under `tvr trance`), CLEVRER, VTT, TRANCO and VisualTrans. Every benchmark reads "
        "alike: `tvr BENCH stats|evaluate|baseline|compare|train|predict --data PATH ...` "
        "(docs/cli.md).",
    )
    parser.add_argument("--version", action="version", version=f"tvr {__version__}")
    parser.register("action", "parsers", LazySubParsers)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, module, help in COMMANDS:
        if lazy:
            subparsers.add_lazy(name, module, help)
        else:
            importlib.import_module(module).register(subparsers)
    words = [a for a in (sys.argv[1:] if argv is None else argv) if not a.startswith("-")]
    if not lazy or (words and words[0] not in {name for name, _, _ in COMMANDS}):
        importlib.import_module("tvr.cli.verbs").register(subparsers)
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
            from tvr.core.jsonl import describe_os_error

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
    try:  # start-up: building the chosen command's parser imports its modules
        parser = build_parser(lazy=True, argv=argv)
        args = parser.parse_args(argv)
    except KeyboardInterrupt:
        print("tvr: interrupted", file=sys.stderr)
        return 130
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    from tvr.core.extras import missing_extra_message
    from tvr.core.output_lock import release_all
    from tvr.core.output_record import write_output_record

    try:
        _lock_outputs(args)
        prepare = getattr(args, "_prepare", None)
        if prepare is not None:  # options a command fills in from its inputs, before the record
            prepare(args)
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
    from tvr.core.output_lock import lock_output

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
    from tvr.cli._common import output_record
    from tvr.core.output_record import check_output_inputs

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
    from tvr.core.output_record import guarded_file

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
