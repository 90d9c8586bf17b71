"""VTT's random baseline: each transformation gets a training description drawn at random."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError
from tvr.vtt.data.layout import records_file
from tvr.vtt.data.records import read_records


def random_predictions(data: str | Path, split: str = "test", seed: int = 0) -> dict[str, list[str]]:
    """id -> one description per transformation of each `split` sample, each drawn uniformly
    (with replacement) from the distinct descriptions of the train split, in first-seen order;
    seeded, so the same data and seed give the same file."""
    records = read_records(records_file(data))
    pool = list(dict.fromkeys(label for r in records if r.split == "train" for label in r.labels))
    if not pool:
        raise UserError(f"{data}: no train split to draw descriptions from")
    rng = random.Random(seed)
    return {r.id: [rng.choice(pool) for _ in r.steps] for r in records if r.split == split}


def random_settings(data: str | Path, split: str, seed: int) -> dict[str, Any]:
    """The settings saved beside the predictions."""
    return {"baseline": "random", "data": str(data), "split": split, "seed": seed}
