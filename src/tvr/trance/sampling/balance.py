"""Balanced sampling (Algorithm 1 of the journal paper's appendix A) and the balance counts.

Option k is drawn with probability proportional to (max_j n_j - n_k + t), where n are the counts
of earlier samples and t the tolerance (0.1). `BalanceCounts` holds every balanced factor of a
set of samples: visible objects, attribute values of objects, number of steps, transformed
object index, move type and n-gram value sequences (n = 1..4). It can add and remove one sample,
so the counts of a failed sample roll back, and it reports the statistics of Table 8.
`BalanceCounts.of_samples` rebuilds the counts of earlier samples exactly (a sampler's counts are
the sum of its samples' factors), so balance can continue across shards (global balance).
"""

from __future__ import annotations

import bisect
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tvr.trance.world import vocab

TOLERANCE = 0.1


def balanced_choice(
    rng: np.random.Generator,
    counts: np.ndarray,
    tolerance: float = TOLERANCE,
    allowed: np.ndarray | None = None,
) -> int | None:
    """Index of an option drawn by Algorithm 1; `allowed` (bool mask) restricts the options.

    Returns None when no option is allowed. The maximum is taken over the allowed options.
    """
    # plain floats: the options are few (at most a few dozen) and numpy's per-call cost dominated
    # the sampler; the same IEEE operations in the same order (sequential cumulative sum, the
    # first cumulative weight above the draw), so the same choices as the array version
    values = np.asarray(counts, dtype=np.float64).tolist()
    mask = [True] * len(values) if allowed is None else np.asarray(allowed, dtype=bool).tolist()
    top = max((c for c, ok in zip(values, mask, strict=True) if ok), default=None)
    if top is None:
        return None
    cum, total = [], 0.0
    for c, ok in zip(values, mask, strict=True):
        total += max(top - c + tolerance, 0.0) if ok else 0.0
        cum.append(total)
    return bisect.bisect_right(cum, rng.random() * cum[-1])


def ngrams(values: list[int], n: int) -> list[tuple[int, ...]]:
    """The n-grams of a value sequence (sliding window, stride 1)."""
    return [tuple(values[i : i + n]) for i in range(len(values) - n + 1)]


