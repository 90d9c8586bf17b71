"""Shared option and output helpers for the CLI modules (no logic of the library here)."""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
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


def add_run_options(
    p: argparse.ArgumentParser, output_dir: str, run_name: str, devices: str = "1"
) -> None:
    """The options of a training run folder (tvr.training.run_config.RunConfig's fields) that
    every `train` command shares: time limit, seed, loaders, hardware, folder, logging, resume.
    `output_dir`, `run_name`, `devices`: the defaults the help names."""
    p.add_argument("--max-minutes", type=positive_float, help="stop fitting after this long")
    p.add_argument("--seed", type=non_negative_int)
    p.add_argument("--workers", dest="num_workers", type=non_negative_int,
                   help="data loader workers")  # fmt: skip
    p.add_argument("--accelerator", choices=("auto", "cpu", "gpu"))
    p.add_argument("--devices", type=devices_option, help=f"auto or a number (default {devices})")
    p.add_argument("--precision", choices=("auto", "32-true", "bf16-mixed", "16-mixed"))
    p.add_argument("--output-dir", help=f"folder of run folders (default {output_dir})")
    p.add_argument("--run-name", help=f"the run folder's name (default {run_name})")
    p.add_argument("--log-every-n-steps", type=positive_int)
    p.add_argument("--threads", type=positive_int, help="torch CPU threads (default: torch's)")
    p.add_argument("--no-resume", action="store_true", help="start over even if a run is there")


def apply_threads(args: argparse.Namespace) -> None:
    """Set torch's CPU threads to --threads of `add_run_options` (when given)."""
    if getattr(args, "threads", None):
        import torch

        torch.set_num_threads(args.threads)


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
    """A and B of a `compare` command as (label, path)."""
    return args.a, args.b


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
    """argparse whose sub-commands report an unknown option themselves (their usage, their
    name, the closest option), not the top-level `tvr` parser."""

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def]
        namespace, extras = super().parse_known_args(args, namespace)
        if extras and not any(isinstance(a, argparse._SubParsersAction) for a in self._actions):
            self.error(unrecognized_message(self, extras))
        return namespace, extras


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
