r"""`tvr vlm report`: one leaderboard of VLM runs over any benchmarks (Markdown, CSV, JSON, PNG).

A RUN is an evaluation folder, the `--out` of a benchmark's evaluate command (`tvr evaluate`,
`tvr vtt evaluate`, `tvr tranco evaluate`, `tvr visualtrans evaluate`, `tvr clevrer evaluate`),
optionally written LABEL=PATH. From it the report follows the chain back to the run:

- `.tvr-inputs.json` (written by every guarded evaluate) names the command, hence the benchmark,
  and the predictions file it scored;
- the predictions file of `tvr vlm export` has `PRED.export.json` beside it (the results file read
  and the counts: items, unreadable replies, items without a reply); without it, the counts come
  from `PRED.unparsed.jsonl` and the predictions file (the model then stays unknown);
  VisualTrans scores the results file itself, and its reader gives the counts from summary.json;
- the results file's run log (`RESULTS.runs.jsonl`) names the model (else its lines do).

Benchmarks register a `SummaryReader` (`register_summary_reader`, from their plugin modules): the
evaluate commands it reads, and a function from summary.json to the paper's metrics of the run
and the paper's published rows. This module names no benchmark.

A reply that did not parse is counted and shown (never guessed): the parse-failure rate is
unreadable replies / items; failed requests and items without a reply are shown beside it.

Runs are ranked side by side only on the same data: a run's data is the data file its evaluation
recorded (`--data`, resolved), its split, its setting and its number of items. When a benchmark's
runs differ in any of these (a 20-item run beside a 600-item one, Event beside View), each gets a
`data` letter (A, B, ...) in the tables, the plot and the JSON, and a legend names each letter's
data: compare only runs of one letter. The paper's rows follow each run's setting (a View run
gets Table 3's View rows, an Event run Event's). Text that comes from files or the command line
(labels, models, paths) is written to Markdown and the terminal with its control characters
escaped (`\x1b`, `\n`) and `|` as `\|`, so it can neither break a table nor drive the terminal.
"""

from __future__ import annotations

import csv
import io
import json
import sys
import unicodedata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError
from tvr.core.jsonl import read_json, write_file_bytes, write_json, write_text
from tvr.core.output_record import RECORD_FILE
from tvr.core.plugins import load_benchmarks
from tvr.vlm.export import export_record_path, unparsed_path

SUMMARY = "summary.json"


@dataclass(frozen=True)
class ParseCounts:
    """Of a run's items: replies that could not be read, and items without a reply."""

    items: int
    unparsed: int
    without_reply: int

    @property
    def rate(self) -> float | None:
        return self.unparsed / self.items if self.items else None


@dataclass
class ScoredRun:
    """What a benchmark's reader makes of one evaluation's summary.json."""

    metrics: dict[str, float | None]  # the paper's metric -> value, as the paper prints it
    setting: str | None = None
    #: the paper's published rows: (model, metric -> value), in the order to show
    paper_rows: list[tuple[str, dict[str, float | None]]] = field(default_factory=list)
    paper_source: str = ""
    #: the counts, for a benchmark that scores the results file itself (else from the export)
    parse: ParseCounts | None = None
    #: the results file, where the scored predictions are the results file itself
    results_is_predictions: bool = False


@dataclass(frozen=True)
class SummaryReader:
    """A benchmark's reader of its evaluation summaries, for `tvr vlm report`.

    Args:
        benchmark: its name in the report ("TRANCE", "VTT", ...).
        commands: the evaluate commands whose --out it reads ("tvr vtt evaluate").
        metrics: the metric columns, in the paper's order.
        headline: the metric plotted.
        read: (summary.json, the evaluation's recorded inputs) -> the scored run.
        higher_is_better: whether a larger headline is better (for the plot's note).
        digits: the decimals the Markdown table and the plot show.
    """

    benchmark: str
    commands: tuple[str, ...]
    metrics: tuple[str, ...]
    headline: str
    read: Callable[[dict[str, Any], dict[str, Any]], ScoredRun]
    higher_is_better: bool = True
    digits: int = 4  # decimals shown (2 for the benchmarks printed in percent)


