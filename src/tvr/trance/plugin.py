"""TRANCE's parts of the shared layers: VLM task, result tables, leaderboard reader, web pages (a `tvr.benchmarks` entry point)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tvr.core.data_path import register_recognizer
from tvr.core.hf_export import register_exporter
from tvr.results.registry import TableSpec, register_table
from tvr.trance import paper
from tvr.trance.results import tables
from tvr.vlm.report import SummaryReader, register_summary_reader
from tvr.vlm.tasks import register_task
from tvr.web.pages import register_pages


def _trance_task(data: Any, images: Any, **options: Any) -> Any:
    from tvr.trance.vlm_task import TranceTask

    return TranceTask(data, images, **options)


register_task("trance", _trance_task)


def _trance_hf(data: Any, splits: Any = None) -> Any:
    from tvr.trance.hf_export import export_trance  # datasets only when exporting (the hf extra)

    return export_trance(data, splits)


register_exporter("hf", "trance", _trance_hf)


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


def _leaderboard_run(summary: dict[str, Any], inputs: dict[str, Any]) -> Any:
    """`tvr vlm report`: a `tvr evaluate` summary as Table 3's columns of its setting, beside
    Table 3's rows of that setting."""
    from tvr.trance import paper
    from tvr.vlm.report import ScoredRun

    setting = summary["setting"]
    rows = [(model, dict(by[setting])) for model, by in paper.TABLE3.items() if by.get(setting)]
    return ScoredRun(metrics=dict(summary["metrics"]), setting=setting, paper_rows=rows,
                     paper_source=f"{paper.PAPER}, Table 3 ({setting})")  # fmt: skip


register_summary_reader(SummaryReader(
    "TRANCE", ("tvr evaluate",),
    tuple(dict.fromkeys(paper.BASIC_COLUMNS[:3] + paper.SEQUENCE_COLUMNS)), "Acc",
    _leaderboard_run,
))  # fmt: skip


def _trance_lmms(data: Any, splits: Any = None) -> Any:
    from tvr.trance.lmms_task import export_lmms

    return export_lmms(data, splits)


def _register_lmms() -> None:
    from tvr.core.hf_export import register_exporter

    register_exporter("lmms-eval", "trance", _trance_lmms)


_register_lmms()


def _register_compare() -> None:
    from tvr.results.compare import Comparer, register_comparer

    register_comparer("trance", Comparer(
        "tvr.trance.eval.compare",
        help="paired comparison of two TRANCE evaluations of the same samples",
        description="A and B are `tvr evaluate --out` folders (or their detail.jsonl) of one "
        "setting and the same samples (and views). The paper's metrics are compared sample by "
        "sample: ObjAcc, AttrAcc, ValAcc, Acc (Basic) and LAcc, Acc (Event, View) by the exact "
        "McNemar test, AD and AND by the paired sign-flip randomisation test, each with a "
        "seeded 95% bootstrap interval of A-B; then Acc per number of steps, per view or per "
        "attribute, and each side's EO. See docs/results-tables.md.",
    ))  # fmt: skip


_register_compare()


def _is_trance(path: Path, first: Any) -> bool:
    """A samples file (tvr's format) or the release's data.jsonl; a folder holding one."""
    if path.is_dir():
        return any((path / n).is_file() for n in ("samples.jsonl", "test/samples.jsonl",
                                                   "samples/samples.jsonl", "data.jsonl"))  # fmt: skip
    return isinstance(first, dict) and (str(first.get("format", "")).startswith("tvr.trance.")
                                        or ("idx" in first and "states" in first))  # fmt: skip


register_recognizer("trance", _is_trance)
