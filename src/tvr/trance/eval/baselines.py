"""Baselines that show what the metrics mean: the oracle, the reversed-order oracle, and random.

Each returns prediction records in the evaluation format
`{"id": ..., "steps": [{"obj": 3, "value": "color.red"}, ...]}` (plus "view" in View).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tvr.trance.choices import BASELINES
from tvr.trance.data.sample import Sample
from tvr.trance.world import vocab
from tvr.trance.world.vocab import VIEWS


def _rows(samples: list[Sample], setting: str) -> list[tuple[Sample, str | None]]:
    rows: list[tuple[Sample, str | None]] = []
    for s in samples:
        if setting == "basic" and len(s.steps) != 1:
            continue
        if setting == "view":
            views = (s.extra["view"],) if isinstance(s.extra.get("view"), str) else VIEWS
            rows.extend((s, v) for v in views)
        else:
            rows.append((s, None))
    return rows


def _record(sample: Sample, view: str | None, steps: list[tuple[int, int]]) -> dict[str, Any]:
    rec: dict[str, Any] = {"id": sample.id}
    if view is not None:
        rec["view"] = view
    rec["steps"] = [{"obj": int(o), "value": vocab.VALUES[v]} for o, v in steps]
    return rec


def reversed_keeping_final(steps: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The steps in reverse order, except that steps setting the same colour, material, shape or
    size of one object keep their relative order, so the final state stays the same (position
    moves add up in any order)."""
    out = steps[::-1]
    groups: dict[tuple[int, str], list[int]] = {}
    for slot, (obj, value) in enumerate(out):
        attr = vocab.value_attribute(value)
        if attr != "position":
            groups.setdefault((obj, attr), []).append(slot)
    for slots in groups.values():
        if len(slots) > 1:
            members = [out[s] for s in slots][::-1]  # back to their original order
            for s, step in zip(slots, members, strict=True):
                out[s] = step
    return out


def predict(name: str, samples: list[Sample], setting: str, seed: int = 0) -> list[dict[str, Any]]:
    """Predictions of baseline `name` for every (sample, view) the setting scores."""
    if name not in BASELINES:
        raise ValueError(f"unknown baseline {name!r}; choose from {BASELINES}")
    rng = np.random.default_rng(seed)
    out = []
    for sample, view in _rows(samples, setting):
        ref = [(s.obj, s.value) for s in sample.steps]
        if name == "oracle":
            steps = ref
        elif name == "reversed":
            steps = reversed_keeping_final(ref)
        else:
            k = 1 if setting == "basic" else int(rng.integers(1, vocab.MAX_STEPS + 1))
            steps = [
                (int(rng.integers(vocab.NUM_OBJECTS)), int(rng.integers(vocab.NUM_VALUES)))
                for _ in range(k)
            ]
        out.append(_record(sample, view, steps))
    return out
