"""A task's predictions from a results file: one line per item, and beside them the unread items.

`write_predictions` reads each item's results line with the task's parser and writes the line
the task makes of the answer (None when there is none: no results line, a failed request, or a
reply the parser cannot read); each item without an answer is listed with its reason (and the
tail of an unreadable reply) in `OUT.unparsed.jsonl`. `OUT.export.json` records the results
file read and the counts, so a scored run can be traced back to its run (`tvr vlm report`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from tvr.core.jsonl import write_json, write_jsonl
from tvr.vlm.results import ResultsFile, is_success, read_results
from tvr.vlm.tasks import ParsedReply, TaskAdapter, TaskItem

#: the characters of an unreadable reply's end kept in the unparsed file
EXCERPT_CHARS = 200


def unparsed_path(predictions: str | Path) -> Path:
    """`preds.jsonl` -> `preds.unparsed.jsonl`."""
    p = Path(predictions)
    return p.with_name(p.stem + ".unparsed" + (p.suffix or ".jsonl"))


def export_record_path(predictions: str | Path) -> Path:
    """`preds.jsonl` -> `preds.export.json`: the results file and counts of an export."""
    p = Path(predictions)
    return p.with_name(p.stem + ".export.json")


@dataclass
class ExportSummary:
    """What `write_predictions` wrote and counted (a task may add counts of its own)."""

    predictions: Path
    unparsed_file: Path
    items: int
    parsed: int = 0
    unparsed: int = 0  # a reply that could not be read
    without_reply: int = 0  # no results line, or a failed request


S = TypeVar("S", bound=ExportSummary)


def write_predictions(
    task: TaskAdapter,
    results: str | Path | ResultsFile,
    out: str | Path,
    line: Callable[[S, TaskItem, Any], dict[str, Any]],
    summary: Callable[[Path, Path, int], S] = ExportSummary,  # type: ignore[assignment]
    parse: Callable[[TaskItem, dict[str, Any]], ParsedReply] | None = None,
) -> S:
    """Write `out`, one line `line(summary, item, answer)` per item of `task` (answer None where
    none was read), and the unparsed file beside it; returns the summary (made by `summary`).
    `parse(item, record)` reads a results line (default: the task's `parse_reply` of its
    reply)."""
    res = results if isinstance(results, ResultsFile) else read_results(results, missing_ok=False)
    out = Path(out)
    read = parse or (lambda item, record: task.parse_reply(item, record["reply"]))
    items = task.items()
    s = summary(out, unparsed_path(out), len(items))
    lines, problems = [], []
    for item in items:
        record = res.records.get(item.id)
        answer = None
        problem: dict[str, Any] | None = None
        if record is None:
            problem = {"reason": "no result line"}
            s.without_reply += 1
        elif not is_success(record):
            problem = {"reason": f"request failed: {record.get('error')}"}
            s.without_reply += 1
        else:
            parsed = read(item, record)
            if parsed.ok:
                answer = parsed.answer
                s.parsed += 1
            else:
                problem = {"reason": parsed.reason,
                           "reply_excerpt": (record.get("reply") or "")[-EXCERPT_CHARS:]}  # fmt: skip
                s.unparsed += 1
        lines.append(line(s, item, answer))
        if problem is not None:
            problems.append({"id": item.id, **problem})
    write_jsonl(out, lines)
    write_jsonl(s.unparsed_file, problems)
    write_export_record(task.name, res.path, s)
    return s


def write_export_record(task: str, results: Path, s: Any) -> None:
    """`OUT.export.json` beside the predictions: the task, the results file read and the counts."""
    write_json(export_record_path(s.predictions), {
        "task": task, "results": str(Path(results).resolve()), "items": s.items,
        "parsed": s.parsed, "unparsed": s.unparsed, "without_reply": s.without_reply,
    })  # fmt: skip
