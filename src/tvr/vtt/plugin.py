"""VTT's parts of the shared layers: its VLM task, its leaderboard reader and its rating pages (a `tvr.benchmarks` entry point)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tvr.core.data_path import register_recognizer
from tvr.vlm.report import SummaryReader, register_summary_reader
from tvr.vlm.tasks import register_task
from tvr.vtt import paper
from tvr.web.pages import register_pages


def _vtt_task(data: Any, images: Any, **options: Any) -> Any:
    from tvr.vtt.vlm_task import VttTask

    return VttTask(data, images, **options)


register_task("vtt", _vtt_task)


def _vtt_pages(config: Any) -> Any:
    from tvr.vtt.web.app import vtt_pages  # FastAPI only when serving (the web extra)

    return vtt_pages(config)


register_pages("vtt", _vtt_pages)


def _leaderboard_run(summary: dict[str, Any], inputs: dict[str, Any]) -> Any:
    """`tvr vlm report`: a `tvr vtt evaluate` summary (x100, None where a metric did not run)
    beside Table 2's anchor rows."""
    from tvr.vlm.report import ScoredRun

    return ScoredRun(
        metrics={m: summary["metrics"].get(m) for m in paper.METRICS},
        setting=summary.get("split"),
        paper_rows=[(model, paper.table2_row(model)) for model in paper.ANCHORS],
        paper_source=paper.TABLE2_SOURCE,
    )


register_summary_reader(SummaryReader("VTT", ("tvr vtt evaluate",), tuple(paper.METRICS),
                                      "CIDEr", _leaderboard_run, digits=2))  # fmt: skip


def _vtt_hf(data: Any, splits: Any = None) -> Any:
    from tvr.vtt.hf_export import export_vtt  # datasets only when exporting (the hf extra)

    return export_vtt(data, splits)


def _register_hf() -> None:
    from tvr.core.hf_export import register_exporter

    register_exporter("hf", "vtt", _vtt_hf)


_register_hf()


def _vtt_lmms(data: Any, splits: Any = None) -> Any:
    from tvr.vtt.lmms_task import export_lmms

    return export_lmms(data, splits)


def _register_lmms() -> None:
    from tvr.core.hf_export import register_exporter

    register_exporter("lmms-eval", "vtt", _vtt_lmms)


_register_lmms()


def _register_compare() -> None:
    from tvr.results.compare import Comparer, register_comparer

    register_comparer("vtt", Comparer(
        "tvr.vtt.eval.compare",
        help="paired comparison of two evaluations of the same split",
        description="A and B are `tvr vtt evaluate --out` folders (or their detail.jsonl) of "
        "the same split. Every metric that both computed is compared description by "
        "description (sample id, step index): the paired sign-flip randomisation test and a "
        "seeded 95% bootstrap interval of A-B, x100. A metric unavailable in either, or "
        "computed in different settings, is left out with a note. See docs/vtt.md.",
    ))  # fmt: skip


_register_compare()


def _is_vtt(path: Path, first: Any) -> bool:
    """A release folder (meta/vtt.jsonl) or its records file."""
    if path.is_dir():
        return (path / "meta" / "vtt.jsonl").is_file()
    return isinstance(first, dict) and "youtube_id" in first and "annotation" in first


register_recognizer("vtt", _is_vtt)
