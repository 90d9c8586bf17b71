"""Score TRANCO predictions against samples: per-sample detail, means per convention and per
length (Fig. 9), and a table with the paper's numbers (Tables 6 and 7) beside ours."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tvr.core import verbs
from tvr.tranco import paper
from tvr.tranco.data.formats import Prediction, ReferenceSample, candidate_pools
from tvr.tranco.eval.metrics import (
    CONVENTIONS,
    DEFAULT_CONVENTION,
    METRICS,
    SampleScore,
    by_length,
    convention_named,
    ktd_means,
    mean_values,
    score_sample,
)


@dataclass(frozen=True)
class SampleResult:
    """One sample's score, with what the metrics do not show: a missing prediction (scored as an
    empty one) and predicted clips outside the sample's candidates (`unknown`)."""

    sample: ReferenceSample
    prediction: tuple[str, ...]
    missing: bool
    unknown: int
    score: SampleScore


@dataclass(frozen=True)
class Evaluation:
    """Every sample's result, in the samples file's order, and the candidate setting used."""

    setting: str  # "tiny" or "full"
    candidates: tuple[int, int]  # the smallest and largest candidate set
    results: list[SampleResult]

    @property
    def scores(self) -> list[SampleScore]:
        return [r.score for r in self.results]


def evaluate(
    samples: Sequence[ReferenceSample],
    predictions: Mapping[str, Prediction],
    setting: str = "auto",
) -> Evaluation:
    """Score every sample; a sample without a prediction is scored as an empty prediction."""
    setting, pools = candidate_pools(samples, setting)
    results = []
    sets: dict[int, set[str]] = {}  # the full setting shares one pool among all samples
    for sample, pool in zip(samples, pools, strict=True):
        found = predictions.get(sample.id)
        clips = found.clips if found is not None else ()
        allowed = sets.setdefault(id(pool), set(pool))
        results.append(SampleResult(
            sample=sample,
            prediction=clips,
            missing=found is None,
            unknown=sum(1 for clip in clips if clip not in allowed),
            score=score_sample(sample.clips, clips),
        ))  # fmt: skip
    sizes = [len(pool) for pool in pools]
    return Evaluation(setting, (min(sizes), max(sizes)), results)


def summarize(evaluation: Evaluation, **files: str) -> dict[str, Any]:
    """The summary.json document: counts, every convention's means overall and per length, the
    single-clip KTD both ways, and the paper's numbers for the same setting."""
    results, scores = evaluation.results, evaluation.scores
    return {
        "setting": evaluation.setting,
        "candidates": {"min": evaluation.candidates[0], "max": evaluation.candidates[1]},
        "samples": len(results),
        "predicted": sum(not r.missing for r in results),
        "missing": sum(r.missing for r in results),
        "empty": sum(not r.prediction for r in results),
        "repeated_steps": sum(r.score.duplicates for r in results),
        "samples_with_repeats": sum(r.score.duplicates > 0 for r in results),
        "unknown_clips": sum(r.unknown for r in results),
        "samples_with_unknown_clips": sum(r.unknown > 0 for r in results),
        "conventions": {
            name: {
                "description": conv.description,
                "recall_precision": conv.rp,
                "ktd_single_clip": conv.ktd_single,
                "metrics": mean_values(scores, conv),
                "by_length": {str(k): v for k, v in by_length(scores, conv).items()},
            }
            for name, conv in CONVENTIONS.items()
        },
        "ktd_single_clip": dict(ktd_means(scores)),
        "published": published(evaluation.setting),
        "files": dict(files),
    }


def published(setting: str) -> dict[str, Any]:
    """The paper's numbers for `setting`: Table 6's rows and Table 7's EMR."""
    column = 0 if setting == "tiny" else 1
    return {
        "paper": paper.PAPER,
        "candidates": paper.TINY_CANDIDATES if setting == "tiny" else paper.FULL_CANDIDATES,
        "convention": DEFAULT_CONVENTION,
        "table6": [{"model": row.model, **row.values(setting)} for row in paper.TABLE6],
        "table7": [
            {"strategy": name, "EMR": values[column]} for name, values in paper.TABLE7.items()
        ],
    }


