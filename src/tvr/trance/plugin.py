"""TRANCE's parts of the shared layers: VLM task, result tables, web pages (a `tvr.benchmarks` entry point)."""

from __future__ import annotations

from typing import Any

from tvr.results.registry import TableSpec, register_table
from tvr.trance.results import tables
from tvr.vlm.tasks import register_task
from tvr.web.pages import register_pages


def _trance_task(data: Any, images: Any, **options: Any) -> Any:
    from tvr.trance.vlm_task import TranceTask

    return TranceTask(data, images, **options)


register_task("trance", _trance_task)


def _trance_pages(config: Any) -> Any:
    from tvr.trance.web.app import trance_pages  # FastAPI only when serving (the web extra)

    return trance_pages(config)


register_pages("trance", _trance_pages)


def _has_event_runs(entries: list[Any], compare_paper: bool) -> bool:
    return compare_paper or any(e.setting == "event" and e.reward is None for e in entries)


def _has_view_runs(entries: list[Any], compare_paper: bool) -> bool:
    return any(e.setting == "view" and e.reward is None for e in entries)


# the tables of `tvr results`, in the order results.md shows them
register_table("trance", TableSpec("table3", tables.table3))
register_table("trance", TableSpec("table4", tables.table4))
register_table("trance", TableSpec("table5", tables.table5))
register_table("trance", TableSpec("fig7", tables.fig7_table, figure=True, wanted=_has_event_runs))
register_table(
    "trance",
    TableSpec("fig8", lambda e, cp: tables.fig8_table(e), figure=True, wanted=_has_view_runs),
)
