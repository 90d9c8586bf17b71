"""Which items of a build leave verification, and why the others do not (`verified_items`).

The verification store of a build is `BUILD/verify/verify.sqlite` (the tables of
`tvr.visualtrans.web.models`); `BUILD/verify/settings.json` holds the number of verifiers each
item wants (`tvr serve --benchmark visualtrans --verify --verifiers N` writes it; 2 when absent).
The rule (docs/visualtrans.md, "Verification"), per item, over its *complete* verdicts (answered
and reviewed) on the generated answer the item still has:

* fewer than N verdicts: dropped, `unverified`;
* a strict majority of the verdicts is *clean* (the verifier's blind answer agrees with the
  generated one and nothing is flagged): kept as it is (`verified`);
* else a strict majority of the verdicts proposes the same corrected answer (the flag "wrong
  answer", no other flag, and a fix): kept with that answer as its label (`fixed`); an item
  also flagged ambiguous, missing its correct option or short of visual evidence is not
  repaired by a new label;
* else dropped, for the flag most of its verdicts raise (`wrong_answer`, `missing_option`,
  `ambiguous`, `insufficient_evidence`; ties in that order), or `disagreement` when the
  verifiers answered otherwise than the generated answer without flagging it.

Only SQLAlchemy (and the standard library): reading the store needs no FastAPI.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sqlalchemy import select

from tvr.core.errors import UserError
from tvr.core.jsonl import read_json, write_json
from tvr.visualtrans.data.dataset import item_id
from tvr.visualtrans.web.answers import FLAGS
from tvr.visualtrans.web.models import VtVerdict
from tvr.web.db import make_engine, make_sessionmaker

VERIFY_DIR = "verify"
DB_NAME = "verify.sqlite"
SETTINGS_NAME = "settings.json"
DEFAULT_VERIFIERS = 2
#: why an item is dropped, in the order the counts are given
DROP_REASONS = ("unverified", *FLAGS, "disagreement")


def store_file(build: str | Path) -> Path:
    """BUILD/verify/verify.sqlite."""
    return Path(build) / VERIFY_DIR / DB_NAME


def store_url(build: str | Path) -> str:
    return f"sqlite:///{store_file(build).resolve()}"


def write_settings(build: str | Path, verifiers: int) -> None:
    """BUILD/verify/settings.json: what the verification server was started with (the folder
    made if needed: the store goes there too)."""
    (Path(build) / VERIFY_DIR).mkdir(exist_ok=True)
    write_json(Path(build) / VERIFY_DIR / SETTINGS_NAME, {"verifiers": verifiers})


def wanted_verifiers(build: str | Path) -> int:
    """The number of verdicts each item wants: BUILD/verify/settings.json, else 2."""
    path = Path(build) / VERIFY_DIR / SETTINGS_NAME
    if not path.is_file():
        return DEFAULT_VERIFIERS
    data = read_json(path)
    value = data.get("verifiers") if isinstance(data, dict) else None
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise UserError(f"{path}: field 'verifiers': expected a whole number >= 1, got {value!r}")
    return value


@dataclass(frozen=True)
class Verdict:
    """One complete verdict, as the rule reads it."""

    tester_id: int
    answer: str
    agrees: bool
    flags: tuple[str, ...]
    fix: str | None

    @property
    def clean(self) -> bool:
        return self.agrees and not self.flags


@dataclass(frozen=True)
class Decision:
    """What happens to one item: `verified`, `fixed` (with `label`) or `dropped` (`reason`)."""

    outcome: str
    reason: str | None = None
    label: str | None = None
    verdicts: int = 0


def _fix_key(fix: str) -> str:
    """Two fixes are one when they differ only in case, spaces or the order of a set's names."""
    parts = [" ".join(p.lower().split()) for p in fix.split(",")]
    return ", ".join(sorted(p for p in parts if p))


def decide(label: str, verdicts: list[Verdict], wanted: int) -> Decision:
    """The rule of the module's docstring for one item with generated answer `label`."""
    n = len(verdicts)
    if n < wanted:
        return Decision("dropped", "unverified", verdicts=n)
    if 2 * sum(v.clean for v in verdicts) > n:
        return Decision("verified", verdicts=n)
    fixes = Counter(
        _fix_key(v.fix) for v in verdicts if v.fix is not None and v.flags == ("wrong_answer",)
    )
    if fixes:
        key, votes = fixes.most_common(1)[0]
        if 2 * votes > n and key != _fix_key(label):
            first = next(v.fix for v in verdicts if v.fix is not None and _fix_key(v.fix) == key)
            return Decision("fixed", label=first, verdicts=n)
    flags = Counter(f for v in verdicts for f in v.flags)
    if flags:
        top = max(flags.values())
        return Decision("dropped", next(f for f in FLAGS if flags[f] == top), verdicts=n)
    return Decision("dropped", "disagreement", verdicts=n)


def read_verdicts(url: str) -> dict[tuple[str, str], list[Verdict]]:
    """(item id, generated label) -> the complete verdicts of the store at `url`."""
    engine = make_engine(url)
    try:
        with make_sessionmaker(engine)() as db:
            rows = list(
                db.scalars(
                    select(VtVerdict)
                    .where(VtVerdict.reviewed.is_(True))
                    .order_by(VtVerdict.submitted_at, VtVerdict.id)
                )
            )
    finally:
        engine.dispose()
    out: dict[tuple[str, str], list[Verdict]] = {}
    for r in rows:
        out.setdefault((r.item_id, r.label), []).append(
            Verdict(r.tester_id, r.answer, r.agrees, tuple(json.loads(r.flags_json)), r.fix)
        )
    return out


def decisions(
    build: str | Path, items: Iterable[dict[str, Any]]
) -> list[tuple[dict[str, Any], Decision]]:
    """Each item of the release-format list `items` with its Decision (no store: all
    unverified)."""
    items = list(items)
    wanted = wanted_verifiers(build)
    file = store_file(build)
    verdicts = read_verdicts(store_url(build)) if file.is_file() else {}
    out = []
    for raw in items:
        key = (item_id(raw["question"], raw["images"]), raw["label"])
        out.append((raw, decide(raw["label"], verdicts.get(key, []), wanted)))
    return out


def verified_items(build: Path, items: list[dict]) -> tuple[list[dict], dict[str, int]]:
    """The items to export (verified ones as they are, fixed ones with their corrected label,
    in the order of `items`) and, for each reason of DROP_REASONS, how many were dropped for it
    (0 included)."""
    kept: list[dict] = []
    dropped: Counter = Counter()
    for raw, decision in decisions(build, items):
        if decision.outcome == "verified":
            kept.append(dict(raw))
        elif decision.outcome == "fixed":
            kept.append({**raw, "label": decision.label})
        else:
            dropped[decision.reason] += 1
    return kept, {reason: dropped[reason] for reason in DROP_REASONS}
