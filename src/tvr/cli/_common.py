"""Shared option and output helpers for the CLI modules (no logic of the library here)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from itertools import pairwise
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError
from tvr.trance.world.vocab import VIEWS


def _bounded(text: str, kind: type, above: float, inclusive: bool, wanted: str) -> int | float:
    """Parse `text` as `kind` and check it lies above (or at, if inclusive) `above`."""
    try:
        value = kind(text)
    except ValueError:
        name = "an integer" if kind is int else "a number"
        raise argparse.ArgumentTypeError(f"expected {name}, got {text!r}") from None
    if value < above or (value == above and not inclusive):
        raise argparse.ArgumentTypeError(f"expected {wanted}, got {value}")
    return value


def positive_int(text: str) -> int:
    return int(_bounded(text, int, 1, True, "a positive integer"))


def non_negative_int(text: str) -> int:
    return int(_bounded(text, int, 0, True, "0 or more"))


def positive_float(text: str) -> float:
    return float(_bounded(text, float, 0.0, False, "a positive number"))


def non_negative_float(text: str) -> float:
    return float(_bounded(text, float, 0.0, True, "0 or more"))


def devices_option(text: str) -> int | str:
    """Lightning's --devices: auto or a number of devices."""
    return text if text == "auto" else positive_int(text)


def views_option(text: str) -> tuple[str, ...]:
    views = tuple(v.strip() for v in text.split(",") if v.strip())
    bad = [v for v in views if v not in VIEWS]
    if bad or not views:
        raise argparse.ArgumentTypeError(
            f"views are a comma-separated subset of L,C,R; got {text!r}"
        )
    return views


def size_option(text: str) -> tuple[int, int]:
    """An image size written WIDTHxHEIGHT (as every tvr command takes it), as (width, height)."""
    try:
        w, h = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected WIDTHxHEIGHT such as 160x120, got {text!r}"
        ) from None
    if w < 1 or h < 1:
        raise argparse.ArgumentTypeError(f"expected a positive WIDTHxHEIGHT, got {text!r}")
    return w, h


def split_counts_option(text: str) -> dict[str, int]:
    """Counts per split written `train=500,val=10,test=20`."""
    try:
        return {k.strip(): int(v) for k, v in (part.split("=") for part in text.split(","))}
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected e.g. train=500,val=10,test=20, got {text!r}"
        ) from None


def split_sizes_option(text: str) -> dict[str, float]:
    """Sizes per split written `train=0.5,val=0.25,test=0.25` (shares) or `train=100,val=50,
    test=50` (counts); the command checks them against its total."""
    try:
        sizes = {k.strip(): float(v) for k, v in (part.split("=") for part in text.split(","))}
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected e.g. train=0.5,val=0.25,test=0.25 or train=100,val=50,test=50, got {text!r}"
        ) from None
    unknown = sorted(set(sizes) - {"train", "val", "test"})
    if unknown or any(v < 0 for v in sizes.values()):
        raise argparse.ArgumentTypeError(f"expected the splits train, val and test with sizes of "
                                         f"at least 0, got {text!r}")  # fmt: skip
    return sizes


def split_shares(sizes: dict[str, float], total: int, option: str = "--split-sizes") -> tuple:
    """(train, val, test) shares of `total` from `split_sizes_option`'s sizes: counts that add
    up to `total`, or shares that add up to 1 (a missing split is 0)."""
    values = [sizes.get(k, 0.0) for k in ("train", "val", "test")]
    if abs(sum(values) - 1) < 1e-9:
        return tuple(values)
    if all(v.is_integer() for v in values) and sum(values) == total:
        return tuple(v / total for v in values)
    raise UserError(f"{option}: the sizes add up to {sum(values):g}; give shares that add up to 1 "
                    f"or counts that add up to {total}")  # fmt: skip


def given_options(args: argparse.Namespace, names: Iterable[str]) -> dict[str, Any]:
    """The options among `names` that were given (not None), by name, in the order of `names`:
    what a command passes on to a typed config over its defaults."""
    values = {name: getattr(args, name, None) for name in names}
    return {name: value for name, value in values.items() if value is not None}