_READERS: dict[str, SummaryReader] = {}


def register_summary_reader(reader: SummaryReader) -> None:
    """Make a benchmark's evaluation folders readable by `tvr vlm report` (a plugin calls this)."""
    _READERS[reader.benchmark] = reader


def summary_readers() -> dict[str, SummaryReader]:
    load_benchmarks()
    return dict(_READERS)


def _reader_of(command: str, folder: Path) -> SummaryReader:
    for reader in summary_readers().values():
        if command in reader.commands:
            return reader
    known = sorted(c for r in _READERS.values() for c in r.commands)
    raise UserError(f"{folder}: written by `{command}`, which no benchmark's report reader "
                    f"reads; expected the --out of one of: {', '.join(known)}")  # fmt: skip


@dataclass
class ReportRow:
    """One run of the leaderboard."""

    label: str
    benchmark: str
    evaluation: Path
    predictions: Path | None
    results: Path | None
    model: str | None
    scored: ScoredRun
    parse: ParseCounts | None
    data: str | None = None  # the data file the evaluation recorded (resolved)
    split: str | None = None
    #: "A", "B", ...: which data the run scored, when a benchmark's runs scored different data
    #: (set by `mark_data`; "" when all the benchmark's runs share theirs)
    data_group: str = ""

    @property
    def data_key(self) -> tuple[Any, ...]:
        """What must be equal for two runs to be ranked side by side."""
        items = None if self.parse is None else self.parse.items
        return (self.benchmark, self.data, self.split, self.scored.setting, items)

    def to_json(self) -> dict[str, Any]:
        p = self.parse
        return {
            "label": self.label,
            "model": self.model,
            "benchmark": self.benchmark,
            "setting": self.scored.setting,
            "data": self.data,
            "split": self.split,
            "data_group": self.data_group or None,
            "evaluation": str(self.evaluation),
            "predictions": None if self.predictions is None else str(self.predictions),
            "results": None if self.results is None else str(self.results),
            "items": None if p is None else p.items,
            "unparsed": None if p is None else p.unparsed,
            "without_reply": None if p is None else p.without_reply,
            "parse_failure_rate": None if p is None else p.rate,
            "metrics": self.scored.metrics,
        }


def parse_run_argument(text: str) -> tuple[str | None, Path]:
    """`LABEL=PATH` -> (LABEL, PATH); `PATH` -> (None, PATH) (a path holding '=' is taken whole
    when it exists)."""
    if "=" in text and not Path(text).exists():
        label, _, path = text.partition("=")
        if label and path:
            return label, Path(path)
    return None, Path(text)


def _json_object(path: Path, what: str) -> dict[str, Any]:
    value = read_json(path)
    if not isinstance(value, dict):
        raise UserError(f"{path}: not {what} (expected a JSON object)")
    return value


def _count_lines(path: Path) -> int:
    with path.open("rb") as f:
        return sum(1 for line in f if line.strip())


def _export_counts(predictions: Path) -> tuple[ParseCounts | None, Path | None]:
    """(counts, results file) of an exported predictions file: from PRED.export.json, else from
    PRED.unparsed.jsonl (no results file then), else (None, None)."""
    record_file = export_record_path(predictions)
    if record_file.is_file():
        rec = _json_object(record_file, "the record of `tvr vlm export`")
        try:
            counts = ParseCounts(int(rec["items"]), int(rec["unparsed"]), int(rec["without_reply"]))
        except (KeyError, TypeError, ValueError):
            raise UserError(f"{record_file}: not the record of `tvr vlm export`") from None
        results = rec.get("results")
        return counts, Path(results) if isinstance(results, str) else None
    listed = unparsed_path(predictions)
    if listed.is_file() and predictions.is_file():
        problems = [json.loads(x) for x in listed.read_text(encoding="utf-8").splitlines()
                    if x.strip()]  # fmt: skip
        unparsed = sum("reply_excerpt" in p for p in problems)
        counts = ParseCounts(_count_lines(predictions), unparsed, len(problems) - unparsed)
        return counts, None
    return None, None


