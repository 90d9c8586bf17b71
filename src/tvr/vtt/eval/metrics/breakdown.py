"""Means of per-description scores over groups of descriptions (Fig. 3: by the number of
transformations of their sample, and by their sample's category)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tvr.vtt.eval.metrics.suite import MetricScores


def breakdown(
    keys: Sequence[str], samples: Sequence[str], metrics: dict[str, MetricScores]
) -> dict[str, dict[str, Any]]:
    """key -> {"samples", "descriptions", and each metric's mean (None if it did not run)} over
    the descriptions whose key is `key` (keys[i] and samples[i] belong to description i). Every
    score is the one computed over the whole split (CIDEr-D keeps the split's frequencies)."""
    groups: dict[str, list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    out: dict[str, dict[str, Any]] = {}
    for key, members in groups.items():
        row: dict[str, Any] = {
            "samples": len({samples[i] for i in members}),
            "descriptions": len(members),
        }
        for name, metric in metrics.items():
            scores = metric.scores
            row[name] = None if scores is None else sum(scores[i] for i in members) / len(members)
        out[key] = row
    return out
