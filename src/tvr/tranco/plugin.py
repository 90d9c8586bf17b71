"""TRANCO's parts of the shared layers: its VLM task and its leaderboard reader (a `tvr.benchmarks` entry point)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tvr.core.data_path import register_recognizer
from tvr.tranco import paper
from tvr.vlm.report import SummaryReader, register_summary_reader
from tvr.vlm.tasks import register_task


def _tranco_task(data: Any, images: Any, **options: Any) -> Any:
    from tvr.tranco.vlm_task import TrancoTask

    return TrancoTask(data, images, **options)


register_task("tranco", _tranco_task)


def _leaderboard_run(summary: dict[str, Any], inputs: dict[str, Any]) -> Any:
    """`tvr vlm report`: a `tvr tranco evaluate` summary (the paper's convention) beside
    Table 6's rows of the same candidate setting."""
    from tvr.vlm.report import ScoredRun

    published = summary["published"]
    means = summary["conventions"][published["convention"]]["metrics"]
    return ScoredRun(
        metrics={m: means.get(m) for m in paper.METRICS},
        setting=summary["setting"],
        paper_rows=[
            (row["model"], {m: row.get(m) for m in paper.METRICS}) for row in published["table6"]
        ],
        paper_source=f"{paper.PAPER}, Table 6 ({summary['setting']} candidates)",
    )


register_summary_reader(SummaryReader("TRANCO", ("tvr tranco evaluate",), paper.METRICS, "EMR",
                                      _leaderboard_run))  # fmt: skip


def _tranco_hf(data: Any, splits: Any = None) -> Any:
    from tvr.tranco.hf_export import export_tranco  # datasets only when exporting (the hf extra)

    return export_tranco(data, splits)


def _register_hf() -> None:
    from tvr.core.hf_export import register_exporter

    register_exporter("hf", "tranco", _tranco_hf)


_register_hf()


def _tranco_lmms(data: Any, splits: Any = None) -> Any:
    from tvr.tranco.lmms_task import export_lmms  # datasets only when exporting (the hf extra)

    return export_lmms(data, splits)


def _register_lmms() -> None:
    from tvr.core.hf_export import register_exporter

    register_exporter("lmms-eval", "tranco", _tranco_lmms)


_register_lmms()


def _register_compare() -> None:
    from tvr.core.verbs import Option
    from tvr.results.compare import Comparer, register_comparer

    register_comparer("tranco", Comparer(
        "tvr.tranco.eval.compare",
        help="paired comparison of two evaluations of the same samples",
        description="A and B are `tvr tranco evaluate --out` folders (or their detail.jsonl) "
        "scored on the same samples. Compared sample by sample: EMR by the exact McNemar test, "
        "R, P, KTD, SD and NSD by the paired sign-flip randomisation test, each with a seeded "
        "95% bootstrap interval of A-B; then EMR by reference length. See docs/tranco.md.",
        options=(Option("--convention", "the convention of R, P and KTD (default eq2, the "
                        "paper's)", choices=("eq2", "prose"), default="eq2"),),
    ))  # fmt: skip


_register_compare()


def _tranco_evaluate(*args: Any, **options: Any) -> Any:
    from tvr.tranco.eval.evaluate import evaluate_files

    return evaluate_files(*args, **options)


def _register_evaluator() -> None:
    from tvr.core.verbs import Evaluator, Option, register_evaluator

    register_evaluator("tranco", Evaluator(
        _tranco_evaluate,
        help="score a predictions file against the samples (EMR, R, P, KTD, SD, NSD)",
        description='Score predictions ({"id", "clips"} per line) against samples ({"id", '
        '"clips", "candidates"?} per line): EMR, Recall, Precision, KTD, SD and NSD, overall '
        "and per number of steps, under both conventions (eq2: the paper's printed Eq. 2 and "
        "its tables; prose: the text's definitions). A sample without a prediction is scored "
        "as an empty prediction and counted. Prints the paper's Table 6 and 7 beside ours.",
        data_help="a samples file (JSON lines), or a dataset folder (its --split)",
        predictions_help="predictions file (JSON lines)",
        out_files=("detail.jsonl", "table.md"),
        options=(
            Option("--convention", "the convention of the printed table (default eq2, the "
                   "paper's); summary.json holds both", choices=("eq2", "prose"), default="eq2"),
            Option("--candidates", "candidate sets: tiny (each sample's listed candidates, @100 "
                   "in the paper), full (every clip of the samples file) or auto (tiny if every "
                   "sample lists candidates; the default)", choices=("auto", "tiny", "full"),
                   default="auto"),
        ),
        resolve="tvr.tranco.data.layout:samples_file",
    ))  # fmt: skip


_register_evaluator()


def _tranco_stats(
    data: Any, no_image_check: bool = False, split: str | None = None
) -> tuple[dict[str, Any], list[str], int]:
    from pathlib import Path

    from tvr.tranco.data.dataset import open_dataset
    from tvr.tranco.data.formats import read_samples
    from tvr.tranco.data.layout import SPLITS
    from tvr.tranco.data.stats import dataset_stats, samples_stats, stats_lines

    if Path(data).is_file():  # one samples file: its samples as one split
        split = split or (Path(data).stem if Path(data).stem in SPLITS else "test")
        stats = samples_stats(read_samples(data), split)
        note = (f"{data}: one samples file, counted as the {split} split (no clips or images to "
                "check: give the dataset folder for those)")  # fmt: skip
        return stats, [*stats_lines(stats, "ours"), note], 0
    dataset = open_dataset(data, check_images=not no_image_check)
    stats = dataset_stats(dataset)
    return stats, stats_lines(stats, f"ours ({dataset.source})"), 0


def _register_stats() -> None:
    from tvr.core.verbs import Option, Stats, register_stats

    register_stats("tranco", Stats(
        _tranco_stats,
        help="a dataset's samples, clips and lengths per split against Table 2",
        description="Read and check a TRANCO dataset folder (every file, and that each image "
        "exists), or one samples file (its samples as one split), and print the statistics "
        "beside the paper's Table 2.",
        data_help="a dataset folder, or a samples file (JSON lines; one split: --split, or its "
        "name train/val/test.jsonl)",
        options=(Option("--no-image-check", "do not check the image files", switch=True),
                 Option("--split", "the split a samples file holds (default: from its name, "
                        "else test)", choices=("train", "val", "test"))),
    ))  # fmt: skip


_register_stats()


def _is_tranco(path: Path, first: Any) -> bool:
    """A dataset folder (dataset.json) or a samples file of clip sequences."""
    if path.is_dir():
        return (path / "dataset.json").is_file()
    return isinstance(first, dict) and "clips" in first and "id" in first


register_recognizer("tranco", _is_tranco)
