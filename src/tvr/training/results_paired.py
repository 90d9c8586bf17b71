"""Paired comparisons for `tvr results`: is one run's Acc above another's on the same samples?

Two runs scored on the same samples (the `detail.jsonl` of their evaluations) are compared
sample by sample, which is far more sensitive than comparing two Acc figures as if they came
from independent test sets:

- the Acc of each and their difference A - B;
- the discordant samples: right in A only, right in B only;
- a 95% bootstrap interval of the difference (the samples resampled with replacement, seeded,
  so the interval is reproducible);
- the two-sided exact McNemar p-value: a binomial test of the discordant samples against an
  even split.

Pairs are formed in the order the RUNs were given, within one setting; a pair whose evaluations
do not cover the same samples (and views) is left out with a note saying so.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from math import comb
from pathlib import Path

import numpy as np

from tvr.errors import InputError
from tvr.training.results_tables import ResultEntry, ResultTable
from tvr.trance.samples_io import iter_jsonl

PAIRED_COLUMNS = [
    "Run A",
    "Run B",
    "Samples",
    "Acc A",
    "Acc B",
    "A - B",
    "95% low",
    "95% high",
    "A only",
    "B only",
    "McNemar p",
]


@dataclass(frozen=True)
class PairedComparison:
    """A against B on the same samples (see the module docstring)."""

    samples: int
    acc_a: float
    acc_b: float
    only_a: int
    only_b: int
    interval: tuple[float, float]
    p_value: float

    @property
    def difference(self) -> float:
        return self.acc_a - self.acc_b


def read_correct(detail: Path) -> dict[str, bool]:
    """Whether each scored sample (and view, in the View setting) is correct, from detail.jsonl."""
    correct: dict[str, bool] = {}
    for lineno, row in iter_jsonl(detail):
        if not isinstance(row, dict):
            raise InputError(detail, lineno, None, "expected a JSON object")
        if not isinstance(row.get("id"), str):
            raise InputError(detail, lineno, "id", "expected the sample id as a string")
        if not isinstance(row.get("correct"), bool):
            raise InputError(detail, lineno, "correct", "expected true or false")
        key = row["id"] if row.get("view") is None else f"{row['id']}/{row['view']}"
        if key in correct:
            raise InputError(detail, lineno, "id", f"{key!r} is scored twice")
        correct[key] = row["correct"]
    return correct


def mcnemar_exact(only_a: int, only_b: int) -> float:
    """Two-sided exact McNemar p-value: P(a split at least this uneven | an even split)."""
    n = only_a + only_b
    if n == 0:
        return 1.0
    tail = sum(comb(n, k) for k in range(min(only_a, only_b) + 1)) / 2**n
    return min(1.0, 2 * tail)


def compare_paired(
    a: dict[str, bool], b: dict[str, bool], resamples: int = 2000, seed: int = 0
) -> PairedComparison:
    """A against B; both must score the same samples (ValueError naming the first difference)."""
    if a.keys() != b.keys():
        only = sorted(a.keys() - b.keys()) or sorted(b.keys() - a.keys())
        raise ValueError(
            f"the two evaluations score different samples ({len(a)} and {len(b)}; "
            f"{only[0]!r} is in one only)"
        )
    if not a:
        raise ValueError("the evaluations score no samples")
    keys = sorted(a)
    x = np.array([a[k] for k in keys], dtype=bool)
    y = np.array([b[k] for k in keys], dtype=bool)
    n = len(keys)
    only_a, only_b = int((x & ~y).sum()), int((y & ~x).sum())
    # resampling n samples with replacement draws the three kinds (A only, B only, same) by a
    # multinomial; the difference of a resample is (A only - B only) / n
    rng = np.random.default_rng(seed)
    probs = [only_a / n, only_b / n, 1 - (only_a + only_b) / n]
    draws = rng.multinomial(n, probs, size=resamples)
    diffs = (draws[:, 0] - draws[:, 1]) / n
    low, high = np.quantile(diffs, [0.025, 0.975])
    return PairedComparison(
        samples=n,
        acc_a=float(x.mean()),
        acc_b=float(y.mean()),
        only_a=only_a,
        only_b=only_b,
        interval=(float(low), float(high)),
        p_value=mcnemar_exact(only_a, only_b),
    )


def paired_table(
    entries: list[ResultEntry], resamples: int = 2000, seed: int = 0
) -> ResultTable | None:
    """Every pair of runs of one setting scored on the same samples; None when there is none."""
    details = [(e, e.evaluation / "detail.jsonl") for e in entries if e.evaluation is not None]
    scored = [(e, read_correct(detail)) for e, detail in details if detail.is_file()]
    rows, skipped = [], []
    for (ea, ca), (eb, cb) in combinations(scored, 2):
        if ea.setting != eb.setting:
            continue
        try:
            c = compare_paired(ca, cb, resamples, seed)
        except ValueError as err:
            skipped.append(f"- {ea.label} and {eb.label} left out: {err}.")
            continue
        rows.append(
            {
                "Run A": ea.label,
                "Run B": eb.label,
                "source": "ours",
                "Samples": c.samples,
                "Acc A": c.acc_a,
                "Acc B": c.acc_b,
                "A - B": c.difference,
                "95% low": c.interval[0],
                "95% high": c.interval[1],
                "A only": c.only_a,
                "B only": c.only_b,
                "McNemar p": c.p_value,
            }
        )
    if not rows and not skipped:
        return None
    notes = [
        "Same samples, compared one by one. A only / B only: samples right in one run only. "
        "95% low, high: the bootstrap interval of A - B over the samples "
        f"({resamples} resamples, seed {seed}). "
        "McNemar p: two-sided exact test of the A only / B only split.",
        *skipped,
    ]
    formats = {
        "A - B": lambda v: f"{v:+.4f}",
        "95% low": lambda v: f"{v:+.4f}",
        "95% high": lambda v: f"{v:+.4f}",
        "McNemar p": lambda v: f"{v:.2g}",
    }
    return ResultTable("paired", "Paired comparisons (Acc)", PAIRED_COLUMNS, rows, notes, formats)
