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

from itertools import combinations
from pathlib import Path

from tvr.core.errors import InputError
from tvr.core.jsonl import iter_jsonl
from tvr.core.stats import compare_paired
from tvr.results.tables import ResultEntry, ResultTable

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
