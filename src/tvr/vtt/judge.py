"""The LLM judge (the paper's section 5.5): logical soundness 1-5 of each sample's joined predictions.

Each (model, sample) is one text-only request through the shared runner (`tvr.vlm.runner`, so it
resumes like `tvr vlm run`): the prompt of the paper's Fig. 11 (`prompts/vtt_judge.txt`) with the
sample's predicted descriptions joined by ", " and lower-cased, as the released judge did. A
sample whose prediction has no description is not asked (counted as `no_descriptions`). The
score is the first lone digit 1-5 of the reply; another reply is `unreadable`.

`tvr vtt judge --out DIR` writes:

- `replies.jsonl` (+ `replies.runs.jsonl`): the runner's results, kept for resuming;
- `judge_config.json`: what was judged and how (records, split, subset, predictions with their
  SHA-256, judge model, prompt); a later run into DIR must judge the same things;
- `ratings.jsonl`: one line per (model, sample): the score or why there is none;
- `summary.json`, `summary.md`: per model the mean score and the counts; with human ratings
  (`--ratings`, the export of `tvr vtt ratings`), Spearman's rho between the judge and people,
  over (model, sample) pairs and over the models' means (the paper's Table 5: rho 0.881).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tvr.core.errors import InputError, UserError
from tvr.core.jsonl import iter_jsonl, prepare_output_folder, write_json, write_jsonl, write_text
from tvr.vlm.client import Endpoint, RetryPolicy, Sampling, public_url
from tvr.vlm.results import ResultsFile, is_success, read_results
from tvr.vlm.runner import RunSummary, run
from tvr.vlm.tasks import ParsedReply, TaskItem
from tvr.vlm.templates import load_template
from tvr.vtt.agreement import Spearman, spearman
from tvr.vtt.data.layout import records_file
from tvr.vtt.data.predictions import Prediction, read_predictions
from tvr.vtt.data.records import VttRecord, read_records
from tvr.vtt.subset import choose_subset

JUDGE_PROMPT = "vtt_judge.txt"
SCORES = range(1, 6)
_THINK = re.compile(r"<think>.*?</think>", re.IGNORECASE | re.DOTALL)
_SCORE = re.compile(r"(?<![\d.])([1-5])(?:\.0+)?(?![\d.])")
#: what may change when a judge run is resumed into the same folder
RESUMABLE = frozenset({"endpoint", "sampling"})

#: the paper's Table 5: logical soundness per model, by people and by Gemini-1.5 as the judge
TABLE5_SOURCE = "Visual Transformation Telling (VTT paper), Table 5"
TABLE5: dict[str, tuple[float, float]] = {
    "CST": (2.96, 1.04),
    "GLACNet": (3.78, 2.85),
    "DenseCap": (3.59, 2.6),
    "Gemini": (4.17, 4.0),
    "LLaVA": (3.07, 3.26),
    "LLaVALORA": (3.76, 3.72),
    "TTNetBase": (3.95, 3.73),
    "TTNet": (4.11, 3.76),
}


def parse_score(reply: str | None) -> int | None:
    """The first lone digit 1-5 of a reply ("4", "Score: 4", "4/5", "4.0"), else None."""
    match = _SCORE.search(_THINK.sub("", reply or ""))
    return int(match.group(1)) if match else None


def joined(descriptions: Sequence[str]) -> str:
    """The sequence the judge reads: the non-empty descriptions, ", "-joined, lower case."""
    return ", ".join(t.strip() for t in descriptions if t.strip()).lower()


def named_predictions(specs: Sequence[str]) -> dict[str, Path]:
    """NAME=FILE (or FILE, named by its stem) -> {name: path}; names are unique."""
    out: dict[str, Path] = {}
    for spec in specs:
        name, sep, path = spec.partition("=")
        if not sep:
            name, path = Path(spec).stem, spec
        name = name.strip()
        if not name or not path:
            raise UserError(f"--predictions {spec!r}: expected NAME=FILE")
        if name in out:
            raise UserError(f"--predictions: the name {name!r} is given twice")
        if not Path(path).is_file():
            raise UserError(f"--predictions {spec}: no such file")
        out[name] = Path(path)
    if not out:
        raise UserError("give at least one --predictions NAME=FILE")
    return out


def sha256_file(path: str | Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


class JudgeTask:
    """The runner's view of the judge: one text-only item per (model, sample) to rate."""

    name = "vtt-judge"
    default_prompt = JUDGE_PROMPT
    prompt_package = "tvr.vtt"
    fields = frozenset({"transformations"})

    def __init__(
        self, records: Sequence[VttRecord], predictions: dict[str, dict[str, Prediction]]
    ) -> None:
        self.records = list(records)
        self.predictions = predictions

    def pairs(self) -> list[tuple[str, VttRecord, str]]:
        """(model, record, joined descriptions) of every model and sample, in order."""
        out = []
        for model, preds in self.predictions.items():
            for record in self.records:
                prediction = preds.get(record.id)
                out.append(
                    (model, record, joined(prediction.transformations) if prediction else "")
                )
        return out

    def items(self) -> list[TaskItem]:
        return [
            TaskItem(
                f"{model}/{record.id}",
                (),
                {"transformations": text},
                {"model": model, "sample_id": record.id},
            )
            for model, record, text in self.pairs()
            if text
        ]

    def parse_reply(self, item: TaskItem, reply: str) -> ParsedReply:
        score = parse_score(reply)
        return ParsedReply(score, None if score else "no score 1-5 in the reply")


