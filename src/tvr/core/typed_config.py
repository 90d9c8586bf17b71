"""One typed check of every config a user gives or a job saved: dataclass fields against their hints.

A config file (`--config`, a job's config.json, a run's config.json) is JSON or TOML, so its values
are only JSON's types. `typed_values(cls, values, where)` checks each value of a frozen dataclass's
field against the field's type hint before the config is built, and `build_config` builds and
validates it; both raise one UserError naming the file, the key and the expected type:

    c.json: sampler.max_steps: expected an integer, got "four"

The hints understood: int (a bool is not an int), float (an int is a float; never a bool, NaN or
infinity), bool, str, Path (a string), None, `X | None`, Literal[...], tuple[X, ...],
tuple[X, Y], list[X], dict[K, V], a nested dataclass (a table of its fields) and Any. A field's
`metadata={"min": a, "max": b}` bounds a number (closed range); a class's own `validate()` checks
the rest (relations between fields), and its message is prefixed with `where`.
"""

from __future__ import annotations

import dataclasses
import json
import math
import numbers
import os
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar, Union

from tvr.core.errors import UserError

T = TypeVar("T")

#: a field's metadata keys for its closed range
MIN, MAX = "min", "max"


def bounded(default: Any, lo: float | None = None, hi: float | None = None) -> Any:
    """A dataclass field with `default` whose number must lie in [lo, hi] (None: open)."""
    meta = {k: v for k, v in ((MIN, lo), (MAX, hi)) if v is not None}
    return dataclasses.field(default=default, metadata=meta)


def _shown(value: Any) -> str:
    try:
        text = json.dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def describe(hint: Any) -> str:
    """What a value of `hint` is, in words ("an integer", "a list of strings", ...)."""
    if hint is Any:
        return "any value"
    if hint is type(None):
        return "null"
    if hint is bool:
        return "true or false"
    if hint is int:
        return "an integer"
    if hint is float:
        return "a number"
    if hint in (str, Path):
        return "a string"
    if dataclasses.is_dataclass(hint):
        return f"a table of {hint.__name__} options"
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        return "one of " + ", ".join(_shown(a) for a in args)
    if origin in (Union, types.UnionType):
        return " or ".join(describe(a) for a in args)
    if origin in (tuple, list):
        if origin is tuple and args and args[-1] is not Ellipsis:
            kinds = {describe(a) for a in args}
            if len(kinds) == 1:
                return f"a list of {len(args)} {_plural(describe(args[0]))}"
            return f"a list of {len(args)} values ({', '.join(describe(a) for a in args)})"
        return f"a list of {_plural(describe(args[0]))}" if args else "a list"
    if origin in (dict, Mapping):
        return f"a table of {_plural(describe(args[1]))}" if len(args) == 2 else "a table"
    return getattr(hint, "__name__", str(hint))


def _plural(text: str) -> str:
    words = {"an integer": "integers", "a number": "numbers", "a string": "strings",
             "true or false": "booleans", "any value": "values"}  # fmt: skip
    return words.get(text, text)