def model_of(results: Path) -> str | None:
    """The model of a results file: its run log's (the models, in order, joined by ' + '),
    else the models of its lines; None when neither is there."""
    from tvr.vlm.runner import runs_log_path

    models: list[str] = []
    log = runs_log_path(results)
    sources = [log, results] if log.is_file() else [results]
    for source in sources:
        if not source.is_file():
            continue
        for line in source.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            model = entry.get("model") if isinstance(entry, dict) else None
            if isinstance(model, str) and model not in models:
                models.append(model)
        if models:
            break
    return " + ".join(models) if models else None


def read_run(label: str | None, folder: Path) -> ReportRow:
    """One evaluation folder as a leaderboard row."""
    if not folder.is_dir():
        raise UserError(f"{folder}: not a folder (give an evaluation's --out folder)")
    record_file, summary_file = folder / RECORD_FILE, folder / SUMMARY
    if not record_file.is_file() or not summary_file.is_file():
        raise UserError(f"{folder}: no {SUMMARY} and {RECORD_FILE}; give the --out folder of a "
                        "benchmark's evaluate command")  # fmt: skip
    record = _json_object(record_file, "a tvr inputs record")
    command, inputs = record.get("command"), record.get("inputs")
    if not isinstance(command, str) or not isinstance(inputs, dict):
        raise UserError(f"{record_file}: not a tvr inputs record")
    reader = _reader_of(command, folder)
    summary = _json_object(summary_file, f"the summary of `{command}`")
    try:
        scored = reader.read(summary, inputs)
    except (KeyError, TypeError, IndexError) as err:
        raise UserError(f"{summary_file}: not the summary of `{command}` (no {err})") from None
    predictions = Path(inputs["predictions"]) if isinstance(inputs.get("predictions"), str) else None
    parse, results = scored.parse, None
    if scored.results_is_predictions:
        results = predictions
    elif predictions is not None:
        counts, results = _export_counts(predictions)
        parse = parse or counts
    model = model_of(results) if results is not None else None
    data, split = inputs.get("data"), inputs.get("split")
    return ReportRow(label or folder.name, reader.benchmark, folder, predictions, results, model,
                     scored, parse, data=None if data is None else str(data),
                     split=None if split is None else str(split))  # fmt: skip


def mark_data(rows: Sequence[ReportRow]) -> None:
    """Give each run its data letter, per benchmark, when the benchmark's runs scored different
    data (`ReportRow.data_key`); runs of one benchmark and one data keep "" (nothing to mark)."""
    for bench in _benchmark_order(rows):
        mine = [r for r in rows if r.benchmark == bench]
        keys = list(dict.fromkeys(r.data_key for r in mine))
        for r in mine:
            r.data_group = _letter(keys.index(r.data_key)) if len(keys) > 1 else ""


def _letter(i: int) -> str:
    letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    return letters[i] if i < 26 else f"{letters[i // 26 - 1]}{letters[i % 26]}"


def _data_legend(rows: Sequence[ReportRow], bench: str) -> list[str]:
    """One line per data letter of a benchmark (none when its runs share their data)."""
    seen: dict[str, ReportRow] = {}
    for r in rows:
        if r.benchmark == bench and r.data_group and r.data_group not in seen:
            seen[r.data_group] = r
    lines = []
    for letter, r in seen.items():
        parts = [f"setting {r.scored.setting}" if r.scored.setting else None,
                 f"split {r.split}" if r.split else None,
                 f"{r.parse.items} items" if r.parse is not None else None]  # fmt: skip
        extra = ", ".join(p for p in parts if p)
        lines.append(f"- data {letter}: {_text(r.data or '?')}" + (f" ({_text(extra)})" if extra else ""))
    return lines


