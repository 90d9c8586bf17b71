"""The report's figures: question types against the release, answer balance, an events timeline.

Drawn with matplotlib's Agg canvas, so no display is needed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from tvr.clevrer.data.annotations import Annotation
from tvr.clevrer.data.events import annotation_events, inside_view
from tvr.clevrer.vocab import SHOWN_FRAMES

_KIND_STYLE = {"in": ("#2a9d4b", ">"), "out": ("#c0392b", "<"), "collision": ("#1f4e9c", "*")}


def _save(fig: Figure, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=110, bbox_inches="tight")
    return path


def question_types_plot(stats: dict[str, Any], path: Path) -> Path:
    """Share of each question type: this set beside the release."""
    types = list(stats["types"])
    ours = [stats["types"][t]["share"] for t in types]
    release = [stats["types"][t]["release_share"] for t in types]
    fig = Figure(figsize=(6.4, 3.2))
    ax = fig.add_subplot()
    x = np.arange(len(types))
    ax.bar(x - 0.2, ours, 0.4, label=f"this set ({stats['questions']} questions)", color="#4c72b0")
    ax.bar(x + 0.2, release, 0.4, label="CLEVRER release (305,280)", color="#bbbbbb")
    ax.set_xticks(x, types)
    ax.set_ylabel("share of questions")
    ax.legend(frameon=False)
    return _save(fig, path)


def answer_balance_plot(stats: dict[str, Any], path: Path) -> Path:
    """Answer counts in every descriptive sub-type, one panel each."""
    subtypes = list(stats["descriptive_answers"])
    fig = Figure(figsize=(3.2 * max(1, len(subtypes)), 3.0))
    for i, sub in enumerate(subtypes):
        ax = fig.add_subplot(1, len(subtypes), i + 1)
        counts = stats["descriptive_answers"][sub]
        labels = sorted(counts, key=lambda a: (not a.isdigit(), int(a) if a.isdigit() else a))
        ax.bar(range(len(labels)), [counts[a] for a in labels], color="#55a868")
        ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right", fontsize=8)
        ax.set_title(sub, fontsize=10)
    fig.tight_layout()
    return _save(fig, path)


def timeline_plot(annotation: Annotation, path: Path) -> Path:
    """One video's objects over time: in-view spans, and in/out/collision events at their frames."""
    objects = annotation.object_property
    n = len(objects)
    frames = [f.frame_id for f in annotation.motion_trajectory]
    inside = inside_view(annotation)
    fig = Figure(figsize=(7.5, 0.45 * n + 1.0))
    ax = fig.add_subplot()
    for i in range(n):
        ax.fill_between(frames, i - 0.25, i + 0.25, where=inside[:, i], color="#dddddd", step="mid")
    for e in annotation_events(annotation):
        color, marker = _KIND_STYLE[e.kind]
        for o in e.objects:
            ax.plot(e.frame, o, marker=marker, color=color, markersize=9, linestyle="none")
        if e.kind == "collision":
            ax.plot([e.frame, e.frame], list(e.objects), color=color, linewidth=1)
    ax.axvline(SHOWN_FRAMES - 0.5, color="#888888", linestyle="--", linewidth=1)
    ax.set_yticks(range(n), [f"{o.object_id}: {o.color} {o.material} {o.shape}" for o in objects])
    ax.set_xlabel("frame (dashed: end of the shown video; later frames are the unseen future)")
    ax.set_ylim(-0.7, n - 0.3)
    ax.invert_yaxis()
    handles = [
        ax.plot([], [], marker=m, color=c, linestyle="none")[0] for c, m in _KIND_STYLE.values()
    ]
    ax.legend(handles, list(_KIND_STYLE), ncols=3, frameon=False, fontsize=8,
              loc="lower center", bbox_to_anchor=(0.5, 1.0))
    ax.set_title(annotation.video_filename, fontsize=10, pad=22)
    return _save(fig, path)