@dataclass
class BalanceCounts:
    """Counts of every balanced factor over the samples recorded so far."""

    visible: np.ndarray = field(
        default_factory=lambda: np.zeros(vocab.NUM_OBJECTS + 1, dtype=np.int64)
    )
    attr_values: dict[str, np.ndarray] = field(
        default_factory=lambda: {
            a: np.zeros(len(v), dtype=np.int64) for a, v in vocab.CATEGORIES.items()
        }
    )
    steps: np.ndarray = field(default_factory=lambda: np.zeros(vocab.MAX_STEPS + 1, dtype=np.int64))
    objects: np.ndarray = field(default_factory=lambda: np.zeros(vocab.NUM_OBJECTS, dtype=np.int64))
    move_types: np.ndarray = field(
        default_factory=lambda: np.zeros(len(vocab.MOVE_TYPES), dtype=np.int64)
    )
    grams: list[Counter] = field(
        default_factory=lambda: [Counter() for _ in range(vocab.MAX_STEPS + 1)]
    )
    samples: int = 0
    #: per n: how many n-gram options have each positive count (count -> options), so that the
    #: smallest count is found without scanning up to 33^n options (`gram_min`)
    gram_levels: list[Counter] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.gram_levels = [Counter(c for c in g.values() if c > 0) for g in self.grams]

    def add_gram(self, gram: tuple[int, ...], delta: int = 1) -> None:
        """Change the count of one n-gram (every n-gram count changes through here)."""
        n = len(gram)
        counter, levels = self.grams[n], self.gram_levels[n]
        old = counter.get(gram, 0)
        new = old + delta
        counter[gram] = new
        if old > 0:
            levels[old] -= 1
            if not levels[old]:
                del levels[old]
        if new > 0:
            levels[new] += 1

    @classmethod
    def of_samples(cls, samples: Any) -> BalanceCounts:
        """The counts of `samples` (any iterable of `Sample`), exactly as a sampler that made
        them one after another holds them after the last one."""
        counts = cls()
        for s in samples:
            counts.record(sample_factors(s))
        return counts

    def copy(self) -> BalanceCounts:
        return BalanceCounts(
            visible=self.visible.copy(),
            attr_values={a: c.copy() for a, c in self.attr_values.items()},
            steps=self.steps.copy(),
            objects=self.objects.copy(),
            move_types=self.move_types.copy(),
            grams=[Counter(+g) for g in self.grams],  # unary + drops the rolled-back zeros
            samples=self.samples,
        )

    def same_as(self, other: BalanceCounts) -> bool:
        """True if every balanced factor has the same counts (zero entries ignored)."""
        return (
            self.samples == other.samples
            and np.array_equal(self.visible, other.visible)
            and all(
                np.array_equal(self.attr_values[a], other.attr_values[a]) for a in self.attr_values
            )
            and np.array_equal(self.steps, other.steps)
            and np.array_equal(self.objects, other.objects)
            and np.array_equal(self.move_types, other.move_types)
            and all(+a == +b for a, b in zip(self.grams, other.grams, strict=True))
        )

    # --- n-gram balance of the next value ---------------------------------------------------------
    def gram_min(self, n: int) -> int:
        """Smallest count over all 33^n options of n-grams (0 while some option is unseen)."""
        levels = self.gram_levels[n]
        if sum(levels.values()) < vocab.NUM_VALUES**n:
            return 0
        return min(levels)

    def value_scores(self, history: list[int]) -> np.ndarray:
        """Per candidate value v: sum over n of (count of the n-gram history[-(n-1):] + v) - min.

        Lower is rarer. This is the count table that the value choice balances.
        """
        scores = np.zeros(vocab.NUM_VALUES, dtype=np.float64)
        for n in range(1, len(history) + 2):
            prefix = tuple(history[len(history) - n + 1 :]) if n > 1 else ()
            counter = self.grams[n]
            low = self.gram_min(n)
            for v in range(vocab.NUM_VALUES):
                scores[v] += counter.get((*prefix, v), 0) - low
        return scores

    # --- recording -----------------------------------------------------------------------------------
    def record(self, summary: dict[str, Any], sign: int = 1) -> None:
        """Add (sign=1) or remove (sign=-1) one sample's factors, given by `sample_factors`."""
        self.visible[summary["num_visible"]] += sign
        for attr, idx in summary["attr_values"]:
            self.attr_values[attr][idx] += sign
        self.steps[len(summary["values"])] += sign
        for o in summary["objects"]:
            self.objects[o] += sign
        for m in summary["move_types"]:
            self.move_types[vocab.MOVE_TYPES.index(m)] += sign
        values = summary["values"]
        for n in range(1, len(values) + 1):
            for g in ngrams(values, n):
                self.add_gram(g, sign)
        self.samples += sign

    # --- statistics ------------------------------------------------------------------------------------
    def ngram_table(self) -> dict[int, dict[str, float]]:
        """Table 8: per n-gram order, the number of options and min/max/median/mean/std counts."""
        table = {}
        for n in range(1, vocab.MAX_STEPS + 1):
            options = vocab.NUM_VALUES**n
            seen = [c for c in self.grams[n].values() if c > 0]
            zeros = options - len(seen)
            arr = np.asarray(seen, dtype=np.float64)
            total = arr.sum()
            mean = total / options
            var = (((arr - mean) ** 2).sum() + zeros * mean**2) / options
            if zeros > 0:
                lo = 0.0
                # median of a vector with `zeros` zeros and the seen counts
                med = (
                    0.0
                    if zeros >= options / 2
                    else float(np.median(np.concatenate([arr, np.zeros(zeros)])))
                )
            else:
                lo = float(arr.min())
                med = float(np.median(arr))
            table[n] = {
                "options": options,
                "min": lo,
                "max": float(arr.max()) if len(arr) else 0.0,
                "median": med,
                "mean": float(mean),
                "std": float(np.sqrt(var)),
            }
        return table

    def to_dict(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "visible_objects": {
                str(k): int(self.visible[k]) for k in range(1, vocab.NUM_OBJECTS + 1)
            },
            "attribute_values": {
                a: {
                    name: int(c)
                    for name, c in zip(vocab.CATEGORIES[a], self.attr_values[a], strict=True)
                }
                for a in vocab.CATEGORIES
            },
            "steps": {str(k): int(self.steps[k]) for k in range(1, vocab.MAX_STEPS + 1)},
            "object_index": {str(k): int(self.objects[k]) for k in range(vocab.NUM_OBJECTS)},
            "move_type": {
                m: int(c) for m, c in zip(vocab.MOVE_TYPES, self.move_types, strict=True)
            },
            "values": {
                name: int(self.grams[1].get((i,), 0)) for i, name in enumerate(vocab.VALUES)
            },
            "ngrams": {f"{n}-gram": row for n, row in self.ngram_table().items()},
        }


def sample_factors(sample: Any) -> dict[str, Any]:
    """The balanced factors of one `Sample` (what `BalanceCounts.record` takes)."""
    attr_values = []
    for o in sample.objects:
        for attr in vocab.CATEGORIES:
            attr_values.append((attr, vocab.CATEGORIES[attr].index(o[attr])))
    return {
        "num_visible": sample.num_visible,
        "attr_values": attr_values,
        "values": [s.value for s in sample.steps],
        "objects": [s.obj for s in sample.steps],
        "move_types": [s.move_type for s in sample.steps if s.move_type is not None],
    }