def _has_groups(rows: Sequence[ReportRow], bench: str | None = None) -> bool:
    return any(r.data_group for r in rows if bench is None or r.benchmark == bench)


DATA_NOTE = ("Runs of different data (another data file, split, setting or number of items) are "
             "marked with different letters in the *data* column: compare only runs of one "
             "letter.")  # fmt: skip


# --- the table -----------------------------------------------------------------------------------
BASE_COLUMNS = ("run", "model", "benchmark", "setting", "items", "unparsed", "no reply",
                "parse failures")  # fmt: skip


def _text(value: Any) -> str:
    r"""Text for Markdown and the terminal: control and format characters escaped (ESC as
    `\x1b`, a newline as `\n`, a bidi override as `\u202e`), `|` as `\|` (a table cell)."""
    out = []
    for ch in str(value):
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            out.append(ascii(ch)[1:-1])
        elif ch == "|":
            out.append("\\|")
        else:
            out.append(ch)
    return "".join(out)


def _fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return _text(value)


def _rate(p: ParseCounts | None) -> str | None:
    if p is None or p.rate is None:
        return None
    return f"{p.unparsed}/{p.items} ({100 * p.rate:.1f}%)"


def _benchmark_order(rows: Sequence[ReportRow]) -> list[str]:
    return list(dict.fromkeys(r.benchmark for r in rows))


def _paper_groups(rows: Sequence[ReportRow], benchmark: str) -> list[tuple[str | None, list, str]]:
    """The published rows that go beside a benchmark's runs: for each setting of its runs, that
    setting's rows (one set for settings whose rows are the same), as (setting(s), rows, source)."""
    groups: dict[str, tuple[list[str], list, str]] = {}
    for r in rows:
        if r.benchmark != benchmark or not r.scored.paper_rows:
            continue
        key = json.dumps([r.scored.paper_source, r.scored.paper_rows], default=str)
        settings, _, _ = groups.setdefault(key, ([], r.scored.paper_rows, r.scored.paper_source))
        if r.scored.setting is not None and r.scored.setting not in settings:
            settings.append(r.scored.setting)
    return [(", ".join(st) or None, paper, source) for st, paper, source in groups.values()]


def _runs_of(rows: Sequence[ReportRow], bench: str) -> list[ReportRow]:
    """A benchmark's runs, those of one data together (in the order given otherwise)."""
    mine = [r for r in rows if r.benchmark == bench]
    return sorted(mine, key=lambda r: r.data_group)


def table_rows(rows: Sequence[ReportRow]) -> list[dict[str, Any]]:
    """Flat rows, benchmark by benchmark: its runs, then the paper's rows."""
    readers = summary_readers()
    out: list[dict[str, Any]] = []
    for bench in _benchmark_order(rows):
        metrics = readers[bench].metrics
        for r in _runs_of(rows, bench):
            p = r.parse
            out.append({"kind": "run", "run": r.label, "model": r.model, "benchmark": bench,
                        "data": r.data_group or None,
                        "setting": r.scored.setting, "items": p and p.items,
                        "unparsed": p and p.unparsed, "no reply": p and p.without_reply,
                        "parse failures": _rate(p), "parse_failure_rate": p and p.rate,
                        **{f"{bench} {m}": r.scored.metrics.get(m) for m in metrics}})  # fmt: skip
        for setting, paper, source in _paper_groups(rows, bench):
            for model, values in paper:
                out.append({"kind": "paper", "run": "paper", "model": model, "benchmark": bench,
                            "setting": setting, "source": source,
                            **{f"{bench} {m}": values.get(m) for m in metrics}})  # fmt: skip
    return out


