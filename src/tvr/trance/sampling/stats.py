"""The balance statistics of a sample set: Fig. 11's factors, Table 8's n-grams, order sensitivity.

Every balanced factor of the journal paper's appendix A (Fig. 11), the n-gram table of its
Table 8 and the share of order-sensitive samples.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from tvr.trance.data.sample import Sample
from tvr.trance.sampling.balance import BalanceCounts, sample_factors
from tvr.trance.world import simulator as world
from tvr.trance.world import vocab


def order_sensitive_flags(samples: Sequence[Sample]) -> tuple[list[bool], int]:
    """Each sample's stored `order_sensitive` flag; flags that are missing are computed with the
    simulator (`tvr.trance.eval.world.order_sensitive_batch`). Returns (flags, number computed)."""
    flags = [s.order_sensitive for s in samples]
    missing = [i for i, f in enumerate(flags) if f is None]
    if missing:
        init = np.stack([samples[i].initial_array for i in missing])
        objs = np.full((len(missing), vocab.MAX_STEPS), -1, dtype=np.int64)
        values = np.full((len(missing), vocab.MAX_STEPS), world.PAD_VALUE, dtype=np.int64)
        for r, i in enumerate(missing):
            for k, st in enumerate(samples[i].steps):
                objs[r, k], values[r, k] = st.obj, st.value
        computed = world.order_sensitive_batch(init, objs, values)
        for r, i in enumerate(missing):
            flags[i] = bool(computed[r])
    return [bool(f) for f in flags], len(missing)


def count_factors(samples: Sequence[Sample]) -> BalanceCounts:
    """The balance counts of a sample set."""
    counts = BalanceCounts()
    for s in samples:
        counts.record(sample_factors(s))
    return counts


def merge_counts(parts: Sequence[BalanceCounts]) -> BalanceCounts:
    """The counts of the union of disjoint sample sets, from their counts."""
    total = BalanceCounts()
    for c in parts:
        total.visible += c.visible
        for attr in total.attr_values:
            total.attr_values[attr] += c.attr_values[attr]
        total.steps += c.steps
        total.objects += c.objects
        total.move_types += c.move_types
        for mine, theirs in zip(total.grams, c.grams, strict=True):
            mine.update(theirs)
        total.samples += c.samples
    return total


def stats_of(counts: BalanceCounts, flags: Sequence[bool], computed: int = 0) -> dict[str, Any]:
    """The statistics dict (see `balance_stats`) of counts and order-sensitive flags."""
    stats = counts.to_dict()
    stats["order_sensitive"] = sum(flags)
    stats["order_sensitive_share"] = sum(flags) / len(flags) if flags else 0.0
    stats["order_sensitive_computed"] = computed
    return stats


def balance_stats(samples: Sequence[Sample]) -> dict[str, Any]:
    """Counts of every balanced factor, the Table 8 n-gram rows and the order-sensitive count.

    Keys: samples, visible_objects, attribute_values, steps, object_index, move_type, values,
    ngrams (as `BalanceCounts.to_dict`), order_sensitive (count), order_sensitive_share and
    order_sensitive_computed (flags missing from the samples and computed here).
    """
    flags, computed = order_sensitive_flags(samples)
    return stats_of(count_factors(samples), flags, computed)
