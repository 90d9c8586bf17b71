"""CLEVRER's parts of the shared layers: its VLM task, viewer pages, result tables, leaderboard reader (a `tvr.benchmarks`
entry point)."""

from __future__ import annotations

from typing import Any

from tvr.clevrer import paper, results
from tvr.results.registry import TableSpec, register_table
from tvr.vlm.report import SummaryReader, register_summary_reader
from tvr.vlm.tasks import register_task
from tvr.web.pages import register_pages


def _clevrer_pages(config: Any) -> Any:
    from tvr.clevrer.web.app import clevrer_pages  # FastAPI only when serving (the web extra)

    return clevrer_pages(config)


register_pages("clevrer", _clevrer_pages)


def _clevrer_task(data: Any, images: Any, **options: Any) -> Any:
    from tvr.clevrer.vlm_task import ClevrerTask  # PyAV only when frames are sent

    return ClevrerTask(data, images, **options)


register_task("clevrer", _clevrer_task)
register_table("clevrer", TableSpec("table2", results.table2))
register_table("clevrer", TableSpec("table3", results.table3))
register_table("clevrer", TableSpec("nsdr_ablation", results.nsdr_ablation))
register_table("clevrer", TableSpec("parser", results.parser_table))


def _leaderboard_run(summary: dict[str, Any], inputs: dict[str, Any]) -> Any:
    """`tvr vlm report`: a `tvr clevrer evaluate` summary as the paper's seven columns
    (percent) beside published rows."""
    from tvr.vlm.report import ScoredRun

    anchors = ("CNN+LSTM", "MAC (V+)", "NS-DR", "VRDP")
    # the run's and the paper's rows under the same column names (results.COLUMNS; the paper's
    # values are in the same order)
    rows = [(m, dict(zip(results.COLUMNS, paper.published(m).values, strict=True)))
            for m in anchors]  # fmt: skip
    return ScoredRun(
        metrics=results.accuracies(summary),
        setting=inputs.get("split"),
        paper_rows=rows,
        paper_source=f"{paper.PAPER}, Tables 2-3; DCL, VRDP (later work)",
    )


register_summary_reader(SummaryReader("CLEVRER", ("tvr clevrer evaluate",), results.COLUMNS,
                                      "descriptive", _leaderboard_run, digits=1))  # fmt: skip


def _clevrer_hf(data: Any, splits: Any = None) -> Any:
    from tvr.clevrer.hf_export import export_clevrer  # datasets only when exporting (the hf extra)

    return export_clevrer(data, splits)


def _register_hf() -> None:
    from tvr.core.hf_export import register_exporter

    register_exporter("hf", "clevrer", _clevrer_hf)


_register_hf()


def _clevrer_lmms(data: Any, splits: Any = None) -> Any:
    from tvr.clevrer.lmms_task import export_lmms  # datasets only when exporting (the hf extra)

    return export_lmms(data, splits)


def _register_lmms() -> None:
    from tvr.core.hf_export import register_exporter

    register_exporter("lmms-eval", "clevrer", _clevrer_lmms)


_register_lmms()