def add_run_options(p: argparse.ArgumentParser, output_dir: str, run_name: str) -> None:
    """The options of a training run folder (tvr.training.run_config.RunConfig's fields) that
    every `train` command shares: time limit, seed, loaders, hardware, folder, logging, resume.
    `output_dir`, `run_name`: the defaults the help names."""
    p.add_argument("--max-minutes", type=positive_float, help="stop fitting after this long")
    p.add_argument("--seed", type=non_negative_int)
    p.add_argument("--workers", dest="num_workers", type=non_negative_int,
                   help="data loader workers")  # fmt: skip
    p.add_argument("--accelerator", choices=("auto", "cpu", "gpu"))
    p.add_argument("--devices", type=devices_option, help="auto or a number (default 1)")
    p.add_argument("--precision", choices=("auto", "32-true", "bf16-mixed", "16-mixed"))
    p.add_argument("--output-dir", help=f"folder of run folders (default {output_dir})")
    p.add_argument("--run-name", help=f"the run folder's name (default {run_name})")
    p.add_argument("--log-every-n-steps", type=positive_int)
    p.add_argument("--threads", type=positive_int, help="torch CPU threads (default: torch's)")
    p.add_argument("--no-resume", action="store_true", help="start over even if a run is there")


def require(condition: bool, message: str) -> None:
    if not condition:
        raise UserError(message)


@contextmanager
def needs_extra(what: str) -> Iterator[None]:
    """Imports of optional extras: a missing one is a UserError of one line, `what`, the missing
    module and the pip line of the extras `what` names (what = "training needs the train and
    clip extras": "... (torch is not installed): pip install 'tvr[train,clip]'")."""
    try:
        yield
    except ImportError as err:
        named = re.search(r"\bthe ((?:\w+(?:, | and ))*\w+) extras?\b", what)
        extras = re.split(r", | and ", named.group(1)) if named else []
        if not extras or not isinstance(err, ModuleNotFoundError) or not err.name:
            raise UserError(f"{what}: {err}") from None
        raise UserError(f"{what} ({err.name} is not installed): pip install "
                        f"'tvr[{','.join(extras)}]'") from None  # fmt: skip


def print_result(document: Any, lines: list[str], as_json: bool, wrote: str | None = None) -> int:
    """Print `document` as JSON (--json), or the table's `lines` and then `wrote`, the line that
    names the files written (if any); 0, the exit status."""
    if as_json:
        print(json.dumps(document, indent=2))
    else:
        print("\n".join(lines))
        if wrote:
            print(wrote)
    return 0


def add_compare_options(p: argparse.ArgumentParser) -> None:
    """A and B, --labels, --resamples, --seed, --out and --json: the options of every `compare`
    command (its own options go before)."""
    for name in ("a", "b"):
        p.add_argument(name, type=labelled_path, metavar=f"[LABEL=]{name.upper()}",
                       help="evaluation folder or detail.jsonl, LABEL= naming it (default its "
                       "folder's name)")  # fmt: skip
    p.add_argument("--labels", nargs=2, metavar=("LA", "LB"), help=argparse.SUPPRESS)
    p.set_defaults(_prog=p.prog)
    note_renamed(p, "--labels LA LB", "LA=A LB=B")
    p.add_argument("--resamples", type=positive_int, default=10000,
                   help="bootstrap resamples and random sign patterns (default 10000)")  # fmt: skip
    p.add_argument("--seed", type=non_negative_int, default=0, help="default 0")
    p.add_argument("--out", type=Path, help="write compare.json and compare.md here")
    p.add_argument("--json", action="store_true", help="print compare.json instead of the table")
    add_overwrite_option(p, "a comparison")


def labelled_path(text: str) -> tuple[str | None, Path]:
    """LABEL=PATH (a labelled input, as `compare`, `curves` and `serve` take them) or PATH: the
    label (None if not given) and the path. A path that exists is never split at its '='."""
    label, sep, rest = text.partition("=")
    if not sep or not label or not rest or Path(text).exists():
        return None, Path(text)
    return label, Path(rest)


