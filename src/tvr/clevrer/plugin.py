"""CLEVRER's parts of the shared layers: its VLM task, viewer pages, result tables, leaderboard reader (a `tvr.benchmarks`
entry point)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tvr.clevrer import paper, results
from tvr.core.data_path import register_recognizer
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


def _register_compare() -> None:
    from tvr.results.compare import Comparer, register_comparer

    register_comparer("clevrer", Comparer(
        "tvr.clevrer.eval.compare",
        help="paired comparison of two evaluations of the same questions",
        description="A and B are `tvr clevrer evaluate --out` folders (or their detail.jsonl) "
        "of the same question file. The paper's metrics are compared item by item: descriptive "
        "accuracy question by question, each multiple-choice type's per-option accuracy option "
        "by option and per-question accuracy question by question, by the exact McNemar test "
        "with a seeded 95% bootstrap interval of A-B; then descriptive accuracy per sub-type. "
        "See docs/clevrer.md.",
    ))  # fmt: skip


_register_compare()


def _clevrer_stats(data: Any, split: str | None = None) -> tuple[dict[str, Any], list[str], int]:
    from tvr.clevrer.report.set_stats import set_stats, stats_lines

    stats = set_stats(data, split)
    return stats, stats_lines(stats), 0


def _clevrer_evaluate(*args: Any) -> Any:
    from tvr.clevrer.eval.evaluate import evaluate

    return evaluate(*args)


def _register_verbs() -> None:
    from tvr.core.verbs import Evaluator, Option, Stats, register_evaluator, register_stats

    register_stats("clevrer", Stats(
        _clevrer_stats,
        help="counts of a set: videos, questions per type and sub-type, answer shares, events",
        description="Read a CLEVRER set (a folder made by `tvr clevrer generate`, or the "
        "release's layout) or one question file, and print its videos and questions, "
        "questions per type beside the release's shares, per descriptive sub-type with its "
        "answer shares, the options of the multiple-choice types and the share labelled "
        "correct, the language prior of the template families and the events per annotated "
        "video. `tvr clevrer report` draws the same counts.",
        data_help="the set's folder, or a question file",
        options=(Option("--split", "one split of a set's folder (default: every split it has)",
                        choices=("train", "val", "test")),),
    ))  # fmt: skip
    register_evaluator("clevrer", Evaluator(
        _clevrer_evaluate,
        help="score an answer file (the challenge's format) against a question file",
        description="Score answers in the challenge's submission format against a question file "
        "with answers (the release's train.json/validation.json or a generated one): "
        "descriptive accuracy (and per sub-type), per-option and per-question accuracy of "
        "explanatory, predictive and counterfactual questions. Unanswered questions and options "
        "count wrong and are counted. Prints the published numbers beside ours.",
        data_help="question file (with answers), or a set's folder (its --split)",
        predictions_help="answer file in the submission format",
        out_files=("summary.md", "detail.jsonl"),
        lenient_what="video entry of the answer file",
        resolve="tvr.clevrer.data.layout:questions_file",
    ))  # fmt: skip


_register_verbs()


def _is_clevrer(path: Path, first: Any) -> bool:
    """A question file (a list of videos with their questions), or a set's folder."""
    if path.is_dir():
        return (path / "questions").is_dir() or any(
            (path / f"{s}.json").is_file() for s in ("train", "validation", "test"))
    return isinstance(first, dict) and "scene_index" in first and "questions" in first


register_recognizer("clevrer", _is_clevrer)
