"""The seeded subset of a split that raters and the LLM judge see: one sample per topic first.

As the paper chose its 200 rated test samples ("one sample from each topic and two additional
samples"): with a size of at least the number of topics, one sample of each topic, then further
samples at random; with fewer, that many of the per-topic picks. The same records, size and seed
give the same subset, listed in id order.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from tvr.core.errors import UserError
from tvr.vtt.data.records import VttRecord


def choose_subset(records: Sequence[VttRecord], size: int | None, seed: int = 0) -> list[VttRecord]:
    """`size` records of `records` (all of them if `size` is None), in id order."""
    pool = sorted(records, key=lambda r: r.id)
    if size is None or size >= len(pool):
        return pool
    if size < 1:
        raise UserError(f"the subset size must be at least 1, got {size}")
    rng = random.Random(seed)
    by_topic: dict[str, list[VttRecord]] = {}
    for record in pool:
        by_topic.setdefault(record.topic, []).append(record)
    picks = [rng.choice(by_topic[topic]) for topic in sorted(by_topic)]
    if size <= len(picks):
        chosen = rng.sample(picks, size)
    else:
        taken = {r.id for r in picks}
        rest = [r for r in pool if r.id not in taken]
        chosen = picks + rng.sample(rest, size - len(picks))
    return sorted(chosen, key=lambda r: r.id)
