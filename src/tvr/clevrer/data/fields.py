"""Loading a released JSON file and checking its fields: each fault is one InputError naming the
file and the field's path (e.g. ``motion_trajectory[3].objects[1].location``)."""

from __future__ import annotations

import math
from collections.abc import Collection
from pathlib import Path
from typing import Any

import orjson

from tvr.core.errors import InputError
from tvr.core.jsonl import read_json


def load_json(path: str | Path) -> Any:
    """The parsed JSON document at `path`; a missing file is a UserError, bad JSON an InputError
    with its line."""
    return read_json(path)


def dump_json(data: Any) -> str:
    """Compact JSON text (one line, as the release's files), keys in the order given."""
    return orjson.dumps(data, option=orjson.OPT_SERIALIZE_NUMPY).decode("utf-8")


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


#: a field's path, or its parts (joined only when a fault is reported, to keep checks cheap)
Field = str | tuple[str, ...]


def field_name(field: Field) -> str:
    return field if isinstance(field, str) else "".join(field)


class Fields:
    """Checks the values of one file; every failure raises InputError(path, None, field, why)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)

    def fail(self, field: Field | None, message: str) -> InputError:
        return InputError(self.path, None, field_name(field) if field else None, message)

    def mapping(self, value: Any, field: Field, required: Collection[str] = ()) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(field, f"expected an object, got {_kind(value)}")
        for key in required:
            if key not in value:
                raise self.fail(_join(field_name(field), key), "missing")
        return value

    def sequence(self, value: Any, field: Field, non_empty: bool = False) -> list[Any]:
        if not isinstance(value, list):
            raise self.fail(field, f"expected a list, got {_kind(value)}")
        if non_empty and not value:
            raise self.fail(field, "expected a non-empty list")
        return value

    def integer(self, value: Any, field: Field, minimum: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(field, f"expected an integer, got {_kind(value)}")
        if minimum is not None and value < minimum:
            raise self.fail(field, f"expected an integer >= {minimum}, got {value}")
        return value

    def string(self, value: Any, field: Field, choices: Collection[str] | None = None) -> str:
        if not isinstance(value, str):
            raise self.fail(field, f"expected a string, got {_kind(value)}")
        if choices is not None and value not in choices:
            allowed = ", ".join(sorted(choices))
            raise self.fail(field, f"unknown value {value!r} (expected one of: {allowed})")
        return value

    def boolean(self, value: Any, field: Field) -> bool:
        if not isinstance(value, bool):
            raise self.fail(field, f"expected true or false, got {_kind(value)}")
        return value

    def number(self, value: Any, field: Field) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(field, f"expected a number, got {_kind(value)}")
        if not math.isfinite(value):
            raise self.fail(field, "expected a finite number")
        return value

    def numbers(self, value: Any, field: Field, lengths: Collection[int]) -> tuple[float, ...]:
        """A list of finite numbers whose length is one of `lengths` (kept as read: int or float)."""
        if type(value) is list and len(value) in lengths:
            for x in value:
                kind = type(x)  # bool is not int here
                if not (kind is int or (kind is float and math.isfinite(x))):
                    break
            else:
                return tuple(value)
        want = " or ".join(str(n) for n in sorted(lengths))
        raise self.fail(field, f"expected {want} numbers")

    def strings(self, value: Any, field: Field) -> tuple[str, ...]:
        if type(value) is list and all(type(x) is str for x in value):
            return tuple(value)
        if not isinstance(value, list):
            raise self.fail(field, f"expected a list of strings, got {_kind(value)}")
        for i, x in enumerate(value):
            if not isinstance(x, str):
                raise self.fail(f"{field_name(field)}[{i}]", f"expected a string, got {_kind(x)}")
        return tuple(value)


def _join(field: str, key: str) -> str:
    return f"{field}.{key}" if field else key
