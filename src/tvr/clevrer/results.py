"""CLEVRER's result tables: Table 2 (baselines), Table 3 (NS-DR), the NS-DR ablation and the
parser's exact match, ours beside the paper's, from scored runs and evaluation folders.

What a RUN given to `tvr clevrer results` may be (optionally written LABEL=PATH):
- an evaluation folder (`tvr clevrer evaluate --out`, or an NS-DR folder of `tvr clevrer nsdr`):
  its summary.json;
- a baseline training run (`tvr clevrer train lstm|cnn-lstm`): RUN/eval/<split>/summary.json;
- a parser run (`tvr clevrer train parser`): RUN/eval/<split>/exact_match.json.
A row's model is known from its run's config, or from its label (`random`, `frequent`, `lstm`,
`cnn+lstm`, `ns-dr`, or the paper's spelling); a known model gets the paper's row beside ours.
Accuracies are in percent, as the paper prints them.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tvr.clevrer import paper
from tvr.clevrer.data.questions import MULTIPLE_CHOICE_TYPES, read_questions
from tvr.clevrer.data.submission import read_submission
from tvr.clevrer.eval.score import score
from tvr.clevrer.eval.summary import summarize, table_lines
from tvr.core.errors import UserError
from tvr.core.jsonl import write_json, write_text
from tvr.results.tables import ResultEntry, ResultTable

#: the table columns: the paper's seven, in its order
COLUMNS: tuple[str, ...] = (
    "descriptive",
    "explanatory per opt.",
    "explanatory per ques.",
    "predictive per opt.",
    "predictive per ques.",
    "counterfactual per opt.",
    "counterfactual per ques.",
)
#: how a label or a config names a model -> the paper's spelling
MODEL_NAMES: dict[str, str] = {
    "random": "Q-type (random)",
    "q-type (random)": "Q-type (random)",
    "frequent": "Q-type (frequent)",
    "q-type (frequent)": "Q-type (frequent)",
    "lstm": "LSTM",
    "cnn-lstm": "CNN+LSTM",
    "cnn+lstm": "CNN+LSTM",
    "ns-dr": "NS-DR",
    "nsdr": "NS-DR",
}
PARTS: tuple[str, ...] = ("programs", "perception", "dynamics")


# --- evaluation folders ---------------------------------------------------------------------------
def evaluate_into(
    questions_file: str | Path, predictions_file: str | Path, out: str | Path
) -> dict:
    """Score an answer file and write OUT/summary.json and summary.md (as `tvr clevrer evaluate
    --out` does); returns the summary."""
    from tvr.clevrer.eval.baselines import chance_level  # NumPy: not at the plugin's import

    questions = read_questions(questions_file)
    result = score(questions, read_submission(predictions_file))
    chance = chance_level(questions)
    summary = summarize(result, chance, questions_file, predictions_file)
    lines = table_lines(result, chance, f"ours: {Path(predictions_file).name}")
    write_json(Path(out) / "summary.json", summary)
    write_text(Path(out) / "summary.md", "```\n" + "\n".join(lines) + "\n```\n")
    return summary


def accuracies(summary: dict[str, Any]) -> dict[str, float | None]:
    """The seven columns (percent) of an evaluation summary."""
    s = summary["score"]
    values = [s["descriptive"]["accuracy"]]
    for t in MULTIPLE_CHOICE_TYPES:
        values += [s[t]["per_option"]["accuracy"], s[t]["per_question"]["accuracy"]]
    return {c: None if v is None else 100.0 * v for c, v in zip(COLUMNS, values, strict=True)}


# --- entries -------------------------------------------------------------------------------------
def canonical_model(name: str | None) -> str | None:
    """The paper's spelling of a model name or label, None if it is none of the paper's."""
    if not name:
        return None
    low = name.strip().lower()
    if low in MODEL_NAMES:
        return MODEL_NAMES[low]
    return next((r.model for r in paper.PUBLISHED if r.model.lower() == low), None)


def nsdr_label(config: dict[str, Any]) -> str:
    """NS-DR's row label: "NS-DR" with every part learned, else the parts given as ground truth."""
    given = [p for p in PARTS if config.get(p) == "gt"]
    return "NS-DR" if not given else f"NS-DR (ground-truth {', '.join(given)})"


def _read_json(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError) as err:
        raise UserError(f"{path}: cannot read ({err})") from None


def load_entry(spec: str, split: str) -> ResultEntry:
    """The scored run of `[LABEL=]PATH` (see the module)."""
    label, _, rest = spec.partition("=") if "=" in spec else (None, "", spec)
    path = Path(rest)
    config_path = path / "config.json"
    config = _read_json(config_path) if config_path.is_file() else None
    if (path / "summary.json").is_file():  # an evaluation or NS-DR folder
        summary = _read_json(path / "summary.json")
        nsdr = config is not None and all(p in config for p in PARTS)
        setting = "nsdr" if nsdr else "evaluation"
        name = label or (nsdr_label(config) if nsdr and config else path.name)
        model = "NS-DR" if nsdr else canonical_model(label or path.name)
        return ResultEntry(name, setting, summary, path, "evaluation", path, model, config)
    if config is None:
        raise UserError(
            f"{path}: neither an evaluation folder (summary.json) nor a run (config.json)"
        )
    if "max_length" in config and "model" not in config:  # a parser run
        found = path / "eval" / split / "exact_match.json"
        if not found.is_file():
            raise UserError(
                f"{path}: no {found.relative_to(path)} (run `tvr clevrer predict "
                f"--run {path} --split {split}` first)"
            )
        name = label or f"parser ({config.get('programs') or 'all'} programs)"
        return ResultEntry(
            name, "parser", _read_json(found), path, "run", found.parent, None, config, run_dir=path
        )
    found = path / "eval" / split / "summary.json"
    if not found.is_file():
        raise UserError(
            f"{path}: no {found.relative_to(path)} (run `tvr clevrer predict --run "
            f"{path} --split {split}` first)"
        )
    model = canonical_model(str(config.get("model")))
    name = label or model or path.name
    return ResultEntry(
        name,
        "baseline",
        _read_json(found),
        path,
        "run",
        found.parent,
        model,
        config,
        path / "metrics.csv",
        path,
    )


