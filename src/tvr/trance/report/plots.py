"""Bar charts of the balanced factors, laid out like Fig. 11 of the journal paper.

One PNG per factor (attribute values, visible objects, steps, object index, move type) and one
combined figure: attribute values and visible objects on the top row (sampling initial scenes),
transformation length, object index and move type on the bottom row (sampling transformations).
Drawn with matplotlib's Agg canvas, so no display is needed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tvr.trance.world import vocab

_ATTR_SHADES = {"material": "#8c8c8c", "shape": "#5b7fa6", "size": "#9c7b55"}
_TITLES = {
    "attribute_values": "attribute values (initial scenes)",
    "visible_objects": "visible objects (initial scenes)",
    "steps": "transformation length (steps)",
    "object_index": "transformed object index",
    "move_type": "move type (position steps)",
}
_XLABELS = {
    "attribute_values": "",
    "visible_objects": "number of visible objects",
    "steps": "number of steps",
    "object_index": "object index",
    "move_type": "move type",
}


def _bars(
    ax: Axes,
    labels: list[str],
    counts: list[int],
    colors: Any = "#4c72b0",
    groups: list[int] | None = None,
) -> None:
    """Bars with a dashed mean line (one per group of bars when `groups` gives their sizes)."""
    x = np.arange(len(counts))
    ax.bar(x, counts, color=colors, edgecolor="#333333", linewidth=0.5)
    ax.set_xticks(x, labels)
    if counts and sum(counts):
        start = 0
        for k, size in enumerate(groups or [len(counts)]):
            mean = float(np.mean(counts[start : start + size]))
            label = (
                f"mean {mean:,.1f}"
                if groups is None
                else ("mean per attribute" if k == 0 else None)
            )
            ax.hlines(
                mean,
                start - 0.45,
                start + size - 0.55,
                colors="#d62728",
                linestyles="--",
                linewidth=0.9,
                label=label,
            )
            start += size
        ax.legend(loc="lower right", fontsize=7, framealpha=0.8)
        top = max(counts)
        ax.set_ylim(0, top * 1.15 if top else 1)
        if len(counts) <= 12:
            for xi, c in zip(x, counts, strict=True):
                ax.text(xi, c, f"{c:,}", ha="center", va="bottom", fontsize=7)
    ax.set_ylabel("count")
    ax.grid(axis="y", alpha=0.3)
    ax.set_axisbelow(True)


def _draw(ax: Axes, factor: str, stats: dict[str, Any]) -> None:
    if factor == "attribute_values":
        labels, counts, colors = [], [], []
        for attr, row in stats["attribute_values"].items():
            for name, c in row.items():
                labels.append(name)
                counts.append(c)
                if attr == "color":
                    colors.append(np.array(vocab.COLOR_RGB[name]) / 255.0)
                else:
                    colors.append(_ATTR_SHADES[attr])
        groups = [len(row) for row in stats["attribute_values"].values()]
        _bars(ax, labels, counts, colors, groups)
        ax.tick_params(axis="x", labelrotation=60, labelsize=7)
        # attribute names under their groups
        start = 0
        for attr, row in stats["attribute_values"].items():
            mid = start + (len(row) - 1) / 2
            ax.text(mid, -0.27, attr, transform=ax.get_xaxis_transform(), ha="center", fontsize=8)
            if start:
                ax.axvline(start - 0.5, color="#999999", linewidth=0.6)
            start += len(row)
    else:
        row = stats[factor]
        _bars(ax, list(row), list(row.values()))
    ax.set_title(_TITLES[factor], fontsize=9)
    ax.set_xlabel(_XLABELS[factor], fontsize=8)


def _save(fig: Figure, path: Path) -> Path:
    FigureCanvasAgg(fig)
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=100)
    return path


def plot_balance(stats: dict[str, Any], out: Path, title: str = "") -> dict[str, Path]:
    """Write one PNG per factor and `balance.png` (Fig. 11 layout) into `out`; returns
    {factor or "combined": path}."""
    paths: dict[str, Path] = {}
    for factor in _TITLES:
        wide = factor == "attribute_values"
        fig = Figure(figsize=(8 if wide else 5, 3.6), layout="constrained")
        _draw(fig.add_subplot(), factor, stats)
        paths[factor] = _save(fig, out / f"{factor}.png")
    fig = Figure(figsize=(15, 8), layout="constrained")
    grid = fig.add_gridspec(2, 6)
    _draw(fig.add_subplot(grid[0, :4]), "attribute_values", stats)
    _draw(fig.add_subplot(grid[0, 4:]), "visible_objects", stats)
    _draw(fig.add_subplot(grid[1, :2]), "steps", stats)
    _draw(fig.add_subplot(grid[1, 2:4]), "object_index", stats)
    _draw(fig.add_subplot(grid[1, 4:]), "move_type", stats)
    if title:
        fig.suptitle(title, fontsize=11)
    paths["combined"] = _save(fig, out / "balance.png")
    return paths
