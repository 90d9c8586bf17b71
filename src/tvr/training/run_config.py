"""Typed run configs: a dataclass base that saves as config.json and says how two runs differ."""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from tvr.core.errors import UserError
from tvr.core.typed_config import bounded, typed_values

C = TypeVar("C", bound="RunConfig")

#: the run options every run config has that a resumed run may change: how long it trains, on
#: what hardware, where its folder is and how it logs (a subclass adds its own to these)
RESUMABLE_RUN_FIELDS: frozenset[str] = frozenset({
    "epochs", "max_minutes", "num_workers", "accelerator", "devices", "precision", "output_dir",
    "run_name", "resume", "log_every_n_steps",
})  # fmt: skip


@dataclass
class RunConfig:
    """Base of a benchmark's training config (a `@dataclass` subclass).

    It holds the run options every run has (what `tvr.training.runs.RunOptions.from_config`
    reads); a subclass adds its own fields after them and gives a run option another default by
    declaring it again (it keeps its place). A subclass lists `RESUMABLE_FIELDS` (fields a resumed
    run may change: `RESUMABLE_RUN_FIELDS` and its own) and `PATH_FIELDS` (compared as normalized
    paths); any other difference makes another run.

    Args:
        epochs: maximum number of epochs.
        max_minutes: stop fitting after this much wall time (None: no limit).
        seed: seeds torch, numpy and Python (and the loaders' workers).
        num_workers: data loader workers.
        accelerator, devices: Lightning's ("auto", "cpu", "gpu"; a count or "auto").
        precision: a Lightning precision, or "auto" (mixed on GPUs, 32 on the CPU).
        output_dir, run_name: the run folder is OUTPUT_DIR/RUN_NAME (see `run_dir`).
        resume: resume from checkpoints/last.ckpt when the run folder has one.
        log_every_n_steps: Lightning's logging interval, in training steps.
    """

    RESUMABLE_FIELDS: ClassVar[frozenset[str]] = RESUMABLE_RUN_FIELDS
    PATH_FIELDS: ClassVar[tuple[str, ...]] = ()

    epochs: int = bounded(50, 0)
    max_minutes: float | None = bounded(None, 0)
    seed: int = 0
    num_workers: int = bounded(0, 0)
    accelerator: str = "auto"
    devices: int | str = "auto"
    precision: str = "auto"
    output_dir: str = "runs"
    run_name: str | None = None
    resume: bool = True
    log_every_n_steps: int = bounded(50, 1)

    def validate(self: C) -> C:
        """The config, once its values are checked (a subclass raises UserError naming the
        first bad value; the run options have nothing to check)."""
        return self

    @property
    def run_dir(self) -> Path:
        return Path(self.output_dir) / (self.run_name or self.default_run_name())

    def default_run_name(self) -> str:
        """The run folder's name when `run_name` is not given (a subclass names its model)."""
        return "run"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls: type[C], d: dict[str, Any], where: str = "config") -> C:
        """The config of `d`; ValueError naming unknown keys, UserError naming `where`, the key
        and the expected type for a value of another type (`tvr.core.typed_config`), and the
        dataclass's own checks."""
        if not isinstance(d, dict):
            raise UserError(f"{where}: expected an object of run options")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown config keys: {unknown}")
        return cls(**typed_values(cls, d, where))

    def save(self, path: str | Path) -> None:
        from tvr.core.jsonl import write_json  # orjson's import only when a run is written

        write_json(path, self.to_dict())

    @classmethod
    def load(cls: type[C], path: str | Path) -> C:
        return cls.from_dict(json.loads(Path(path).read_text()), str(path))

    def differences(self, other: RunConfig) -> list[str]:
        """`field (X there, Y here)` for each field outside RESUMABLE_FIELDS in which `other`
        differs: empty when `other` is the same run (and may resume it). A field holding a
        table (a nested dataclass) is compared key by key, named `field.key` (so may
        PATH_FIELDS name it)."""
        mine, theirs = (_flat({k: v for k, v in c.to_dict().items()
                               if k not in self.RESUMABLE_FIELDS}) for c in (self, other))  # fmt: skip
        out = []
        for name in [*mine, *(k for k in theirs if k not in mine)]:
            a, b = mine.get(name), theirs.get(name)
            if name in self.PATH_FIELDS and a is not None and b is not None:
                a, b = os.path.normpath(a), os.path.normpath(b)
            if a != b:
                out.append(f"{name} ({mine.get(name)!r} there, {theirs.get(name)!r} here)")
        return out


def _flat(values: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """`values` with each nested table's keys lifted to `name.key`."""
    out: dict[str, Any] = {}
    for name, value in values.items():
        if isinstance(value, dict) and value:
            out.update(_flat(value, f"{prefix}{name}."))
        else:
            out[prefix + name] = value
    return out
