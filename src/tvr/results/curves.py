"""Learning curves of any training run: its metrics.csv read with located errors, drawn and tabled.

Every benchmark's training writes RUN/metrics.csv through `tvr.training.runs.fit_run`: one row
per finished epoch (`epoch` counted from 0, `step`, `lr`, `batches`, then the logged metrics such
as `train/loss`, `val/acc`, `val/emr`, `val/cider`, `val/loss`). `write_curves` draws one panel per
metric with one line per run against the epoch counted from 1 (`curves.png`), and writes the
per-epoch values side by side (`curves.md`, `curves.csv`) and what it read (`curves.json`).

A run's *monitored* metric (the one that picked its best.ckpt) is marked at its best epoch when
the run's config.json names it (`monitor`, and `mode`: "max" or "min"), or when the caller names
one for every run (`tvr curves --monitor`); otherwise no epoch is marked.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tvr.core.errors import InputError, UserError
from tvr.core.extras import missing_extra
from tvr.core.jsonl import write_json, write_text
from tvr.results.tables import ResultTable

#: metrics.csv columns that count epochs, steps and batches or give the lr: never drawn by default
BOOKKEEPING_COLUMNS = ("epoch", "step", "lr", "batches")
MODES = ("max", "min")


def _number(value: Any) -> str:
    """A value as the tables print it: six significant digits."""
    return f"{value:.6g}" if isinstance(value, float) else str(value)


@dataclass(frozen=True)
class Monitor:
    """The validation metric that picks a run's best epoch, and whether higher or lower is better."""

    metric: str
    mode: str = "max"

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise UserError(f"monitor {self.metric}: mode must be max or min, not {self.mode!r}")

    @classmethod
    def named(cls, metric: str, mode: str | None = None) -> Monitor:
        """`metric` with `mode`, or when None "min" for a loss and "max" for anything else."""
        return cls(metric, mode or ("min" if metric.endswith("loss") else "max"))


@dataclass(frozen=True)
class RunCurves:
    """One run's metrics.csv: its label, its columns in file order, one row of numbers per
    epoch (`epoch` as written, from 0; empty cells left out) and its monitored metric."""

    label: str
    metrics_csv: Path
    columns: tuple[str, ...]
    rows: tuple[dict[str, float], ...]
    monitor: Monitor | None = None

    def series(self, metric: str) -> list[tuple[int, float]]:
        """(epoch counted from 1, value) of each epoch that has `metric`."""
        return [(int(r["epoch"]) + 1, r[metric]) for r in self.rows if metric in r]

    @property
    def metrics(self) -> list[str]:
        """The columns that hold a number in at least one epoch."""
        return [c for c in self.columns if any(c in r for r in self.rows)]

    def best(self) -> tuple[int, float] | None:
        """(epoch counted from 1, value) of the monitored metric's best epoch (the first of
        equals, NaN never best), or None without a monitor or values."""
        if self.monitor is None:
            return None
        found = [(e, v) for e, v in self.series(self.monitor.metric) if not math.isnan(v)]
        if not found:
            return None
        sign = 1.0 if self.monitor.mode == "max" else -1.0
        return max(found, key=lambda ev: (sign * ev[1], -ev[0]))