def judge_ratings(task: JudgeTask, results: ResultsFile) -> list[dict[str, Any]]:
    """ratings.jsonl: per (model, sample) the score, or the status saying why there is none."""
    lines = []
    for model, record, text in task.pairs():
        line: dict[str, Any] = {
            "model": model,
            "id": record.id,
            "n": record.n,
            "transformations": text,
            "score": None,
        }
        result = results.records.get(f"{model}/{record.id}")
        if not text:
            line["status"] = "no_descriptions"
        elif result is None:
            line["status"] = "not_asked"
        elif not is_success(result):
            line["status"] = "failed"
            line["error"] = result.get("error")
        else:
            line["reply"] = result["reply"][-200:]
            line["score"] = parse_score(result["reply"])
            line["status"] = "rated" if line["score"] is not None else "unreadable"
        lines.append(line)
    return lines


STATUSES = ("rated", "unreadable", "failed", "not_asked", "no_descriptions")


def per_model(ratings: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """model -> mean score over the rated samples, and the count of each status."""
    out: dict[str, dict[str, Any]] = {}
    for line in ratings:
        m = out.setdefault(line["model"], {"samples": 0, **dict.fromkeys(STATUSES, 0), "sum": 0})
        m["samples"] += 1
        m[line["status"]] += 1
        m["sum"] += line["score"] or 0
    for m in out.values():
        total = m.pop("sum")
        m["mean"] = total / m["rated"] if m["rated"] else None
    return out


# --- human ratings and agreement -------------------------------------------------------------


@dataclass(frozen=True)
class HumanRating:
    """One person's logical-soundness rating of one model's descriptions of one sample."""

    model: str
    sample_id: str
    logical_soundness: int


def read_human_ratings(path: str | Path) -> list[HumanRating]:
    """The decided logical-soundness ratings of a ratings export (`tvr vtt ratings`, lines with
    `sample_id`, `model`, `logical_soundness`; the released files' `id` and `exp` are read too);
    undecided ratings (null) are skipped."""
    path = Path(path)
    out = []
    for lineno, data in iter_jsonl(path):
        if not isinstance(data, dict):
            raise InputError(path, lineno, None, "expected a JSON object")
        sample = data.get("sample_id", data.get("id"))
        model = data.get("model", data.get("exp"))
        if not isinstance(sample, str) or not sample:
            raise InputError(path, lineno, "sample_id", f"expected a sample id, got {sample!r}")
        if not isinstance(model, str) or not model:
            raise InputError(path, lineno, "model", f"expected a model name, got {model!r}")
        score = data.get("logical_soundness")
        if score is None:
            continue
        if isinstance(score, bool) or not isinstance(score, int) or score not in SCORES:
            raise InputError(
                path, lineno, "logical_soundness", f"expected an integer 1-5 or null, got {score!r}"
            )
        out.append(HumanRating(model, sample, score))
    return out


@dataclass
class Agreement:
    """The judge against people: over (model, sample) pairs, and over the models' means."""

    pairs: Spearman
    models: Spearman
    model_means: dict[str, dict[str, float]] = field(default_factory=dict)
    unmatched_human: int = 0  # human ratings of a (model, sample) the judge did not rate


def agreement(ratings: list[dict[str, Any]], human: list[HumanRating]) -> Agreement:
    """Spearman's rho of the judge's scores against the people's mean per (model, sample), and
    of the per-model means over the pairs both rated (the paper's Table 5 compares these)."""
    judged = {(r["model"], r["id"]): r["score"] for r in ratings if r["score"] is not None}
    people: dict[tuple[str, str], list[int]] = {}
    for h in human:
        people.setdefault((h.model, h.sample_id), []).append(h.logical_soundness)
    keys = sorted(k for k in people if k in judged)
    unmatched = sum(len(v) for k, v in people.items() if k not in judged)
    human_mean = [sum(people[k]) / len(people[k]) for k in keys]
    judge = [float(judged[k]) for k in keys]
    means: dict[str, dict[str, float]] = {}
    for model in sorted({m for m, _ in keys}):
        mine = [k for k in keys if k[0] == model]
        all_human = [s for k in mine for s in people[k]]
        means[model] = {
            "human": sum(all_human) / len(all_human),
            "judge": sum(judged[k] for k in mine) / len(mine),
            "samples": len(mine),
            "human_ratings": len(all_human),
        }
    by_model = spearman([m["human"] for m in means.values()], [m["judge"] for m in means.values()])
    return Agreement(spearman(human_mean, judge), by_model, means, unmatched)


# --- output ----------------------------------------------------------------------------------


def summarize(
    config: dict[str, Any], ratings: list[dict[str, Any]], agree: Agreement | None
) -> dict[str, Any]:
    """summary.json."""
    summary: dict[str, Any] = {
        "judge": config["judge_model"],
        "prompt": config["prompt"],
        "split": config["split"],
        "samples": len(config["sample_ids"]),
        "models": per_model(ratings),
    }
    if agree is not None:
        summary["agreement"] = {
            "pairs": asdict(agree.pairs),
            "models": asdict(agree.models),
            "model_means": agree.model_means,
            "unmatched_human_ratings": agree.unmatched_human,
            "paper": {"source": TABLE5_SOURCE, "spearman_models": 0.881, "p_value": 0.004},
        }
    return summary


def _fmt(x: float | None, digits: int = 2) -> str:
    return "n/a" if x is None else f"{x:.{digits}f}"


def summary_lines(summary: dict[str, Any]) -> list[str]:
    """summary.md: the mean per model and the counts; the agreement if there is one."""
    lines = [
        f"LLM judge {summary['judge']} on {summary['samples']} {summary['split']} samples "
        "(logical soundness 1-5, prompt of the paper's Fig. 11)",
        "",
        "| model | mean | rated | unreadable | failed | not asked | no descriptions |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for model, m in summary["models"].items():
        lines.append(
            f"| {model} | {_fmt(m['mean'])} | {m['rated']} | {m['unreadable']} | "
            f"{m['failed']} | {m['not_asked']} | {m['no_descriptions']} |"
        )
    agree = summary.get("agreement")
    if agree:
        lines += ["", "Agreement with people (Spearman's rho):", ""]
        for key, what in (("pairs", "(model, sample) pairs"), ("models", "models' means")):
            s = agree[key]
            lines.append(
                f"- over {what}: rho {_fmt(s['rho'], 3)}, p {_fmt(s['p_value'], 4)}, "
                f"n {s['n']} ({s['method']})"
            )
        lines.append(
            f"- the paper (Table 5, Gemini-1.5 against people over 8 models' means): "
            f"rho {agree['paper']['spearman_models']}, p {agree['paper']['p_value']}"
        )
        lines += [
            "",
            "| model | people | judge | samples | human ratings |",
            "|---|---:|---:|---:|---:|",
        ]
        for model, m in agree["model_means"].items():
            lines.append(
                f"| {model} | {m['human']:.2f} | {m['judge']:.2f} | {m['samples']} | "
                f"{m['human_ratings']} |"
            )
    return lines


def check_resume(path: Path, config: dict[str, Any]) -> None:
    """UserError when `path` (judge_config.json of an earlier run) judged other things."""
    if not path.is_file():
        return
    try:
        before = json.loads(path.read_text())
    except ValueError:
        raise UserError(f"{path}: not JSON; remove it or choose another --out") from None
    differ = [k for k in config if k not in RESUMABLE and before.get(k) != config[k]]
    if differ:
        raise UserError(
            f"{path.parent} holds a judge run of other inputs ({', '.join(differ)} differ); "
            "choose another --out"
        )


def write_outputs(
    out: Path, config: dict[str, Any], ratings: list[dict[str, Any]], summary: dict[str, Any]
) -> None:
    write_json(out / "judge_config.json", config)
    write_jsonl(out / "ratings.jsonl", ratings)
    write_json(out / "summary.json", summary)
    write_text(out / "summary.md", "\n".join(summary_lines(summary)) + "\n")


@dataclass(frozen=True)
class JudgeInputs:
    """What to judge: the records (file or release folder) and split, the subset, the named
    prediction files, the output folder, the prompt file (None: Fig. 11's) and human ratings."""

    data: Path
    predictions: dict[str, Path]
    out: Path
    split: str = "test"
    subset: int | None = None
    seed: int = 0
    prompt: Path | None = None
    ratings: Path | None = None


@dataclass
class JudgeRun:
    """The runner's counts of this run and the summary written."""

    run: RunSummary
    summary: dict[str, Any]
    out: Path


def run_judge(
    inputs: JudgeInputs,
    endpoint: Endpoint,
    sampling: Sampling | None = None,
    policy: RetryPolicy | None = None,
    concurrency: int = 4,
    limit: int | None = None,
    progress: bool = True,
) -> JudgeRun:
    """Judge every (model, sample) not yet judged in `inputs.out`, then write the ratings and the
    summary of everything judged there."""
    path = records_file(inputs.data)
    records = [r for r in read_records(path) if r.split == inputs.split]
    if not records:
        raise UserError(f"{path}: no {inputs.split} samples")
    chosen = choose_subset(records, inputs.subset, inputs.seed)
    task = JudgeTask(chosen, {n: read_predictions(p) for n, p in inputs.predictions.items()})
    human = read_human_ratings(inputs.ratings) if inputs.ratings is not None else None
    template = load_template(inputs.prompt, task)
    sampling = sampling or Sampling()
    config = {
        "records": str(path),
        "records_sha256": sha256_file(path),
        "split": inputs.split,
        "subset": inputs.subset,
        "seed": inputs.seed,
        "sample_ids": [r.id for r in chosen],
        "predictions": {
            n: {"file": str(p), "sha256": sha256_file(p)} for n, p in inputs.predictions.items()
        },
        "judge_model": endpoint.model,
        "endpoint": public_url(endpoint.url),
        "prompt": template.source,
        "prompt_sha256": template.sha256,
        "sampling": sampling.payload(),
    }
    out = prepare_output_folder(inputs.out)
    check_resume(out / "judge_config.json", config)
    write_json(out / "judge_config.json", config)
    counts = run(
        task,
        template,
        endpoint,
        out / "replies.jsonl",
        sampling=sampling,
        policy=policy,
        concurrency=concurrency,
        limit=limit,
        progress=progress,
    )
    ratings = judge_ratings(task, read_results(out / "replies.jsonl"))
    agree = agreement(ratings, human) if human is not None else None
    summary = summarize(config, ratings, agree)
    write_outputs(out, config, ratings, summary)
    return JudgeRun(counts, summary, out)
