"""The verbs a benchmark shares with the others (`tvr BENCH stats|evaluate`), registered by its
plugin.py, as the VLM tasks, result tables and exporters are.

A benchmark whose command has the plain shape registers a `Stats` (`--data PATH`, `--json`) or an
`Evaluator` (`--data PATH`, `--split`, `--predictions FILE`, `--out DIR`, `--json`, `--lenient`,
`--overwrite`) with its own `Option`s beside; `tvr.cli.verbs` builds the command from it. The
comparison of two evaluations (`compare`) registers in `tvr.results.compare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tvr.core.errors import UserError
from tvr.core.plugins import load_benchmarks


@dataclass(frozen=True)
class Option:
    """One option of a benchmark's own beside the verb's shared ones: a choice among `choices`
    (with its `default`), or a switch (`switch=True`: on when given)."""

    flag: str
    help: str
    choices: tuple[str, ...] = ()
    default: Any = None
    switch: bool = False

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_")


@dataclass(frozen=True)
class Stats:
    """`tvr BENCH stats --data PATH [--json]`: `run(data, **options)` gives (the statistics, the
    lines printed without --json, the exit status)."""

    run: Callable[..., tuple[dict[str, Any], list[str], int]]
    help: str
    description: str
    data_help: str
    options: tuple[Option, ...] = ()


@dataclass
class Evaluation:
    """What an evaluator gives: summary.json, the table printed (and written), and the other
    files of --out by name in the order written (a dict is JSON, a list JSON lines, a str text)."""

    summary: dict[str, Any]
    lines: list[str]
    files: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Evaluator:
    """`tvr BENCH evaluate --data PATH --predictions FILE ...`: `run(data, split, predictions,
    problems, **options)` scores (problems: the list --lenient adds bad lines to, None when
    strict); `out_files`: the files of --out beside summary.json, as its help names them."""

    run: Callable[..., Evaluation]
    help: str
    description: str
    data_help: str
    predictions_help: str
    out_files: tuple[str, ...] = ()
    lenient_what: str = "predictions line"
    options: tuple[Option, ...] = ()
    #: "module:function" naming the reference file a --data folder stands for (what a guarded
    #: --out records, so the same data is the same input however it is named)
    resolve: str | None = None


_STATS: dict[str, Stats] = {}
_EVALUATORS: dict[str, Evaluator] = {}


def register_stats(benchmark: str, stats: Stats) -> None:
    _STATS[benchmark] = stats


def register_evaluator(benchmark: str, evaluator: Evaluator) -> None:
    _EVALUATORS[benchmark] = evaluator


def stats_verbs() -> dict[str, Stats]:
    """Every registered `stats`, by benchmark (the plugins loaded first)."""
    load_benchmarks()
    return dict(_STATS)


def evaluators() -> dict[str, Evaluator]:
    """Every registered `evaluate`, by benchmark (the plugins loaded first)."""
    load_benchmarks()
    return dict(_EVALUATORS)


def registered(table: dict[str, Any], benchmark: str, what: str) -> Any:
    """`table[benchmark]`, or a UserError naming the benchmarks that have `what`."""
    if benchmark not in table:
        raise UserError(f"--benchmark {benchmark}: no {what} registered (known: "
                        f"{', '.join(sorted(table)) or 'none'})")  # fmt: skip
    return table[benchmark]