def compared_inputs(args: argparse.Namespace) -> tuple[tuple[str | None, Path], ...]:
    """A and B of a `compare` command as (label, path); the former --labels LA LB (one line
    on stderr) name them where LABEL= did not."""
    (la, a), (lb, b) = args.a, args.b
    if args.labels:
        print(f"{getattr(args, '_prog', 'tvr')}: --labels is replaced by LABEL=PATH (e.g. {args.labels[0]}="
              f"{a}); it works until tvr {RENAMED_UNTIL}", file=sys.stderr)  # fmt: skip
        la, lb = la or args.labels[0], lb or args.labels[1]
    return (la, a), (lb, b)


def finish_comparison(args: argparse.Namespace, document: dict[str, Any], lines: list[str]) -> int:
    """Write compare.json and compare.md into --out (if given), then print the table or --json."""
    from tvr.results.compare import COMPARE_JSON, COMPARE_MD, write_comparison

    wrote = None
    if args.out is not None:
        write_comparison(args.out, document, lines)
        wrote = f"wrote {args.out}/{COMPARE_JSON}, {COMPARE_MD}"
    return print_result(document, lines, args.json, wrote)


def add_lenient_option(p: argparse.ArgumentParser, what: str = "predictions line") -> None:
    """--lenient of a scoring command: strict by default (the first bad line stops it)."""
    p.add_argument(
        "--lenient",
        action="store_true",
        help=f"skip a bad {what} and count it (its sample is scored as missing, that is wrong) "
        "instead of stopping at the first one",
    )


def lenient_problems(args: argparse.Namespace) -> list | None:
    """The list a lenient reader adds bad lines to (None when strict)."""
    return [] if getattr(args, "lenient", False) else None


def lenient_summary(problems: list | None) -> dict[str, Any]:
    """What summary.json says of the lines --lenient skipped (nothing when strict)."""
    if problems is None:
        return {}
    return {"skipped_lines": len(problems), "problems": [str(p) for p in problems[:100]]}


def print_lenient_note(problems: list | None, as_json: bool = False) -> None:
    """One line on stderr when --lenient skipped lines (stdout stays the table or the JSON)."""
    if problems:
        first = str(problems[0])
        print(f"note: --lenient skipped {len(problems)} bad line(s), scored as missing; the "
              f"first: {first[:300]}", file=sys.stderr)  # fmt: skip


#: when the old option names of `renamed` stop working
RENAMED_UNTIL = "0.3"

#: every renamed option, (command, old, new), in the order the parsers were built: what the
#: grammar test and CHANGELOG.md list
RENAMED: list[tuple[str, str, str]] = []

_warned: set[tuple[str, str]] = set()


def _say_renamed(prog: str, old: str, new: str) -> None:
    """One line on stderr, once per process and name: `old` is renamed `new`."""
    if (prog, old) not in _warned:
        _warned.add((prog, old))
        print(f"{prog}: {old} is renamed {new}; the old form works until tvr {RENAMED_UNTIL}",
              file=sys.stderr)  # fmt: skip


def _find_action(p: argparse.ArgumentParser, name: str) -> argparse.Action:
    if name in p._option_string_actions:
        return p._option_string_actions[name]
    for action in p._actions:
        if not action.option_strings and action.dest == name:
            return action
    raise KeyError(f"{p.prog} has no option {name}")


def renamed(p: argparse.ArgumentParser, old: str, new: str, *, required: bool = False) -> None:
    """Keep `old`, the former name of option `new` of `p`, for one release: `old` (also
    `old=VALUE`) is read as `new`, with one line on stderr. `new` may be a positional's dest
    (e.g. "kind": `--kind X` is read as the positional X); `required=True` makes such a
    positional, optional for the parser, required after parsing."""
    action = _find_action(p, new)
    shown = new if new.startswith("-") else action.metavar or new.upper()
    renames = getattr(p, "_tvr_renames", {})
    renames[old] = (new if new.startswith("-") else None, shown)
    p._tvr_renames = renames  # type: ignore[attr-defined]
    if required:
        p._tvr_required = [*getattr(p, "_tvr_required", []), (action, shown)]  # type: ignore[attr-defined]
    RENAMED.append((p.prog, old, shown))