def markdown(rows: Sequence[ReportRow]) -> str:
    """The leaderboard: an overview, then one table per benchmark with the paper's rows."""
    readers = summary_readers()
    flat = table_rows(rows)
    marked = _has_groups(rows)
    data_col, data_rule = (" data |", "---|") if marked else ("", "")
    lines = ["# VLM leaderboard", "",
             "A reply that did not parse is counted, never guessed: *parse failures* = unreadable "
             "replies / items; *no reply* = failed requests and items without a results line "
             "(both are scored as wrong by the benchmark).", "",
             f"| run | model | benchmark |{data_col} setting | headline | items | unparsed | "
             "no reply | parse failures |",
             f"|---|---|---|{data_rule}---|---:|---:|---:|---:|---:|"]  # fmt: skip
    for r in rows:
        head = readers[r.benchmark].headline
        p = r.parse
        data = f" {r.data_group or '-'} |" if marked else ""
        lines.append(f"| {_text(r.label)} | {_fmt(r.model)} | {r.benchmark} |{data} "
                     f"{_fmt(r.scored.setting)} | "
                     f"{head} {_fmt(r.scored.metrics.get(head), readers[r.benchmark].digits)} | {_fmt(p and p.items)} | "
                     f"{_fmt(p and p.unparsed)} | {_fmt(p and p.without_reply)} | "
                     f"{_fmt(_rate(p))} |")  # fmt: skip
    if marked:
        lines += ["", DATA_NOTE, ""]
        for bench in _benchmark_order(rows):
            legend = _data_legend(rows, bench)
            if legend:
                lines += [f"{bench}:", *legend]
    for bench in _benchmark_order(rows):
        digits = readers[bench].digits
        shown = [x for x in flat if x["benchmark"] == bench]
        # a metric no row has (TRANCE's Basic columns beside Event runs) is left out
        metrics = [m for m in readers[bench].metrics
                   if any(x.get(f"{bench} {m}") is not None for x in shown)]  # fmt: skip
        grouped = _has_groups(rows, bench)
        cols = ["run", "model", *(["data"] if grouped else []), "setting",
                *(f"{bench} {m}" for m in metrics), "parse failures"]  # fmt: skip
        lines += ["", f"## {bench}", "",
                  "| " + " | ".join(c.removeprefix(f"{bench} ") for c in cols) + " |",
                  "|---|---|" + "---|" * grouped + "---|" + "---:|" * (len(metrics) + 1)]  # fmt: skip
        for row in shown:
            lines.append("| " + " | ".join(_fmt(row.get(c), digits) for c in cols) + " |")
        if grouped:
            lines += ["", DATA_NOTE, *_data_legend(rows, bench)]
        sources = list(dict.fromkeys(source for _, _, source in _paper_groups(rows, bench) if source))
        if sources:
            lines += ["", f"Paper rows: {'; '.join(_text(x) for x in sources)}."]
    return "\n".join(lines) + "\n"


def csv_text(rows: Sequence[ReportRow]) -> str:
    readers = summary_readers()
    metric_cols = [f"{b} {m}" for b in _benchmark_order(rows) for m in readers[b].metrics]
    cols = ["kind", "run", "model", "benchmark", "data", "setting", "items", "unparsed",
            "no reply", "parse_failure_rate", *metric_cols, "source"]  # fmt: skip
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(cols)
    for row in table_rows(rows):
        writer.writerow(["" if row.get(c) is None else row.get(c) for c in cols])
    return buf.getvalue()


def report_json(rows: Sequence[ReportRow]) -> dict[str, Any]:
    readers = summary_readers()
    benchmarks = {}
    for bench in _benchmark_order(rows):
        groups = _paper_groups(rows, bench)
        benchmarks[bench] = {
            "metrics": list(readers[bench].metrics),
            "headline": readers[bench].headline,
            "paper": {"source": "; ".join(dict.fromkeys(src for _, _, src in groups if src)),
                      "rows": [{"model": m, "setting": st, "metrics": v}
                               for st, paper, _ in groups for m, v in paper]},
        }  # fmt: skip
    return {"runs": [r.to_json() for r in rows], "benchmarks": benchmarks}


