"""TRANCO's metrics per sample (EMR, Recall, Precision, KTD, SD, NSD) and their means, by convention.

T is the reference: the sample's step clips in order (never empty, no clip twice). T^ is the
prediction: clip ids in order. With hits = |T ∩ T^|, n = |T| and n^ = |T^|:

- EMR: 1 if T^ is exactly T (same clips, same order), else 0.
- Recall and Precision, in two named conventions, because the paper's Eq. 2 prints the
  opposite of its prose (section 5.3):
  - "prose": Recall = hits / n (the reference clips found), Precision = hits / n^ (the predicted
    clips that are right), as the text defines them;
  - "eq2": Recall = hits / n^, Precision = hits / n, as Eq. 2 prints them.
  A ratio whose denominator n^ is 0 (an empty prediction) is 0.
- KTD: the normalised Kendall tau distance between the orders of the intersected clips in T and
  in T^: the share of their hits*(hits-1)/2 pairs that T^ puts in the other order (0 = same order,
  1 = reversed). It is 1 when the intersection is empty (the paper's definition). With a single
  shared clip there is no pair; the two named conventions are KTD_SINGLE "zero" (no pair can be
  misordered) and "one" (the value that Table 6's random row implies: 0.9958 @100).
- SD = |n^ - n| and NSD = SD / n.

Repeated clips in a prediction: every predicted step counts in n^ (so a repeat is a wrong step
and lowers the precision, and counts in SD), a clip counts once in the intersection, and its first
occurrence gives its place in the order. `SampleScore.duplicates` counts the repeats. A clip id
that is not a candidate can never be a reference clip, so it is simply a wrong step; the
evaluation counts such ids per sample (`tvr.tranco.eval.evaluate`).

A `Convention` bundles one choice of each: "eq2" (Eq. 2's Recall/Precision, KTD one) is the
convention Table 6 follows; "prose" (the text's Recall/Precision, KTD zero) is the literal
reading. `benchmarks/tranco_random_baseline.py` shows which one the numbers fit.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

#: the metrics, in Table 6's column order
METRICS: tuple[str, ...] = ("R", "P", "KTD", "SD", "NSD", "EMR")

#: the two readings of Recall and Precision (see the module docstring)
RP_CONVENTIONS: tuple[str, ...] = ("eq2", "prose")

#: KTD when the intersection holds a single clip, by name
KTD_SINGLE: dict[str, float] = {"zero": 0.0, "one": 1.0}


@dataclass(frozen=True)
class Convention:
    """A named choice of Recall/Precision reading (`rp`) and single-clip KTD (`ktd_single`)."""

    name: str
    rp: str
    ktd_single: str
    description: str


CONVENTIONS: dict[str, Convention] = {
    "eq2": Convention(
        "eq2", "eq2", "one",
        "Recall = |T∩T^|/|T^|, Precision = |T∩T^|/|T| (Eq. 2 as printed); KTD = 1 for a single "
        "shared clip; the convention of Table 6",
    ),
    "prose": Convention(
        "prose", "prose", "zero",
        "Recall = |T∩T^|/|T|, Precision = |T∩T^|/|T^| (the text of section 5.3); KTD = 0 for a "
        "single shared clip",
    ),
}  # fmt: skip

#: the convention of the paper's tables, and the default of `tvr tranco evaluate`
DEFAULT_CONVENTION = "eq2"


@dataclass(frozen=True)
class SampleScore:
    """What one prediction shares with its reference; every metric follows from these counts."""

    length: int  # n = |T|
    predicted: int  # n^ = |T^|, every predicted step (repeats included)
    hits: int  # |T ∩ T^|
    discordant: int  # pairs of intersected clips that T^ orders the other way
    exact: bool  # T^ == T
    duplicates: int = 0  # predicted steps that repeat an earlier one

    @property
    def pairs(self) -> int:
        return self.hits * (self.hits - 1) // 2

    def recall(self, rp: str) -> float:
        return _ratio(self.hits, self.length if _rp(rp) == "prose" else self.predicted)

    def precision(self, rp: str) -> float:
        return _ratio(self.hits, self.predicted if _rp(rp) == "prose" else self.length)

    def ktd(self, single: str) -> float:
        if self.hits == 0:
            return 1.0
        if self.hits == 1:
            if single not in KTD_SINGLE:
                raise ValueError(f"unknown single-clip KTD convention {single!r}")
            return KTD_SINGLE[single]
        return self.discordant / self.pairs

    @property
    def sd(self) -> int:
        return abs(self.predicted - self.length)

    @property
    def nsd(self) -> float:
        return self.sd / self.length

    def values(self, convention: Convention | str) -> dict[str, float]:
        """metric -> value (METRICS order) under `convention` (a Convention or its name)."""
        conv = convention_named(convention)
        return {
            "R": self.recall(conv.rp),
            "P": self.precision(conv.rp),
            "KTD": self.ktd(conv.ktd_single),
            "SD": float(self.sd),
            "NSD": self.nsd,
            "EMR": float(self.exact),
        }


def score_sample(reference: Sequence[Hashable], prediction: Sequence[Hashable]) -> SampleScore:
    """Compare a prediction with its reference (non-empty, no clip twice: ValueError if not)."""
    if not reference:
        raise ValueError("the reference has no clip")
    place = {clip: i for i, clip in enumerate(reference)}
    if len(place) != len(reference):
        raise ValueError("the reference holds a clip twice")
    first: dict[Hashable, int] = {}
    for i, clip in enumerate(prediction):
        first.setdefault(clip, i)
    # the predicted positions of the shared clips, in the reference's order
    order = [first[clip] for clip in reference if clip in first]
    discordant = sum(
        1 for i in range(len(order)) for j in range(i + 1, len(order)) if order[i] > order[j]
    )
    return SampleScore(
        length=len(reference),
        predicted=len(prediction),
        hits=len(order),
        discordant=discordant,
        exact=list(prediction) == list(reference),
        duplicates=len(prediction) - len(first),
    )


def convention_named(convention: Convention | str) -> Convention:
    if isinstance(convention, Convention):
        return convention
    try:
        return CONVENTIONS[convention]
    except KeyError:
        raise ValueError(
            f"unknown convention {convention!r} (known: {', '.join(CONVENTIONS)})"
        ) from None


def mean_values(scores: Iterable[SampleScore], convention: Convention | str) -> dict[str, float]:
    """The mean of each metric over the samples (ValueError if there is none)."""
    conv = convention_named(convention)
    total = dict.fromkeys(METRICS, 0.0)
    count = 0
    for score in scores:
        for name, value in score.values(conv).items():
            total[name] += value
        count += 1
    if count == 0:
        raise ValueError("no sample to average over")
    return {name: value / count for name, value in total.items()}


def by_length(
    scores: Iterable[SampleScore], convention: Convention | str
) -> dict[int, dict[str, float]]:
    """The breakdown of Fig. 9: reference length -> {"samples": count, metric: mean, ...}."""
    groups: dict[int, list[SampleScore]] = {}
    for score in scores:
        groups.setdefault(score.length, []).append(score)
    return {
        length: {"samples": len(group), **mean_values(group, convention)}
        for length, group in sorted(groups.items())
    }


def ktd_means(scores: Sequence[SampleScore]) -> Mapping[str, float]:
    """The mean KTD under each single-clip convention (name -> mean)."""
    if not scores:
        raise ValueError("no sample to average over")
    return {name: sum(s.ktd(name) for s in scores) / len(scores) for name in KTD_SINGLE}


def _ratio(part: int, whole: int) -> float:
    return part / whole if whole else 0.0


def _rp(rp: str) -> str:
    if rp not in RP_CONVENTIONS:
        raise ValueError(f"unknown Recall/Precision convention {rp!r} (known: eq2, prose)")
    return rp