def note_renamed(p: argparse.ArgumentParser, old: str, new: str) -> None:
    """List a rename that its command handles itself (a changed form, such as `--splits A B C`
    for `--split-sizes train=A,...`) with the others of `renamed`."""
    RENAMED.append((p.prog, old, new))


class _RenamedPositional(argparse._StoreAction):
    """A former positional argument, now an option: one line on stderr, the value stored."""

    def __call__(self, parser, namespace, values, option_string=None):  # type: ignore[no-untyped-def]
        if values is None or values == argparse.SUPPRESS:
            return
        _say_renamed(parser.prog, f"a positional {self.metavar}", self.new_name)  # type: ignore[attr-defined]
        setattr(namespace, self.dest, values)


def renamed_positional(p: argparse.ArgumentParser, metavar: str, new: str) -> None:
    """Keep a former positional argument (shown as `metavar`) of `p` as the old form of option
    `new` (e.g. `tvr stats FILE` for `tvr stats --data FILE`), hidden, for one release."""
    action = _find_action(p, new)
    alias = p.add_argument(f"_renamed_{action.dest}", nargs="?", metavar=metavar,
                           default=argparse.SUPPRESS, help=argparse.SUPPRESS,
                           action=_RenamedPositional)  # fmt: skip
    alias.new_name = new  # type: ignore[attr-defined]
    p._tvr_positional = (alias, action)  # type: ignore[attr-defined]
    RENAMED.append((p.prog, metavar, new))


def unrecognized_message(parser: argparse.ArgumentParser, extras: list[str]) -> str:
    """argparse's "unrecognized arguments" line, with the closest option of `parser` for the
    first unknown option (difflib), as a mistyped choice gets."""
    import difflib

    line = f"unrecognized arguments: {' '.join(extras)}"
    known = [o for a in parser._actions if a.help != argparse.SUPPRESS for o in a.option_strings]
    for arg in extras:
        if arg.startswith("-"):
            close = difflib.get_close_matches(arg.split("=", 1)[0], known, n=1, cutoff=0.6)
            if close:
                return f"{line} (did you mean {close[0]}?)"
            break
    return line


class TvrParser(argparse.ArgumentParser):
    """argparse with the renamed options of `renamed` and `renamed_positional`: old option names
    are read as the new ones (one line on stderr), a former positional fills its option."""

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def]
        args = list(sys.argv[1:] if args is None else args)
        if getattr(self, "_tvr_json_was_file", False):  # `tvr stats ... --json FILE`, before 0.2
            for flag, value in pairwise(args):
                if flag == "--json" and value.endswith(".json") and not value.startswith("-"):
                    self.error(f"--json prints the JSON now; write it to a file with --out {value}")
        renames = getattr(self, "_tvr_renames", {})
        if renames:
            args = self._translate(args, renames)
        positional = getattr(self, "_tvr_positional", None)
        relaxed = None
        if positional is not None:
            alias, action = positional
            given = any(a in action.option_strings or a.split("=")[0] in action.option_strings
                        for a in args)  # fmt: skip
            asks_help = any(a in ("-h", "--help") for a in args)
            if action.required and not given and not asks_help:
                relaxed, action.required = action, False
        try:
            namespace, extras = super().parse_known_args(args, namespace)
        finally:
            if relaxed is not None:
                relaxed.required = True
        if positional is not None:
            alias, action = positional
            if hasattr(namespace, alias.dest):
                value = getattr(namespace, alias.dest)
                value = action.type(value) if callable(action.type) else value
                delattr(namespace, alias.dest)
                if getattr(namespace, action.dest, None) not in (None, value):
                    self.error(f"give {alias.new_name} or a positional {alias.metavar}, not both")
                setattr(namespace, action.dest, value)
            if relaxed is not None and getattr(namespace, action.dest, None) is None:
                self.error(f"the following arguments are required: {alias.new_name}")
        for action, shown in getattr(self, "_tvr_required", []):
            if getattr(namespace, action.dest, None) is None:
                self.error(f"the following arguments are required: {shown}")
        if extras and not any(isinstance(a, argparse._SubParsersAction) for a in self._actions):
            self.error(unrecognized_message(self, extras))  # by the sub-command, with its usage
        return namespace, extras

    def _translate(self, args: list[str], renames: dict[str, tuple[str | None, str]]) -> list[str]:
        out: list[str] = []
        for i, arg in enumerate(args):
            if arg == "--":
                out.extend(args[i:])
                break
            name, eq, value = arg.partition("=")
            if name in renames and name not in self._option_string_actions:
                new, shown = renames[name]
                _say_renamed(self.prog, name, shown)
                if new is None:  # now a positional: the value follows
                    if eq:
                        out.append(value)
                    continue
                arg = new + eq + value
            out.append(arg)
        return out


