"""VisualTrans's parts of the shared layers: its VLM task, its leaderboard reader and its verification pages (a `tvr.benchmarks` entry point)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tvr.core.data_path import register_recognizer
from tvr.visualtrans import paper
from tvr.vlm.report import SummaryReader, register_summary_reader
from tvr.vlm.tasks import register_task
from tvr.web.pages import register_pages


def _visualtrans_task(data: Any, images: Any, **options: Any) -> Any:
    from tvr.visualtrans.vlm_task import VisualTransTask

    return VisualTransTask(data, images, **options)


register_task("visualtrans", _visualtrans_task)


def _visualtrans_pages(config: Any) -> Any:
    from tvr.visualtrans.web.app import visualtrans_pages  # FastAPI only when serving

    return visualtrans_pages(config)


register_pages("visualtrans", _visualtrans_pages)


def _leaderboard_run(summary: dict[str, Any], inputs: dict[str, Any]) -> Any:
    """`tvr vlm report`: a `tvr visualtrans evaluate` summary as Table 2's columns (percent); the
    replies are the results file itself, so the counts are the summary's."""
    from tvr.visualtrans.data.dataset import DIMENSIONS, SUBTASK_LABELS
    from tvr.vlm.report import ParseCounts, ScoredRun

    def pct(value: float | None) -> float | None:
        return None if value is None else 100 * value

    metrics: dict[str, float | None] = {}
    for dim, tasks in DIMENSIONS.items():
        for t in tasks:
            metrics[SUBTASK_LABELS[t]] = pct(summary["subtasks"][t]["accuracy"])
        metrics[dim.capitalize()] = summary["dimensions"][dim]["table2_pct"]
    metrics["Overall"] = pct(summary["overall"]["accuracy"])
    status = summary["status_counts"]
    return ScoredRun(
        metrics={c: metrics.get(c) for c in paper.COLUMNS},
        setting=summary.get("mode"),
        paper_rows=[(m, paper.table2_row(m)) for m in paper.TABLE2],
        paper_source=paper.PAPER,
        parse=ParseCounts(summary["overall"]["items"], status["no_answer"],
                          status["failed"] + status["missing"]),
        results_is_predictions=True,
    )


register_summary_reader(SummaryReader("VisualTrans", ("tvr visualtrans evaluate",),
                                      paper.COLUMNS, "Overall", _leaderboard_run, digits=2))  # fmt: skip


def _visualtrans_hf(data: Any, splits: Any = None) -> Any:
    from tvr.visualtrans.hf_export import (
        export_visualtrans,  # datasets only when exporting (the hf extra)
    )

    return export_visualtrans(data, splits)


def _register_hf() -> None:
    from tvr.core.hf_export import register_exporter

    register_exporter("hf", "visualtrans", _visualtrans_hf)


_register_hf()


def _visualtrans_lmms(data: Any, splits: Any = None) -> Any:
    from tvr.visualtrans.lmms_task import export_lmms

    return export_lmms(data, splits)


def _register_lmms() -> None:
    from tvr.core.hf_export import register_exporter

    register_exporter("lmms-eval", "visualtrans", _visualtrans_lmms)


_register_lmms()


def _register_compare() -> None:
    from tvr.results.compare import Comparer, register_comparer

    register_comparer("visualtrans", Comparer(
        "tvr.visualtrans.eval.compare",
        help="paired comparison of two evaluations of the same items",
        description="A and B are `tvr visualtrans evaluate --out` folders (or their "
        "detail.jsonl) of the same data file. Overall accuracy and each subtask's accuracy "
        "(Table 2) are compared item by item by the exact McNemar test, with a seeded 95% "
        "bootstrap interval of A-B; then each side's dimension means and the accuracy per "
        "answer format. See docs/visualtrans.md.",
    ))  # fmt: skip


_register_compare()


def _is_visualtrans(path: Path, first: Any) -> bool:
    """VisualTrans.json (a list of questions with their images), or its folder."""
    if path.is_dir():
        return (path / "VisualTrans.json").is_file()
    return isinstance(first, dict) and "task_type" in first and "question" in first


register_recognizer("visualtrans", _is_visualtrans)
