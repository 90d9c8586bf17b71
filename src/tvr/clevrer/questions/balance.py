"""Answer balancing within each descriptive sub-type, and question-type quotas, over a dataset.

The paper (section 3.2, appendix A) balances the answers within each descriptive sub-type. A
`Balancer` counts, over every video it has seen, the answers of each sub-type and the questions
of each type. For each descriptive question the generator first lists the answers this video can
give (a pool of candidate questions, executed); the balancer picks the least-used of those
answers (ties at random), so an answer that is already over-represented is rejected whenever the
video can give a rarer one. Answers the video cannot produce are not forced (a count of 5 needs
five matching objects); they stay as balanced as the videos allow.

Type quotas: a video asks floor(m) or floor(m) + 1 questions of a type with mean m (the fraction
drawn at random), plus what earlier videos seen by the same balancer fell short of (or minus what
they asked too many; at most `MAX_CATCH_UP` either way), so videos without, say, unseen
collisions do not lower the dataset's predictive ratio. One balancer per shard, fed its videos in index order, gives the same questions
on every run; `add` rebuilds the counts from questions written earlier.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import numpy as np

from tvr.clevrer.vocab import COLORS, MATERIALS, SHAPES

#: the answer space of each descriptive sub-type (appendix A); counts are "0".."5"
ANSWERS: dict[str, tuple[str, ...]] = {
    "count": tuple(str(k) for k in range(6)),
    "exist": ("yes", "no"),
    "query_color": COLORS,
    "query_shape": SHAPES,
    "query_material": MATERIALS,
}

QUESTION_TYPES: tuple[str, ...] = ("descriptive", "explanatory", "predictive", "counterfactual")

MAX_CATCH_UP = 2


@dataclass
class Balancer:
    """Answer counts per descriptive sub-type and question counts per type, over many videos."""

    answers: dict[str, Counter] = field(default_factory=lambda: {s: Counter() for s in ANSWERS})
    types: Counter = field(default_factory=Counter)
    videos: int = 0

    def pick(self, subtype: str, feasible: Iterable[str], rng: np.random.Generator) -> str | None:
        """The least-used answer of the sub-type among those feasible (ties at random)."""
        options = sorted(set(feasible))
        if not options:
            return None
        counts = self.answers[subtype]
        low = min(counts[a] for a in options)
        best = [a for a in options if counts[a] == low]
        return best[int(rng.integers(len(best)))]

    def plan(self, means: Mapping[str, float], rng: np.random.Generator) -> dict[str, int]:
        """How many questions of each type the next video should ask; counts it as seen."""
        out = {}
        for qtype, mean in means.items():
            base = int(np.floor(mean))
            n = base + int(rng.random() < mean - base)
            short = round(self.videos * mean - self.types[qtype])
            out[qtype] = max(n + min(max(short, -MAX_CATCH_UP), MAX_CATCH_UP), 0)
        self.videos += 1
        return out

    def record(self, question: Mapping) -> None:
        """Count one generated question (its type and, for descriptive, its answer)."""
        self.types[question["question_type"]] += 1
        if question["question_type"] == "descriptive":
            self.answers[question["question_subtype"]][question["answer"]] += 1

    def add(self, questions: Iterable[Mapping], videos: int) -> None:
        """Count questions generated earlier for `videos` videos (e.g. earlier shards' files)."""
        for q in questions:
            self.record(q)
        self.videos += videos

    def spread(self, subtype: str) -> float:
        """max/min answer count of the sub-type over its whole answer space (inf if one is 0)."""
        counts = [self.answers[subtype][a] for a in ANSWERS[subtype]]
        return max(counts) / min(counts) if min(counts) else float("inf")