#: options that are not inputs: they change how a result is shown, not what it is
_NOT_INPUTS = {"func", "command", "out", "json", "quiet", "overwrite"}


def add_overwrite_option(p: argparse.ArgumentParser, what: str = "results") -> None:
    """--overwrite of a command whose --out folder holds results: without it, a folder holding
    results of other inputs is refused (`tvr.core.output_record`); the same inputs are fine."""
    p.add_argument("--overwrite", action="store_true",
                   help=f"write into an --out folder that holds {what} of other inputs")  # fmt: skip
    p.set_defaults(_guard_out=True)


def add_file_overwrite_option(
    p: argparse.ArgumentParser, what: str = "results", beside: Any = None
) -> None:
    """--overwrite of a command whose --out is one file: an existing file is replaced only by
    the same bytes (the same inputs, idempotent) or with --overwrite; other results are refused
    and the file is kept (`tvr.core.output_record.guarded_file`, run by `tvr.cli.main`).
    `beside(out)`: the files written with it (its settings), kept and put back with it."""
    p.add_argument("--overwrite", action="store_true",
                   help=f"replace an --out file that holds {what} of other inputs")  # fmt: skip
    p.set_defaults(_guard_file=what, _guard_beside=beside)


def output_record(args: argparse.Namespace) -> dict[str, Any]:
    """What a guarded command's --out folder remembers: the command and its input options."""
    from tvr.core.output_record import inputs_record

    words = [args.command]
    options: dict[str, Any] = {}
    for key, value in sorted(vars(args).items()):
        if key.endswith("_command") and isinstance(value, str):
            words.append(value)
        elif key not in _NOT_INPUTS and not key.startswith("_") and not key.endswith("_command"):
            options[key] = value
    if "data" in options:
        options["data"] = _resolved_data(args)
    return inputs_record("tvr " + " ".join(words), options)


def add_data_option(
    p: argparse.ArgumentParser, what: str, required: bool = True, resolve: str | None = None
) -> None:
    """--data PATH, the one name of a benchmark's data (docs/cli.md): a dataset folder or its
    reference file, as `what` says. `resolve` ("module:function", called with the path and, if
    it takes one, the command's --split) names the file a folder stands for: a guarded --out
    folder then records that file, so the same data is the same input however it is named."""
    p.add_argument("--data", required=required, type=Path, metavar="PATH", help=what)
    if resolve is not None:
        p.set_defaults(_data_resolve=resolve)


def _resolved_data(args: argparse.Namespace) -> Any:
    """The reference file that --data names (see `add_data_option`), or --data as given where it
    names none (the command itself then says what is wrong)."""
    import importlib
    import inspect

    from tvr.core.errors import UserError

    spec = getattr(args, "_data_resolve", None)
    if spec is None or getattr(args, "data", None) is None:
        return getattr(args, "data", None)
    module, _, name = spec.partition(":")
    resolve = getattr(importlib.import_module(module), name)
    kwargs = {}
    if "split" in inspect.signature(resolve).parameters and getattr(args, "split", None):
        kwargs["split"] = args.split
    try:
        return resolve(args.data, **kwargs)
    except UserError:
        return args.data
