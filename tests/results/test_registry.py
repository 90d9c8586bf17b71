"""Benchmarks plug their result tables into the shared results layer."""

from __future__ import annotations

from pathlib import Path

from tvr.core.plugins import load_benchmarks
from tvr.results import registry
from tvr.results.registry import TableSpec, build_tables, register_table, table_specs
from tvr.results.tables import ResultEntry, ResultTable


def _entry(label: str, setting: str) -> ResultEntry:
    return ResultEntry(label, setting, {"samples": 1}, Path(label), "evaluation")


def _count_table(name: str):
    def build(entries: list[ResultEntry], compare_paper: bool) -> ResultTable:
        t = ResultTable(name, name.title(), ["Runs"])
        t.rows.append({"Runs": len(entries)})
        return t

    return build


def test_tables_are_built_in_order_with_figures_apart_and_unwanted_ones_left_out(monkeypatch):
    load_benchmarks()  # the installed benchmarks register now, not into the patched registry
    monkeypatch.setattr(registry, "_TABLES", {})
    register_table("toy", TableSpec("a", _count_table("a")))
    register_table("toy", TableSpec("none", lambda e, cp: None))
    register_table("toy", TableSpec("fig", _count_table("fig"), figure=True))
    register_table("toy", TableSpec("b", _count_table("b"), wanted=lambda e, cp: cp))
    entries = [_entry("x", "event"), _entry("y", "event")]
    tables, figures = build_tables("toy", entries, compare_paper=False)
    assert [t.name for t in tables] == ["a"] and [t.name for t in figures] == ["fig"]
    assert tables[0].rows == [{"Runs": 2}]
    tables, _ = build_tables("toy", entries, compare_paper=True)
    assert [t.name for t in tables] == ["a", "b"]
    register_table("toy", TableSpec("a", _count_table("a2")))  # replaced in place
    assert [s.name for s in table_specs("toy")] == ["a", "none", "fig", "b"]
    assert build_tables("toy", entries, True)[0][0].title == "A2"
    assert build_tables("nobody", entries, True) == ([], [])


def test_trance_registers_the_papers_tables_through_its_entry_point():
    specs = table_specs("trance")
    assert [s.name for s in specs] == ["table3", "table4", "table5", "fig7", "fig8"]
    assert [s.name for s in specs if s.figure] == ["fig7", "fig8"]
    # Fig. 8 only with View runs; Fig. 7 with Event runs or the paper's numbers
    fig7, fig8 = specs[3], specs[4]
    assert fig8.wanted([_entry("v", "view")], False) and not fig8.wanted([_entry("e", "event")], True)
    assert fig7.wanted([], True) and not fig7.wanted([_entry("v", "view")], False)