# --- tables --------------------------------------------------------------------------------------
def _pct(value: float) -> str:
    return f"{value:.1f}"


def _row(label: str, values: dict[str, float | None], source: str) -> dict[str, Any]:
    return {"model": label, **values, "source": source}


def _published_row(row: paper.PublishedRow) -> dict[str, Any]:
    return _row(f"{row.model} (paper)", dict(zip(COLUMNS, row.values, strict=True)), row.source)


def _with_paper(
    ours: list[ResultEntry], published: Sequence[paper.PublishedRow], compare_paper: bool
) -> list[dict[str, Any]]:
    """Our rows, each followed by the paper's row of its model; then the paper's other rows."""
    by_model = {r.model: r for r in published}
    used: set[str] = set()
    rows = []
    for e in ours:
        rows.append(_row(e.label, accuracies(e.summary), str(e.path)))
        if compare_paper and e.model in by_model and e.model not in used:
            rows.append(_published_row(by_model[e.model]))
            used.add(e.model)
    if compare_paper:
        rows += [_published_row(r) for r in published if r.model not in used]
    return rows


def _table(name: str, title: str, rows: list[dict[str, Any]], notes: list[str]) -> ResultTable:
    columns = ["model", *COLUMNS, "source"]
    return ResultTable(name, title, columns, rows, notes, {c: _pct for c in COLUMNS})


def table2(entries: list[ResultEntry], compare_paper: bool) -> ResultTable | None:
    """Table 2: the baselines (every scored run or evaluation that is not NS-DR or a parser)."""
    ours = [e for e in entries if e.setting in ("baseline", "evaluation")]
    if not ours:
        return None
    return _table(
        "table2",
        "Table 2: baselines (accuracy %)",
        _with_paper(ours, paper.TABLE2, compare_paper),
        [
            "Explanatory, predictive and counterfactual: per option and per question "
            "(a question is right only if every option is)."
        ],
    )


def table3(entries: list[ResultEntry], compare_paper: bool) -> ResultTable | None:
    """Table 3: NS-DR with every part learned."""
    ours = [e for e in entries if e.setting == "nsdr" and e.label == "NS-DR"]
    if not ours:
        return None
    return _table(
        "table3",
        "Table 3: NS-DR (accuracy %)",
        _with_paper(ours, paper.TABLE3, compare_paper),
        ["The paper's question parser is trained on 1,000 programs."],
    )


def nsdr_ablation(entries: list[ResultEntry], compare_paper: bool) -> ResultTable | None:
    """NS-DR with each part learned or ground truth: what each learned part costs."""
    ours = [e for e in entries if e.setting == "nsdr"]
    if not ours:
        return None
    columns = ["model", *PARTS, *COLUMNS, "source"]
    rows = [
        {
            "model": e.label,
            **{p: (e.config or {}).get(p) for p in PARTS},
            **accuracies(e.summary),
            "source": str(e.path),
        }
        for e in ours
    ]
    return ResultTable(
        "nsdr_ablation",
        "NS-DR with ground-truth parts (accuracy %)",
        columns,
        rows,
        ["gt: the part replaced by ground truth; model: learned."],
        {c: _pct for c in COLUMNS},
    )


def parser_table(entries: list[ResultEntry], compare_paper: bool) -> ResultTable | None:
    """The question parser's exact program match (percent) per role and whole questions."""
    ours = [e for e in entries if e.setting == "parser"]
    if not ours:
        return None
    keys = {
        "all": "all texts",
        "role/descriptive": "descriptive",
        "role/question": "mc questions",
        "role/choice": "choices",
        "questions": "whole questions",
    }
    rows = []
    for e in ours:
        row: dict[str, Any] = {
            "model": e.label,
            "programs": (e.config or {}).get("programs") or "all",
        }
        for key, column in keys.items():
            got = e.summary.get(key)
            row[column] = None if got is None else 100.0 * got["accuracy"]
        row["texts"] = (e.summary.get("all") or {}).get("total")
        row["source"] = str(e.path)
        rows.append(row)
    columns = ["model", "programs", *keys.values(), "texts", "source"]
    return ResultTable(
        "parser",
        "Question parser: exact program match (%)",
        columns,
        rows,
        [
            "A parse is right only if it equals the program token for token; a whole "
            "question only if its program and every choice's are right."
        ],
        {c: _pct for c in keys.values()},
    )


def make_results(
    specs: Sequence[str], out: str | Path, split: str = "test", compare_paper: bool = True
) -> tuple[str, list[Path]]:
    """The registered CLEVRER tables of the runs `specs`, written to `out` (NAME.md, .csv,
    .json and results.md); returns (the Markdown, the files written)."""
    from tvr.results.registry import build_tables
    from tvr.results.tables import write_table

    entries = [load_entry(s, split) for s in specs]
    tables, figures = build_tables("clevrer", entries, compare_paper)
    out = Path(out)
    files = []
    for t in [*tables, *figures]:
        write_table(t, out)
        files += [out / f"{t.name}.{ext}" for ext in ("md", "csv", "json")]
    markdown = "\n".join(t.to_markdown() for t in [*tables, *figures])
    write_text(out / "results.md", markdown)
    files.append(out / "results.md")
    return markdown, files