def _read_rows(path: Path) -> tuple[list[str], list[dict[str, float]]]:
    """The header and the numeric rows of a metrics.csv; InputError naming the line and column
    of anything that is not one (a missing epoch, a word where a number goes, a short row)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(path, None, None, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, None, None, "a folder, not a metrics.csv") from None
    except UnicodeDecodeError:
        raise InputError(path, None, None, "not a text file (expected a metrics.csv)") from None
    reader = csv.reader(text.splitlines())
    header = next(reader, None)
    if not header:
        raise InputError(path, 1, None, "empty: expected a header line naming 'epoch'")
    header = [h.strip() for h in header]
    for i, name in enumerate(header):
        if not name:
            raise InputError(path, 1, None, f"column {i + 1} has no name")
        if name in header[:i]:
            raise InputError(path, 1, name, "the column appears twice")
    if "epoch" not in header:
        raise InputError(path, 1, "epoch", "no such column: not the metrics.csv of a training run")
    rows: list[dict[str, float]] = []
    seen: dict[int, int] = {}
    for cells in reader:
        line = reader.line_num
        if not cells:
            continue
        if len(cells) != len(header):
            raise InputError(path, line, None, f"{len(cells)} cells, the header has {len(header)}")
        row: dict[str, float] = {}
        for name, cell in zip(header, cells, strict=True):
            if not cell.strip():
                continue
            try:
                row[name] = float(cell)
            except ValueError:
                raise InputError(path, line, name, f"not a number: {cell.strip()!r}") from None
        epoch = row.get("epoch")
        if epoch is None or epoch < 0 or not float(epoch).is_integer():
            raise InputError(path, line, "epoch", "expected the epoch as a whole number from 0")
        if int(epoch) in seen:
            raise InputError(
                path,
                line,
                "epoch",
                f"epoch {int(epoch)} appears twice (also line {seen[int(epoch)]})",
            )
        seen[int(epoch)] = line
        rows.append(row)
    rows.sort(key=lambda r: r["epoch"])
    return header, rows


def read_metrics_csv(path: Path) -> list[dict[str, float]]:
    """The rows of a run's metrics.csv as numbers (empty cells left out), in epoch order;
    InputError naming the file, line and column of a malformed one."""
    return _read_rows(Path(path))[1]


def split_label(spec: str) -> tuple[str | None, Path]:
    """`LABEL=PATH` -> (LABEL, PATH); a plain path (even one holding "=") -> (None, PATH)."""
    if "=" in spec and not Path(spec).exists():
        label, _, path = spec.partition("=")
        if label.strip() and path.strip():
            return label.strip(), Path(path.strip())
    return None, Path(spec)


def _locate(path: Path) -> Path:
    """The metrics.csv of RUN: a run folder's, or RUN itself when it is a file."""
    if path.is_dir():
        found = path / "metrics.csv"
        if not found.is_file():
            raise UserError(
                f"{path}: no metrics.csv in this folder (a run writes it when its first epoch ends)"
            )
        return found
    if not path.exists():
        raise UserError(f"{path}: no such run folder or metrics.csv")
    return path


def config_monitor(run_dir: Path) -> Monitor | None:
    """The monitored metric that `run_dir`/config.json names (`monitor`, `mode`), if any."""
    path = run_dir / "config.json"
    if not path.is_file():
        return None
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise InputError(path, None, None, f"not valid JSON ({err})") from None
    metric = config.get("monitor") if isinstance(config, dict) else None
    if not isinstance(metric, str) or not metric:
        return None
    mode = config.get("mode")
    if mode is not None and mode not in MODES:
        raise InputError(path, None, "mode", f"expected max or min, not {mode!r}")
    return Monitor.named(metric, mode)


def load_run(label: str | None, path: Path, monitor: Monitor | None = None) -> RunCurves:
    """The curves of RUN `path` (a run folder or its metrics.csv), labelled `label` (default:
    the run folder's name); monitored by `monitor`, else by what its config.json names."""
    metrics_csv = _locate(Path(path))
    run_dir = metrics_csv.parent
    columns, rows = _read_rows(metrics_csv)
    if not rows:
        raise InputError(metrics_csv, None, None, "no epoch rows: no epoch of this run finished")
    name = label or (run_dir.resolve().name or str(run_dir))
    return RunCurves(
        name, metrics_csv, tuple(columns), tuple(rows), monitor or config_monitor(run_dir)
    )


#: a RUN as the functions below take it: `[LABEL=]PATH`, (label or None, path), or read already
RunSpec = RunCurves | str | tuple[str | None, str | Path]


def load_runs(runs: Sequence[RunSpec], monitor: Monitor | None = None) -> list[RunCurves]:
    """The curves of each RUN (`[LABEL=]PATH`, (label, path) or read already); UserError if two
    share a label."""
    loaded = []
    for spec in runs:
        if isinstance(spec, RunCurves):
            loaded.append(spec)
            continue
        label, path = split_label(spec) if isinstance(spec, str) else (spec[0], Path(spec[1]))
        loaded.append(load_run(label, path, monitor))
    labels = [r.label for r in loaded]
    twice = sorted({x for x in labels if labels.count(x) > 1})
    if twice:
        raise UserError(
            f"two runs are labelled {twice[0]!r}: name them apart as LABEL=RUN (e.g. a={twice[0]})"
        )
    return loaded