def plot(rows: Sequence[ReportRow], path: Path) -> Path:
    """One panel per benchmark: the headline metric of each run (the run's parse failures in its
    label, and its data letter where the runs scored different data) beside the paper's rows
    (grey)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    readers = summary_readers()
    benches = _benchmark_order(rows)
    papers = {b: [(st, m, v) for st, paper, _ in _paper_groups(rows, b) for m, v in paper]
              for b in benches}  # fmt: skip
    sizes = [sum(r.benchmark == b for r in rows) + len(papers[b]) for b in benches]
    fig = Figure(figsize=(8, 1.2 + 0.32 * sum(sizes) + 0.6 * len(benches)))
    axes = fig.subplots(len(benches), 1, squeeze=False,
                        gridspec_kw={"height_ratios": [max(s, 1) for s in sizes]})[:, 0]  # fmt: skip
    for ax, bench in zip(axes, benches, strict=True):
        head = readers[bench].headline
        labels, values, colors = [], [], []
        for r in _runs_of(rows, bench):
            fails = _rate(r.parse)
            data = f" [data {r.data_group}]" if r.data_group else ""
            labels.append(f"{_text(r.label)} ({_text(r.model or '?')}){data}"
                          + (f"\nunparsed {fails}" if fails else ""))  # fmt: skip
            values.append(r.scored.metrics.get(head))
            colors.append("tab:blue")
        several = len({st for st, _, _ in papers[bench]}) > 1
        for setting, model, vals in papers[bench]:
            labels.append(f"paper: {_text(model)}" + (f" ({setting})" if several else ""))
            values.append(vals.get(head))
            colors.append("0.7")
        ys = list(range(len(labels)))[::-1]
        ax.barh(ys, [v or 0.0 for v in values], color=colors)
        for y, v in zip(ys, values, strict=True):
            ax.text(v or 0.0, y, " " + _fmt(v, readers[bench].digits), va="center", fontsize=7)
        ax.set_yticks(ys, labels, fontsize=7)
        ax.margins(x=0.12)  # room for the value printed after the longest bar
        better = "higher" if readers[bench].higher_is_better else "lower"
        ax.set_title(f"{bench}: {head} ({better} is better)", fontsize=9)
        ax.tick_params(axis="x", labelsize=7)
    fig.tight_layout()
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    write_file_bytes(path, buffer.getvalue())
    return path


def write_report(rows: Sequence[ReportRow], out: Path) -> dict[str, Path]:
    """leaderboard.md, .csv, .json and .png in `out`."""
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "markdown": out / "leaderboard.md",
        "csv": out / "leaderboard.csv",
        "json": out / "leaderboard.json",
        "plot": out / "leaderboard.png",
    }
    write_text(files["markdown"], markdown(rows))
    write_text(files["csv"], csv_text(rows))
    write_json(files["json"], report_json(rows))
    plot(rows, files["plot"])
    return files


def report(runs: Sequence[str], out: Path, as_json: bool = False) -> int:
    """`tvr vlm report RUN... --out DIR`."""
    rows = []
    labels: set[str] = set()
    for text in runs:
        label, path = parse_run_argument(text)
        row = read_run(label, path)
        if row.label in labels:
            raise UserError(f"two runs are labelled {row.label!r}; label them: LABEL=PATH")
        labels.add(row.label)
        rows.append(row)
    mark_data(rows)
    files = write_report(rows, out)
    if as_json:
        json.dump(report_json(rows), sys.stdout, indent=2, ensure_ascii=False)
        print()
    else:
        sys.stdout.write(markdown(rows).split("\n## ", 1)[0])
        print(f"written: {', '.join(_text(p) for p in files.values())}")
    return 0
