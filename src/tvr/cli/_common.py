"""Shared option and output helpers for the CLI modules (no logic of the library here)."""

from __future__ import annotations

import argparse
import json
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


def given_options(args: argparse.Namespace, names: Iterable[str]) -> dict[str, Any]:
    """The options among `names` that were given (not None), by name, in the order of `names`:
    what a command passes on to a typed config over its defaults."""
    values = {name: getattr(args, name, None) for name in names}
    return {name: value for name, value in values.items() if value is not None}


def require(condition: bool, message: str) -> None:
    if not condition:
        raise UserError(message)


@contextmanager
def needs_extra(what: str) -> Iterator[None]:
    """Imports of an optional extra: a missing one is a UserError, `{what}: {the import error}`
    (e.g. what = "training needs the train and clip extras")."""
    try:
        yield
    except ImportError as err:
        raise UserError(f"{what}: {err}") from None


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
    p.add_argument("a", type=Path, metavar="A", help="evaluation folder or detail.jsonl")
    p.add_argument("b", type=Path, metavar="B", help="evaluation folder or detail.jsonl")
    p.add_argument("--labels", nargs=2, metavar=("LA", "LB"),
                   help="names of A and B (default their folder names)")  # fmt: skip
    p.add_argument("--resamples", type=positive_int, default=10000,
                   help="bootstrap resamples and random sign patterns (default 10000)")  # fmt: skip
    p.add_argument("--seed", type=non_negative_int, default=0, help="default 0")
    p.add_argument("--out", type=Path, help="write compare.json and compare.md here")
    p.add_argument("--json", action="store_true", help="print compare.json instead of the table")


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
