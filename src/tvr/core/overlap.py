"""The check every evaluator makes before scoring: a predictions file must share an id with the
reference it is scored against (issue 42).

A file whose ids match nothing would score 0 on every metric, which reads as a result; it is
refused in one line instead, naming the likely cause: the ids are another split's (the split is
named, with the option that picks it), or of no split of the reference at all. Partial overlap
is scored as before (the missing count as wrong, the unknown are ignored), and the evaluators
print those counts before their table.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from tvr.core.errors import UserError


def require_overlap(
    predictions: str | Path,
    ids: Iterable[str],
    known: Iterable[str],
    reference: str | Path,
    what: str = "id",
    split: str | None = None,
    other_splits: dict[str, str] | None = None,
    split_option: str = "--split",
) -> None:
    """Raise a UserError when none of `ids` (the predictions') is in `known` (the reference's,
    of `split` when it has one). `other_splits` maps ids of the reference's other splits to their
    split, so the message can say "they are val ids: --split val"."""
    ids = list(dict.fromkeys(ids))
    known = set(known)
    if any(i in known for i in ids):
        return
    where = f"{split} {what}" if split else what
    if not ids:
        raise UserError(f"{predictions}: no predictions, so none matches a {where} of {reference}")
    head = f"{predictions}: none of its {len(ids)} ids is a {where} of {reference}"
    found = Counter((other_splits or {}).get(i) for i in ids)
    found.pop(None, None)
    if found:
        other, count = found.most_common(1)[0]
        raise UserError(f"{head}; {count} of them are {other} ids: predictions for another "
                        f"split? (score them with {split_option} {other})")  # fmt: skip
    example = ids[0] if len(ids[0]) <= 40 else ids[0][:40] + "..."
    raise UserError(f"{head} (e.g. {example!r}): predictions for other data?")
