"""Result tables shared by every benchmark: a scored run, a table, its Markdown/CSV/JSON files."""

from __future__ import annotations

import csv
import io
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tvr.core.jsonl import write_json, write_text


@dataclass
class ResultEntry:
    """One scored RUN: its label, setting, evaluation summary and where it came from."""

    label: str
    setting: str
    summary: dict[str, Any]
    path: Path  # the RUN as given
    kind: str  # "run", "evaluation" or "predictions"
    evaluation: Path | None = None  # the folder holding summary.json
    model: str | None = None  # canonical model name (or "human") when known
    config: dict[str, Any] | None = None  # the training run's config.json
    metrics_csv: Path | None = None
    run_dir: Path | None = None

    @property
    def reward(self) -> str | None:
        """The REINFORCE reward of a fine-tuning run, None for other runs."""
        if self.config and self.config.get("reinforce"):
            return str(self.config.get("reward", "both"))
        return None

    @property
    def base_run(self) -> Path | None:
        """The run directory a REINFORCE run started from (the owner of its init checkpoint)."""
        ckpt = (self.config or {}).get("init_checkpoint")
        return Path(ckpt).resolve().parent.parent if ckpt else None



@dataclass
class ResultTable:
    """A table: named columns, rows as dicts (None prints "-"), a title and notes."""

    name: str
    title: str
    columns: list[str]
    rows: list[dict[str, Any]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    formats: dict[str, Callable[[Any], str]] = field(default_factory=dict)

    def cell(self, column: str, value: Any) -> str:
        if value is None:
            return "-"
        if column in self.formats:
            return self.formats[column](value)
        if isinstance(value, float):
            return f"{value:.4f}"
        return str(value)

    def to_markdown(self) -> str:
        lines = [f"### {self.title}", ""]
        lines.append("| " + " | ".join(self.columns) + " |")
        aligns = ["---"] + [
            "---:"
            if all(isinstance(r.get(c), int | float | tuple | None) for r in self.rows)
            else "---"
            for c in self.columns[1:]
        ]
        lines.append("| " + " | ".join(aligns) + " |")
        for row in self.rows:
            lines.append("| " + " | ".join(self.cell(c, row.get(c)) for c in self.columns) + " |")
        if self.notes:
            lines.append("")
            lines.extend(self.notes)
        return "\n".join(lines) + "\n"

    def to_csv(self) -> str:
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator="\n")
        writer.writerow(self.columns)
        for row in self.rows:
            writer.writerow(["" if row.get(c) is None else row.get(c) for c in self.columns])
        return buf.getvalue()

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "title": self.title,
            "columns": self.columns,
            "rows": [{c: row.get(c) for c in self.columns} for row in self.rows],
            "notes": self.notes,
        }


def _plain(value: Any) -> Any:
    """JSON-friendly cells: (acc, count) pairs become {"Acc", "count"}."""
    if isinstance(value, tuple):
        return {"Acc": value[0], "count": value[1]}
    return value


def write_table(table: ResultTable, out: Path, markdown: bool = True) -> None:
    if markdown:
        write_text(out / f"{table.name}.md", table.to_markdown())
    data = table.to_json()
    data["rows"] = [{k: _plain(v) for k, v in r.items()} for r in data["rows"]]
    for r, src in zip(data["rows"], table.rows, strict=True):
        r["source"] = src.get("source")
    write_json(out / f"{table.name}.json", data)
    flat = ResultTable(table.name, table.title, table.columns)
    for row in table.rows:
        flat_row = {}
        for c in table.columns:
            v = row.get(c)
            flat_row[c] = v[0] if isinstance(v, tuple) else v
        flat.rows.append(flat_row)
    write_text(out / f"{table.name}.csv", flat.to_csv())
