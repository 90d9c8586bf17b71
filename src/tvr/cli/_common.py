"""Shared option helpers for the CLI modules (no logic of the library here)."""

from __future__ import annotations

import argparse

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


def require(condition: bool, message: str) -> None:
    if not condition:
        raise UserError(message)