def choose_metrics(runs: Sequence[RunCurves], metrics: Sequence[str] | None = None) -> list[str]:
    """The metrics to draw: `metrics` (each held by at least one run), else every column a run
    holds except epoch/step/lr/batches: train/loss, the other train/ ones, then the rest.
    UserError listing the available ones."""
    available: list[str] = []
    for run in runs:
        available += [m for m in run.metrics if m not in available]
    drawable = [m for m in available if m not in BOOKKEEPING_COLUMNS]
    if metrics:
        missing = [m for m in metrics if m not in available]
        if missing:
            raise UserError(
                f"no run has the metric {missing[0]!r}; available: {', '.join(available)}"
            )
        return list(dict.fromkeys(metrics))
    if not drawable:
        raise UserError(f"no metric to draw in {', '.join(str(r.metrics_csv) for r in runs)}")
    # train/loss, the other training metrics, then validation and the rest (each in file order)
    return sorted(drawable, key=lambda m: (m != "train/loss", not m.startswith("train/")))


def _best_label(run: RunCurves) -> str:
    best = run.best()
    if best is None or run.monitor is None:
        return run.label
    return f"{run.label} (best {run.monitor.metric} {_number(best[1])} at epoch {best[0]})"


def plot_curves(
    runs: Sequence[RunSpec],
    metrics: Sequence[str] | None,
    out: Path,
    monitor: Monitor | None = None,
    columns: int = 3,
) -> Path:
    """Draw one panel per metric (see `choose_metrics`), one line per run against the epoch
    counted from 1, each run's best epoch of its monitored metric marked (a dotted line in every
    panel, a star on the monitored metric), to the PNG `out` (atomically, matplotlib's Agg)."""
    try:
        from matplotlib import rcParams
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
        from matplotlib.ticker import MaxNLocator
    except ImportError as err:
        raise missing_extra(err, "the curves") from None
    from tvr.results.figures import save_figure

    loaded = load_runs(runs, monitor)
    chosen = choose_metrics(loaded, metrics)
    ncols = max(1, min(columns, len(chosen)))
    nrows = math.ceil(len(chosen) / ncols)
    fig = Figure(figsize=(4.6 * ncols, 3.3 * nrows + 0.35 * (1 + len(loaded) // 3)),
                 layout="constrained")  # fmt: skip
    FigureCanvasAgg(fig)
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    colors = rcParams["axes.prop_cycle"].by_key()["color"]
    styles = ("-", "--", "-.", ":")
    handles: dict[str, Any] = {}
    for ax, metric in zip(axes, chosen, strict=False):
        for i, run in enumerate(loaded):
            color, style = colors[i % len(colors)], styles[(i // len(colors)) % len(styles)]
            points = run.series(metric)
            if not points:
                continue
            best = run.best()
            if best is not None:
                ax.axvline(best[0], color=color, ls=":", lw=1.0, alpha=0.6)
            xs, ys = zip(*points, strict=True)
            (line,) = ax.plot(xs, ys, ls=style, marker=".", color=color)
            handles.setdefault(run.label, line)
            if best is not None and run.monitor is not None and run.monitor.metric == metric:
                ax.plot([best[0]], [best[1]], marker="*", ms=13, color=color, mec="black", mew=0.6)
        ax.set_title(metric, fontsize=10)
        ax.set_xlabel("epoch")
        ax.set_ylabel(metric)
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
    for ax in axes[len(chosen) :]:
        ax.set_visible(False)
    labelled = [(handles[r.label], _best_label(r)) for r in loaded if r.label in handles]
    fig.legend([h for h, _ in labelled], [t for _, t in labelled], loc="outside upper center",
               ncols=min(3, len(labelled)), fontsize=9)  # fmt: skip
    return save_figure(fig, Path(out))


def _epochs(runs: Sequence[RunCurves]) -> list[int]:
    return sorted({int(r["epoch"]) + 1 for run in runs for r in run.rows})


def metric_table(runs: Sequence[RunCurves], metric: str) -> ResultTable:
    """`metric` per epoch (from 1) that any run has it, one column per run ("-" where it has
    none)."""
    table = ResultTable(name=metric, title=metric, columns=["epoch", *(r.label for r in runs)])
    values = {r.label: dict(r.series(metric)) for r in runs}
    for epoch in sorted({e for v in values.values() for e in v}):
        row: dict[str, Any] = {"epoch": epoch}
        row.update({label: v.get(epoch) for label, v in values.items()})
        table.rows.append(row)
    table.formats = {r.label: _number for r in runs}
    marked = [f"{r.label} {_number(b[1])} at epoch {b[0]}" for r in runs
              if r.monitor and r.monitor.metric == metric and (b := r.best())]  # fmt: skip
    if marked:
        table.notes.append(f"Best epoch (the run's monitored metric): {'; '.join(marked)}.")
    return table


def summary_table(runs: Sequence[RunCurves]) -> ResultTable:
    """One row per run: its metrics.csv, epochs, monitored metric and best epoch."""
    table = ResultTable(
        name="curves-runs",
        title="Runs",
        columns=["Run", "metrics.csv", "Epochs", "Monitor", "Best epoch", "Best value"],
        formats={"Best value": _number},
    )
    for r in runs:
        best = r.best()
        monitor = f"{r.monitor.metric} ({r.monitor.mode})" if r.monitor else None
        table.rows.append({
            "Run": r.label, "metrics.csv": str(r.metrics_csv), "Epochs": len(r.rows),
            "Monitor": monitor, "Best epoch": best[0] if best else None,
            "Best value": best[1] if best else None,
        })  # fmt: skip
    return table


def wide_table(runs: Sequence[RunCurves], metrics: Sequence[str]) -> ResultTable:
    """Every metric of every run per epoch (from 1), side by side: columns `LABEL: METRIC`."""
    columns = ["epoch"] + [f"{r.label}: {m}" for m in metrics for r in runs]
    table = ResultTable(name="curves", title="Learning curves", columns=columns)
    series = {(r.label, m): dict(r.series(m)) for m in metrics for r in runs}
    for epoch in _epochs(runs):
        row: dict[str, Any] = {"epoch": epoch}
        row.update({f"{label}: {m}": v.get(epoch) for (label, m), v in series.items()})
        table.rows.append(row)
    return table


@dataclass
class CurvesReport:
    """What `write_curves` wrote: the runs, the metrics drawn, the files and the Markdown."""

    runs: list[RunCurves]
    metrics: list[str]
    files: list[Path] = field(default_factory=list)
    markdown: str = ""


def write_curves(
    runs: Sequence[RunSpec],
    out: Path,
    metrics: Sequence[str] | None = None,
    monitor: Monitor | None = None,
    plot: bool = True,
) -> CurvesReport:
    """Write curves.png (see `plot_curves`), curves.md (the runs, then one table per metric),
    curves.csv (every value side by side) and curves.json (what was read) into folder `out`."""
    out = Path(out)
    loaded = load_runs(runs, monitor)
    chosen = choose_metrics(loaded, metrics)
    report = CurvesReport(loaded, chosen)
    if plot:
        report.files.append(plot_curves(loaded, chosen, out / "curves.png"))
    summary = summary_table(loaded)
    parts = ["# Learning curves", "", summary.to_markdown()]
    if plot:
        parts.append("![learning curves](curves.png)\n")
    parts += [metric_table(loaded, m).to_markdown() for m in chosen]
    report.markdown = "\n".join(parts)
    write_text(out / "curves.md", report.markdown)
    write_text(out / "curves.csv", wide_table(loaded, chosen).to_csv())
    write_json(out / "curves.json", {
        "metrics": chosen,
        "runs": [{"label": r.label, "metrics_csv": str(r.metrics_csv), "epochs": len(r.rows),
                  "monitor": r.monitor.metric if r.monitor else None,
                  "mode": r.monitor.mode if r.monitor else None,
                  "best_epoch": b[0] if (b := r.best()) else None,
                  "best_value": b[1] if b else None} for r in loaded],
    })  # fmt: skip
    report.files += [out / "curves.md", out / "curves.csv", out / "curves.json"]
    return report
