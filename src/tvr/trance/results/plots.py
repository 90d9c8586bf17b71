"""The plots of `tvr results` (matplotlib, Agg backend): Fig. 7, Fig. 8 and learning curves.

Ours are solid lines / plain bars; the paper's numbers (only where its text gives them) are
dashed lines in the same colour as our run of that model, grey when we have none.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from tvr.core.extras import missing_extra
from tvr.results.curves import read_metrics_csv  # the shared reader (was defined here)
from tvr.results.figures import save_figure as _save  # the shared atomic PNG writer
from tvr.trance import paper
from tvr.trance.results.tables import display_name

if TYPE_CHECKING:
    from tvr.results.tables import ResultEntry, ResultTable


def _pyplot():
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as err:
        raise missing_extra(err, "the plots (or pass --no-plots)") from None
    return plt


def fig7_plot(table: ResultTable, path: Path) -> Path:
    """Acc per number of steps on Event: one line per model, the paper's dashed."""
    plt = _pyplot()
    steps = [1, 2, 3, 4]
    cols = table.columns[1:]
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    colors: dict[str, Any] = {}
    cycle = iter(plt.rcParams["axes.prop_cycle"].by_key()["color"] * 10)
    for row in table.rows:
        if row["source"] != "ours":
            continue
        acc = [row[c][0] for c in cols]
        (line,) = ax.plot(steps, acc, marker="o", color=next(cycle), label=row["Model"])
        if row.get("model"):
            colors.setdefault(row["model"], line.get_color())
    for row in table.rows:
        if row["source"] != "paper":
            continue
        acc = [row[c][0] for c in cols]
        color = colors.get(row.get("model"), "0.45")
        ax.plot(steps, acc, ls="--", marker="s", mfc="none", color=color, label=row["Model"])
    ax.set_xticks(steps)
    ax.set_xlabel("number of steps")
    ax.set_ylabel("Acc")
    ax.set_ylim(-0.03, 1.03)
    ax.grid(alpha=0.3)
    ax.set_title("Acc per number of steps (Event)")
    ax.legend(fontsize=8)
    return _save(fig, path)


def fig8_plot(table: ResultTable, path: Path) -> Path:
    """Acc per final view on View: a group of Center/Left/Right bars per model."""
    plt = _pyplot()
    rows = [r for r in table.rows if r["source"] == "ours"]
    views = table.columns[1:]
    width = 0.8 / len(views)
    fig, ax = plt.subplots(figsize=(max(5.0, 1.4 * len(rows) + 2), 4.2))
    for j, v in enumerate(views):
        xs = [i + (j - (len(views) - 1) / 2) * width for i in range(len(rows))]
        acc = [r[v][0] or 0.0 for r in rows]
        bars = ax.bar(xs, acc, width, label=v)
        for bar, value in zip(bars, acc, strict=True):
            ax.text(bar.get_x() + bar.get_width() / 2, value + 0.01, f"{value:.2f}",
                    ha="center", fontsize=7)  # fmt: skip
    ax.set_xticks(range(len(rows)), [r["Model"] for r in rows])
    ax.set_ylabel("Acc")
    ax.set_ylim(0, 1.08)
    ax.set_title("Acc per final view (View)")
    ax.legend(title="final view", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, path)


def learning_curves_plot(
    entries: list[ResultEntry], path: Path, compare_paper: bool = True
) -> Path:
    """Train loss and validation Acc per epoch of every run with a metrics.csv; the paper's
    test Acc of the same model and setting (Table 3) as a dotted line."""
    plt = _pyplot()
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(11, 4.2))
    cycle = iter(plt.rcParams["axes.prop_cycle"].by_key()["color"] * 10)
    drawn: set[tuple[str | None, str]] = set()
    for e in entries:
        rows = read_metrics_csv(e.metrics_csv)
        color = next(cycle)
        name = f"{e.label} ({e.setting})"
        loss = [(r["epoch"] + 1, r["train/loss"]) for r in rows if "train/loss" in r]
        acc = [(r["epoch"] + 1, r["val/acc"]) for r in rows if "val/acc" in r]
        if loss:
            ax_loss.plot(*zip(*loss, strict=True), marker=".", color=color, label=name)
        if acc:
            ax_acc.plot(*zip(*acc, strict=True), marker=".", color=color, label=name)
        published = paper.paper_metrics(e.model or "", e.setting) if compare_paper else None
        if published and e.reward is None and (e.model, e.setting) not in drawn:
            drawn.add((e.model, e.setting))
            what = f"{display_name(e.model)} {e.setting}"
            ax_acc.axhline(published["Acc"], ls=":", color=color,
                           label=f"paper: {what} test Acc {published['Acc']:.3f}")  # fmt: skip
    ax_loss.set_xlabel("epoch")
    ax_loss.set_ylabel("train loss")
    ax_loss.set_title("training loss")
    ax_acc.set_xlabel("epoch")
    ax_acc.set_ylabel("validation Acc")
    ax_acc.set_ylim(-0.03, 1.03)
    ax_acc.set_title("validation Acc")
    from matplotlib.ticker import MaxNLocator

    for ax in (ax_loss, ax_acc):
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    return _save(fig, path)
