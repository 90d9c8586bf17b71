"""Result tables by benchmark: each benchmark registers its table builders; `build_tables` runs them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tvr.core.plugins import load_benchmarks
from tvr.results.tables import ResultEntry, ResultTable

TableBuilder = Callable[[list[ResultEntry], bool], ResultTable | None]


def _always(entries: list[ResultEntry], compare_paper: bool) -> bool:
    return True


@dataclass(frozen=True)
class TableSpec:
    """One table of a benchmark's results.

    Args:
        name: the table's name (its files are NAME.md, NAME.csv, NAME.json).
        build: (scored runs, compare with the paper) -> the table, or None when the runs give none.
        figure: the numbers of a figure (listed after the tables; the benchmark may plot them).
        wanted: (scored runs, compare with the paper) -> whether to include the table at all.
    """

    name: str
    build: TableBuilder
    figure: bool = False
    wanted: Callable[[list[ResultEntry], bool], bool] = _always


_TABLES: dict[str, list[TableSpec]] = {}


def register_table(benchmark: str, spec: TableSpec) -> None:
    """Add a table to `benchmark`'s results, after those registered before it (a benchmark's
    plugin module calls this); registering a name again replaces it in place."""
    specs = _TABLES.setdefault(benchmark, [])
    for i, old in enumerate(specs):
        if old.name == spec.name:
            specs[i] = spec
            return
    specs.append(spec)


def table_specs(benchmark: str) -> list[TableSpec]:
    """The registered tables of `benchmark`, in order."""
    load_benchmarks()
    return list(_TABLES.get(benchmark, ()))


def build_tables(
    benchmark: str, entries: list[ResultEntry], compare_paper: bool
) -> tuple[list[ResultTable], list[ResultTable]]:
    """(tables, figure tables) of `benchmark` for the scored runs `entries`, in registered order;
    tables a builder returns as None and tables not wanted are left out."""
    tables: list[ResultTable] = []
    figures: list[ResultTable] = []
    for spec in table_specs(benchmark):
        if not spec.wanted(entries, compare_paper):
            continue
        table = spec.build(entries, compare_paper)
        if table is not None:
            (figures if spec.figure else tables).append(table)
    return tables, figures
