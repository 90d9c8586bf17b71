"""Split statistics of VTT records, printed against the paper's Table 1 (and Fig. 2's lengths)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from tvr.vtt.data.records import VttRecord
from tvr.vtt.paper import TABLE1, TABLE1_SOURCE

#: the columns of Table 1: name -> which records it counts
GROUPS: dict[str, Any] = {
    "CrossTask": lambda r: r.ori == "cross",
    "COIN": lambda r: r.ori == "coin",
    "train": lambda r: r.split == "train",
    "val": lambda r: r.split == "val",
    "test": lambda r: r.split == "test",
    "total": lambda r: True,
}
#: the rows of Table 1
STATISTICS = ("categories", "topics", "samples", "states", "transformations",
              "unique_transformations")  # fmt: skip


def group_statistics(records: Iterable[VttRecord]) -> dict[str, int]:
    """Table 1's numbers for a set of records: distinct categories and topics, samples, states
    (N + 1 per sample), transformations (N per sample) and distinct descriptions (exact text)."""
    records = list(records)
    return {
        "categories": len({r.category for r in records}),
        "topics": len({r.topic for r in records}),
        "samples": len(records),
        "states": sum(r.n + 1 for r in records),
        "transformations": sum(r.n for r in records),
        "unique_transformations": len({s.label for r in records for s in r.steps}),
    }


def split_statistics(records: list[VttRecord]) -> dict[str, Any]:
    """The statistics of every Table 1 column, the paper's beside them, and the length
    distributions of Fig. 2 (transformations per sample, words per description)."""
    ours = {name: group_statistics(r for r in records if keep(r)) for name, keep in GROUPS.items()}
    per_sample = Counter(r.n for r in records)
    words = Counter(len(s.label.split()) for r in records for s in r.steps)
    n_descriptions = sum(words.values())
    return {
        "ours": ours,
        "paper": TABLE1,
        "paper_source": TABLE1_SOURCE,
        "transformations_per_sample": {str(k): per_sample[k] for k in sorted(per_sample)},
        "words_per_description": {str(k): words[k] for k in sorted(words)},
        "mean_words_per_description": (
            sum(k * v for k, v in words.items()) / n_descriptions if n_descriptions else None
        ),
    }


def stats_lines(stats: dict[str, Any]) -> list[str]:
    """The statistics as a text table, each cell `ours (paper)`; then the length distributions."""
    header = ["", *GROUPS]
    rows = [header]
    for stat in STATISTICS:
        cells = [stat]
        for group in GROUPS:
            cells.append(f"{stats['ours'][group][stat]:,} ({stats['paper'][group][stat]:,})")
        rows.append(cells)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    lines = [f"ours (paper: {stats['paper_source']})"]
    for r in rows:
        lines.append("  ".join([r[0].ljust(widths[0])] +
                               [c.rjust(w) for c, w in zip(r[1:], widths[1:], strict=True)]))  # fmt: skip
    per_sample = ", ".join(f"{k}: {v}" for k, v in stats["transformations_per_sample"].items())
    lines.append(f"transformations per sample (N: samples): {per_sample}")
    mean = stats["mean_words_per_description"]
    if mean is not None:
        words = stats["words_per_description"]
        shown = ", ".join(f"{k}: {v}" for k, v in words.items())
        lines.append(f"words per description (mean {mean:.2f}; words: descriptions): {shown}")
    return lines
