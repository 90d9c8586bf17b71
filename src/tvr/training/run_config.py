"""Typed run configs: a dataclass base that saves as config.json and says how two runs differ."""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from tvr.core.jsonl import write_json

C = TypeVar("C", bound="RunConfig")


class RunConfig:
    """Base of a benchmark's training config (a `@dataclass` subclass).

    A subclass lists `RESUMABLE_FIELDS` (fields a resumed run may change: epochs, devices, where
    it logs) and `PATH_FIELDS` (compared as normalized paths); any other difference makes another
    run. It must have `output_dir` and `run_name` fields (see `run_dir`).
    """

    RESUMABLE_FIELDS: ClassVar[frozenset[str]] = frozenset()
    PATH_FIELDS: ClassVar[tuple[str, ...]] = ()

    output_dir: str
    run_name: str | None

    @property
    def run_dir(self) -> Path:
        return Path(self.output_dir) / (self.run_name or self.default_run_name())

    def default_run_name(self) -> str:
        """The run folder's name when `run_name` is not given (a subclass names its model)."""
        return "run"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)  # type: ignore[call-overload]

    @classmethod
    def from_dict(cls: type[C], d: dict[str, Any]) -> C:
        """The config of `d`; ValueError naming unknown keys (and the dataclass's own checks)."""
        known = {f.name for f in dataclasses.fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown config keys: {unknown}")
        return cls(**d)

    def save(self, path: str | Path) -> None:
        write_json(path, self.to_dict())

    @classmethod
    def load(cls: type[C], path: str | Path) -> C:
        return cls.from_dict(json.loads(Path(path).read_text()))

    def differences(self, other: RunConfig) -> list[str]:
        """`field (X there, Y here)` for each field outside RESUMABLE_FIELDS in which `other`
        differs: empty when `other` is the same run (and may resume it)."""
        mine, theirs = self.to_dict(), other.to_dict()
        out = []
        for name in mine:
            if name in self.RESUMABLE_FIELDS:
                continue
            a, b = mine[name], theirs.get(name)
            if name in self.PATH_FIELDS and a is not None and b is not None:
                a, b = os.path.normpath(a), os.path.normpath(b)
            if a != b:
                out.append(f"{name} ({mine[name]!r} there, {theirs.get(name)!r} here)")
        return out