def check_value(hint: Any, value: Any, key: str, where: str) -> Any:
    """`value` as a value of `hint` (JSON lists become tuples where the hint is a tuple, tables
    nested dataclasses); UserError "`where`: `key`: expected ..., got ..." otherwise."""

    def bad() -> UserError:
        return UserError(f"{where}: {key}: expected {describe(hint)}, got {_shown(value)}")

    if hint is Any:
        return value
    if hint is type(None):
        if value is None:
            return None
        raise bad()
    if hint is bool:
        if isinstance(value, bool):
            return value
        raise bad()
    if hint is int:  # numpy's integers too (a config a job computed), never a bool
        if isinstance(value, numbers.Integral) and not _is_bool(value):
            return value
        raise bad()
    if hint is float:
        if isinstance(value, numbers.Real) and not _is_bool(value) and math.isfinite(value):
            return value
        raise bad()
    if hint is str:  # a path a job put there itself is a string of its config too
        if isinstance(value, str | os.PathLike):
            return value
        raise bad()
    if hint is Path:
        if isinstance(value, str | Path):
            return value
        raise bad()
    if dataclasses.is_dataclass(hint) and isinstance(hint, type):
        if isinstance(value, hint):
            return value
        if not isinstance(value, Mapping):
            raise bad()
        return hint(**typed_values(hint, value, where, prefix=f"{key}."))
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is typing.Literal:
        if any(value == a and type(value) is type(a) for a in args):
            return value
        raise bad()
    if origin in (Union, types.UnionType):
        for arg in args:  # None first: `int | None` with null is None
            if arg is type(None) and value is None:
                return None
        for arg in args:
            try:
                return check_value(arg, value, key, where)
            except UserError:
                continue
        raise bad()
    if origin in (tuple, list):
        if not isinstance(value, list | tuple):
            raise bad()
        if origin is tuple and args and args[-1] is not Ellipsis:
            if len(value) != len(args):
                raise bad()
            items = [check_value(a, v, f"{key}[{i}]", where) for i, (a, v) in
                     enumerate(zip(args, value, strict=True))]  # fmt: skip
        else:
            item = args[0] if args else Any
            items = [check_value(item, v, f"{key}[{i}]", where) for i, v in enumerate(value)]
        return tuple(items) if origin is tuple else items
    if origin in (dict, Mapping):
        if not isinstance(value, Mapping):
            raise bad()
        if len(args) != 2:
            return dict(value)
        return {check_value(args[0], k, f"{key} key", where):
                check_value(args[1], v, f"{key}.{k}", where) for k, v in value.items()}  # fmt: skip
    if isinstance(hint, type):  # another class: its own values only
        if isinstance(value, hint):
            return value
        raise bad()
    return value


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool) or type(value).__name__ == "bool_"  # numpy's bool


def _hints(cls: type) -> dict[str, Any]:
    try:
        return typing.get_type_hints(cls)
    except Exception:  # an unresolvable annotation: check what can be resolved
        return {}


def typed_values(
    cls: type, values: Mapping[str, Any], where: str, prefix: str = ""
) -> dict[str, Any]:
    """`values` (keys of `cls`'s fields) checked against their type hints and bounds, converted
    (tuples, nested dataclasses); keys that are not fields are left as they are (the caller
    refuses them in its own words)."""
    hints = _hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    out = dict(values)
    for name, value in values.items():
        f = fields.get(name)
        if f is None or name not in hints:
            continue
        key = prefix + name
        checked = check_value(hints[name], value, key, where)
        lo, hi = f.metadata.get(MIN), f.metadata.get(MAX)
        number = isinstance(checked, int | float) and not isinstance(checked, bool)
        if number and ((lo is not None and checked < lo) or (hi is not None and checked > hi)):
            rng = f">= {lo}" if hi is None else f"<= {hi}" if lo is None else f"in {lo}..{hi}"
            raise UserError(f"{where}: {key}: expected {describe(hints[name])} {rng}, "
                            f"got {_shown(value)}")  # fmt: skip
        out[name] = checked
    return out


def build_config(
    cls: type[T],
    values: Mapping[str, Any],
    where: str,
    kind: str = "config",
    prefix: str = "",
    **extra: Any,
) -> T:
    """`cls(**values, **extra)` once `values` pass `typed_values`, then its `validate()` when it
    has one; unknown keys, bad types and bounds are UserErrors naming `where` and the key
    (`prefix`: the keys' path in the file, e.g. "sampler."; `extra`: fields the caller built
    itself)."""
    if not isinstance(values, Mapping):
        raise UserError(f"{where}: expected a table/object of {kind} options, got {_shown(values)}")
    known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
    unknown = sorted(set(values) - known)
    if unknown:
        raise UserError(f"{where}: unknown {kind} option(s): {[prefix + k for k in unknown]} "
                        f"(known: {', '.join(sorted(known))})")  # fmt: skip
    config = cls(**typed_values(cls, values, where, prefix), **extra)
    validate = getattr(config, "validate", None)
    if validate is None:
        return config
    try:
        out = validate()
    except UserError as err:
        text = str(err)
        if text.startswith(where):
            raise
        raise UserError(f"{where}: {text}") from None
    return config if out is None else out
