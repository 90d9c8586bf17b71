"""The ratings out of the results database: JSONL and CSV, and the table of Table 2's right side.

`tvr vtt ratings --db URL --out DIR` writes `ratings.jsonl` and `ratings.csv` (one line per
rating: sample, model, rater id, N, the descriptions shown, the three scores or `undecided`, the
times), `summary.json` and `table.md`: per model the mean fluency, relevance and logical
soundness over its decided ratings (as the released summary averages them: every rating counts
once), their standard deviations, and how many ratings, samples and raters there are and how many
samples have the wanted number of decided ratings; the paper's rows beside them.
"""

from __future__ import annotations

import csv
import io
import json
import statistics
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError

from tvr.core.errors import UserError
from tvr.core.jsonl import prepare_output_folder, write_json, write_jsonl, write_text
from tvr.vtt.web.models import VttRating
from tvr.vtt.web.study import CRITERIA, MIN_RATERS
from tvr.web.db import make_engine, make_sessionmaker

TABLE2_SOURCE = "Visual Transformation Telling (VTT paper), Table 2 (Flu., Rel., Logic.)"
#: Table 2's human evaluation: model -> (fluency, relevance, logical soundness)
TABLE2_HUMAN: dict[str, tuple[float, float, float]] = {
    "Human": (5.00, 4.88, 4.88),
    "CST*": (2.04, 3.16, 2.96),
    "GLACNet*": (4.75, 3.82, 3.78),
    "DenseCap*": (4.74, 3.67, 3.59),
    "Gemini-1.5": (4.95, 3.95, 4.17),
    "LLaVA-1.5-7B+Topic": (4.79, 2.08, 3.07),
    "LLaVA-1.5-7B LORA+Topic": (4.98, 3.10, 3.76),
    "TTNet_Base": (4.79, 4.04, 3.95),
    "TTNet": (4.78, 4.10, 4.11),
}
HEADERS = {"fluency": "Flu.", "relevance": "Rel.", "logical_soundness": "Logic."}
CSV_COLUMNS = (
    "sample_id",
    "model",
    "rater",
    "n",
    "transformations",
    *CRITERIA,
    "undecided",
    "served_at",
    "submitted_at",
    "server_seconds",
    "client_seconds",
)


def _check_database(url: str) -> None:
    """UserError for a SQLite file that does not exist (reading must not create it)."""
    try:
        parsed = make_url(url)
    except (ArgumentError, ValueError) as err:
        raise UserError(f"--db {url}: not a database URL ({err})") from None
    file = parsed.database if parsed.drivername.startswith("sqlite") else None
    if file not in (None, "", ":memory:") and not Path(file).is_file():
        raise UserError(f"--db {url}: no such database file")


def rating_lines(db_url: str) -> list[dict[str, Any]]:
    """Every rating of the database, oldest first."""
    _check_database(db_url)
    engine = make_engine(db_url)
    try:
        with make_sessionmaker(engine)() as db:
            rows = list(
                db.scalars(select(VttRating).order_by(VttRating.submitted_at, VttRating.id))
            )
    finally:
        engine.dispose()
    return [
        {
            "sample_id": r.sample_id,
            "model": r.model,
            "rater": r.tester_id,
            "n": r.n,
            "transformations": json.loads(r.descriptions_json),
            **{name: getattr(r, name) for name in CRITERIA},
            "undecided": r.undecided,
            "served_at": r.served_at.isoformat(),
            "submitted_at": r.submitted_at.isoformat(),
            "server_seconds": round(r.server_seconds, 3),
            "client_seconds": r.client_seconds,
        }
        for r in rows
    ]


def _mean(values: list[int]) -> float | None:
    return statistics.fmean(values) if values else None


def _std(values: list[int]) -> float | None:
    return statistics.stdev(values) if len(values) > 1 else None


def model_table(lines: list[dict[str, Any]], wanted: int = MIN_RATERS) -> dict[str, dict[str, Any]]:
    """model -> its means, standard deviations and counts (see the module's docstring)."""
    out: dict[str, dict[str, Any]] = {}
    for model in dict.fromkeys(line["model"] for line in lines):
        mine = [line for line in lines if line["model"] == model]
        decided = [line for line in mine if not line["undecided"]]
        per_sample: dict[str, int] = {}
        for line in decided:
            per_sample[line["sample_id"]] = per_sample.get(line["sample_id"], 0) + 1
        entry: dict[str, Any] = {
            "ratings": len(decided),
            "undecided": len(mine) - len(decided),
            "samples": len({line["sample_id"] for line in mine}),
            "raters": len({line["rater"] for line in mine}),
            f"samples_with_{wanted}": sum(k >= wanted for k in per_sample.values()),
        }
        for name in CRITERIA:
            values = [line[name] for line in decided]
            entry[name] = _mean(values)
            entry[f"{name}_std"] = _std(values)
        out[model] = entry
    return out


def _cell(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def table_lines(table: dict[str, dict[str, Any]], wanted: int = MIN_RATERS) -> list[str]:
    """table.md: ours per model (mean ± std over decided ratings), then the paper's rows."""
    head = [
        "model",
        *HEADERS.values(),
        "ratings",
        "undecided",
        "samples",
        f"samples with {wanted}+",
        "raters",
    ]
    lines = [
        "Human ratings, Likert 1-5, mean ± std over decided ratings (as Table 2's right side)",
        "",
        "| " + " | ".join(head) + " |",
        "|---" + "|---:" * (len(head) - 1) + "|",
    ]
    for model, e in table.items():
        cells = [f"{_cell(e[c])} ± {_cell(e[c + '_std'])}" for c in CRITERIA]
        lines.append(
            f"| {model} | " + " | ".join(cells) + f" | {e['ratings']} | {e['undecided']} "
            f"| {e['samples']} | {e[f'samples_with_{wanted}']} | {e['raters']} |"
        )
    lines += [
        "",
        f"The paper ({TABLE2_SOURCE}):",
        "",
        "| model | Flu. | Rel. | Logic. |",
        "|---|---:|---:|---:|",
    ]
    lines += [
        f"| {m} | " + " | ".join(f"{x:.2f}" for x in v) + " |" for m, v in TABLE2_HUMAN.items()
    ]
    return lines


def ratings_csv(lines: list[dict[str, Any]]) -> str:
    """The ratings as CSV (descriptions joined by " | ")."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=CSV_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for line in lines:
        writer.writerow({**line, "transformations": " | ".join(line["transformations"])})
    return buffer.getvalue()


def write_ratings(db_url: str, out: str | Path, wanted: int = MIN_RATERS) -> dict[str, Any]:
    """Write ratings.jsonl, ratings.csv, summary.json and table.md; returns the summary."""
    folder = prepare_output_folder(out)
    lines = rating_lines(db_url)
    table = model_table(lines, wanted)
    summary = {
        "ratings": len(lines),
        "wanted_per_sample": wanted,
        "models": table,
        "paper": {
            "source": TABLE2_SOURCE,
            "rows": {m: dict(zip(CRITERIA, v, strict=True)) for m, v in TABLE2_HUMAN.items()},
        },
    }
    write_jsonl(folder / "ratings.jsonl", lines)
    write_text(folder / "ratings.csv", ratings_csv(lines))
    write_json(folder / "summary.json", summary)
    write_text(folder / "table.md", "\n".join(table_lines(table, wanted)) + "\n")
    return summary
