"""`tvr vtt evaluate`: score a prediction file against the records of one split, write the results.

Every description of every sample of the split is scored: a sample without a prediction, a
shorter list and an empty or blank string count as missing descriptions, scored as the empty
text (as the released evaluation does) and counted; descriptions beyond the sample's N are
ignored and counted; predictions for ids of other splits or unknown ids are ignored and counted.
A prediction file that matches no sample of the split is an error.

With `only_present` (`--only-present`) only the split's samples that have a line in the prediction
file are scored (the rule of the paper's Human and multi-turn rows of Table 2, whose files cover
50 and 200 test samples): the reference is cut to those samples, so CIDEr-D's document
frequencies come from their references only; the summary says how many of the split's samples
were scored.

Writes summary.json (the means, how each metric ran, the breakdowns by number of transformations
and by category, Table 2's anchors), detail.jsonl (one line per description with its scores) and
table.md (the table printed to the terminal).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError
from tvr.core.jsonl import prepare_output_folder, write_json, write_jsonl, write_text
from tvr.core.overlap import require_overlap
from tvr.vtt.data.predictions import Prediction, read_predictions
from tvr.vtt.data.records import VttRecord, read_records
from tvr.vtt.eval.metrics.breakdown import breakdown
from tvr.vtt.eval.metrics.suite import MetricOptions, MetricScores, score_descriptions
from tvr.vtt.eval.summary import summarize, table_lines


@dataclass
class Aligned:
    """The split's descriptions in order, each with its prediction ("" if missing)."""

    references: list[str] = field(default_factory=list)
    hypotheses: list[str] = field(default_factory=list)
    rows: list[dict[str, Any]] = field(default_factory=list)  # per description: id, index, ...
    counts: dict[str, int] = field(default_factory=dict)
    split_samples: int = 0  # the split's samples, scored or not (only_present scores fewer)
    only_present: bool = False


def align(
    records: list[VttRecord],
    predictions: dict[str, Prediction],
    split: str,
    only_present: bool = False,
) -> Aligned:
    """Pair every description of the split's records with its prediction, counting the gaps;
    `only_present`: only the split's samples that have a prediction."""
    chosen = [r for r in records if r.split == split]
    split_samples = len(chosen)
    if only_present:
        chosen = [r for r in chosen if r.id in predictions]
    out = Aligned(counts={"samples": len(chosen), "descriptions": 0, "missing_samples": 0,
                          "missing_descriptions": 0, "extra_descriptions": 0,
                          "other_split_predictions": 0, "unknown_predictions": 0},
                  split_samples=split_samples, only_present=only_present)  # fmt: skip
    c = out.counts
    for record in chosen:
        prediction = predictions.get(record.id)
        texts = list(prediction.transformations) if prediction else []
        if prediction is None:
            c["missing_samples"] += 1
        c["extra_descriptions"] += max(0, len(texts) - record.n)
        for i, step in enumerate(record.steps):
            text = texts[i] if i < len(texts) else ""
            missing = not text.strip()
            c["missing_descriptions"] += missing
            out.references.append(step.label)
            out.hypotheses.append("" if missing else text)
            out.rows.append({"id": record.id, "index": i, "n": record.n,
                             "category": record.category, "topic": record.topic,
                             "reference": step.label, "prediction": text, "missing": missing})  # fmt: skip
    c["descriptions"] = len(out.references)
    by_id = {r.id: r for r in records}
    for sample_id in predictions:
        if sample_id not in by_id:
            c["unknown_predictions"] += 1
        elif by_id[sample_id].split != split:
            c["other_split_predictions"] += 1
    return out


@dataclass
class Evaluation:
    """An evaluation's summary (summary.json), detail lines and table."""

    summary: dict[str, Any]
    detail: list[dict[str, Any]]
    table: list[str]


def evaluate(
    records_path: str | Path,
    predictions_path: str | Path,
    split: str = "test",
    options: MetricOptions | None = None,
    problems: list | None = None,
    only_present: bool = False,
    progress: bool = False,
) -> Evaluation:
    """Score `predictions_path` against the `split` records of `records_path`; with a
    `problems` list (--lenient) bad prediction lines are added to it and skipped;
    `only_present`: score only the split's samples that have a prediction (see the module);
    `progress`: a bar on stderr for each step of the metrics."""
    records = read_records(records_path)
    predictions = read_predictions(predictions_path, problems)
    aligned = align(records, predictions, split, only_present)
    counts = aligned.counts
    if not aligned.split_samples:
        raise UserError(f"{records_path}: no {split} samples")
    require_overlap(predictions_path, predictions, (r.id for r in records if r.split == split),
                    records_path, "sample", split, {r.id: r.split for r in records})  # fmt: skip
    metrics = score_descriptions(aligned.hypotheses, aligned.references, options, progress)
    summary = summarize(
        records_path, predictions_path, split, counts, metrics,
        by_transformations=_breakdown(aligned, metrics, "n"),
        by_category=_breakdown(aligned, metrics, "category"),
        split_samples=aligned.split_samples, only_present=only_present,
    )  # fmt: skip
    detail = _detail(aligned, metrics)
    return Evaluation(summary, detail, table_lines(summary, f"ours: {Path(predictions_path).name}"))


def write_evaluation(evaluation: Evaluation, out: str | Path) -> Path:
    """Write summary.json, detail.jsonl and table.md into `out` (atomically, each file)."""
    folder = prepare_output_folder(out)
    write_json(folder / "summary.json", evaluation.summary)
    write_jsonl(folder / "detail.jsonl", evaluation.detail)
    write_text(folder / "table.md", "```\n" + "\n".join(evaluation.table) + "\n```\n")
    return folder


def _breakdown(aligned: Aligned, metrics: dict[str, MetricScores], key: str) -> dict[str, Any]:
    groups = breakdown([str(r[key]) for r in aligned.rows], [r["id"] for r in aligned.rows],
                       metrics)  # fmt: skip
    if key == "n":
        return {k: groups[k] for k in sorted(groups, key=int)}
    return {k: groups[k] for k in sorted(groups)}


def _detail(aligned: Aligned, metrics: dict[str, MetricScores]) -> list[dict[str, Any]]:
    lines = []
    for i, row in enumerate(aligned.rows):
        line = dict(row)
        for name, metric in metrics.items():
            line[name] = None if metric.scores is None else metric.scores[i]
            if metric.info.get("label"):
                line[f"{name}_note"] = metric.info["label"]
        lines.append(line)
    return lines
