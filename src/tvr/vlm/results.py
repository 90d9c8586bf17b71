"""The results file of a VLM run: one JSON line per request outcome, appended and read back.

Each line is written with one `write` call, ending in a new line, and flushed, so a run that is
killed leaves at most one torn last line. Reading skips torn or foreign lines (and counts them),
or refuses them in strict mode (scoring);
when an id has several lines, the last successful one wins, else the last one. Appending to a
file whose last line is torn first ends that line, so the next record starts on a line of its own.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from tvr.core.errors import InputError, quote
from tvr.core.jsonl import BOM, input_file, parse_json


def is_success(record: dict[str, Any]) -> bool:
    """Whether a record holds a reply (no error and a reply string)."""
    return record.get("error") is None and isinstance(record.get("reply"), str)


@dataclass
class ResultsFile:
    """The records of a results file by id, and the numbers of the lines that could not be read."""

    path: Path
    records: dict[str, dict[str, Any]] = field(default_factory=dict)
    lines: int = 0
    unreadable_lines: list[int] = field(default_factory=list)

    def done_ids(self) -> set[str]:
        return {i for i, r in self.records.items() if is_success(r)}

    def failed_ids(self) -> set[str]:
        return {i for i, r in self.records.items() if not is_success(r)}


def read_results(
    path: str | Path,
    missing_ok: bool = True,
    adopt: Callable[[dict[str, Any]], dict[str, Any] | None] | None = None,
    strict: bool = False,
    payload: str | None = None,
) -> ResultsFile:
    """Read a results file; a missing file is empty unless `missing_ok` is False.

    `adopt`, if given, may turn a line without an `id` (another tool's format) into a record.
    Lines are parsed as every tvr reader parses JSON (`tvr.core.jsonl.parse_json`). A line that
    is not a record (torn, not JSON, not an object with a string `id`) is counted in
    `unreadable_lines`, or with `strict` raises an InputError naming the line and field (what
    scoring does by default; a resumed run skips such lines and asks again). `payload`, if
    given, is a field every record must hold (`reply`: null for a failed request, as `tvr vlm
    run` writes it); a record without it is not a record either (a scorer would otherwise count
    a line that is not a result as a failed request, silently).
    """
    path = Path(path)
    out = ResultsFile(path)
    if not path.exists() and missing_ok:
        return out
    path = input_file(path)
    with path.open("rb") as f:
        for lineno, line in enumerate(f, start=1):
            if lineno == 1 and line.startswith(BOM):
                line = line[len(BOM):]
            if not line.strip():
                continue
            out.lines += 1
            try:
                record = parse_json(line, path, lineno)
                if isinstance(record, dict) and "id" not in record and adopt is not None:
                    record = adopt(record) or record
                if not isinstance(record, dict):
                    raise InputError(path, lineno, None, "expected a JSON object (a record)")
                if not isinstance(record.get("id"), str):
                    got = "missing" if "id" not in record else f"got {quote(record['id'])}"
                    raise InputError(path, lineno, "id", f"expected a string ({got})")
                if payload is not None and payload not in record:
                    raise InputError(path, lineno, payload, "missing (a result line holds the "
                                     f"model's {payload}, null for a failed request)")  # fmt: skip
            except InputError:
                if strict:
                    raise
                out.unreadable_lines.append(lineno)
                continue
            previous = out.records.get(record["id"])
            if previous is None or is_success(record) or not is_success(previous):
                out.records[record["id"]] = record
    return out


class ResultsWriter:
    """Appends records to a results file, one flushed line each."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._file: IO[str] | None = None

    def __enter__(self) -> ResultsWriter:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        torn = False
        if self.path.exists() and self.path.stat().st_size > 0:
            with self.path.open("rb") as f:
                f.seek(-1, os.SEEK_END)
                torn = f.read(1) != b"\n"
        self._file = self.path.open("a", encoding="utf-8")
        if torn:
            self._file.write("\n")
            self._file.flush()
        return self

    def write(self, record: dict[str, Any]) -> None:
        assert self._file is not None, "use ResultsWriter as a context manager"
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._file.flush()

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None