def detail_records(evaluation: Evaluation) -> Iterator[dict[str, Any]]:
    """One record per sample (detail.jsonl): the counts and every convention's values."""
    for r in evaluation.results:
        s = r.score
        yield {
            "id": r.sample.id,
            "length": s.length,
            "predicted": s.predicted,
            "hits": s.hits,
            "discordant": s.discordant,
            "exact": s.exact,
            "repeated_steps": s.duplicates,
            "unknown_clips": r.unknown,
            "missing": r.missing,
            **{name: s.values(conv) for name, conv in CONVENTIONS.items()},
        }


def table_lines(summary: Mapping[str, Any], convention: str, label: str) -> list[str]:
    """Ours beside the paper's rows of the same setting, under `convention`, then by length."""
    conv = convention_named(convention)
    setting = summary["setting"]
    pub = summary["published"]
    lo, hi = summary["candidates"]["min"], summary["candidates"]["max"]
    size = f"{lo}" if lo == hi else f"{lo} to {hi}"
    head = "tiny candidates (@100 in the paper)" if setting == "tiny" else "full candidates"
    lines = [
        f"TRANCO, {head}: ours {size} per sample, the paper's {pub['candidates']}; "
        f"convention {conv.name}" + (" (the paper's)" if conv.name == pub["convention"] else ""),
        f"{'model':<34}" + "".join(f"{m:>9}" for m in METRICS) + "  source",
    ]
    ours = summary["conventions"][conv.name]["metrics"]
    lines.append(f"{label[:34]:<34}" + "".join(f"{ours[m]:>9.4f}" for m in METRICS))
    for row in pub["table6"]:
        lines.append(f"{row['model']:<34}" + "".join(f"{row[m]:>9.4f}" for m in METRICS)
                     + "  Table 6")  # fmt: skip
    for row in pub["table7"]:
        name = f"ViT-B/32-T ({row['strategy']})"
        lines.append(f"{name:<34}" + "".join(f"{'-':>9}" for _ in METRICS[:-1])
                     + f"{row['EMR']:>9.4f}  Table 7")  # fmt: skip
    if conv.name != pub["convention"]:
        lines.append(f"note: the paper's numbers follow convention {pub['convention']}; "
                     f"ours here follow {conv.name}")  # fmt: skip
    lines.append("")
    lines.append(f"by reference length (Fig. 9), convention {conv.name}")
    lines.append(f"{'steps':<8}{'samples':>8}" + "".join(f"{m:>9}" for m in METRICS))
    for k, row in summary["conventions"][conv.name]["by_length"].items():
        lines.append(f"{k:<8}{row['samples']:>8}" + "".join(f"{row[m]:>9.4f}" for m in METRICS))
    lines.append("")
    lines.append(
        f"samples {summary['samples']}, predicted {summary['predicted']}, missing "
        f"{summary['missing']} (scored as empty), empty {summary['empty']}, repeated steps "
        f"{summary['repeated_steps']}, clips outside the candidates {summary['unknown_clips']}"
    )
    ktd = summary["ktd_single_clip"]
    lines.append(f"KTD with a single shared clip scored 0: {ktd['zero']:.4f}; scored 1: "
                 f"{ktd['one']:.4f}")  # fmt: skip
    return lines


def evaluate_files(data: str | Path, split: str, predictions: Path, problems: list | None,
                   convention: str = "eq2", candidates: str = "auto") -> verbs.Evaluation:  # fmt: skip
    """`tvr tranco evaluate`: `predictions` scored against the samples of `data` (a samples file,
    or a dataset folder and its `split`); the table in `convention`; `problems`: the list
    --lenient adds bad lines to."""
    from tvr.tranco.data.formats import read_predictions, read_samples
    from tvr.tranco.data.layout import samples_file

    path = samples_file(data, split)
    samples = read_samples(path)
    found = read_predictions(predictions, {s.id for s in samples}, problems)
    evaluation = evaluate(samples, found, candidates)
    summary = summarize(evaluation, samples=str(path), predictions=str(predictions))
    lines = table_lines(summary, convention, f"ours: {predictions.name}")
    files = {"detail.jsonl": detail_records(evaluation),
             "table.md": "```\n" + "\n".join(lines) + "\n```\n"}  # fmt: skip
    return verbs.Evaluation(summary, lines, files)
