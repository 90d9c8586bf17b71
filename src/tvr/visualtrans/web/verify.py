"""The verification of a build's questions: which item a verifier gets next, and how their answer
and review are stored.

The items are those of `BUILD/questions/VisualTrans.json` (read by `tvr.visualtrans.data.dataset`,
one per id: duplicates are one item), their images under `BUILD/questions/images/`, and where
`BUILD/questions/families.jsonl` exists the family of each (`id`, `family` per line). Each item
wants `verifiers` complete verdicts. The next item of a verifier is their own open one (served
and not yet reviewed) first, else one they have not seen whose complete verdicts plus the claims
of verifiers working on it now are fewest, ties broken by an order seeded per verifier (as the
VTT rating study spreads its units). A claim lapses after `claim_minutes`. Nothing here touches
HTTP.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from tvr.core.errors import InputError, UserError
from tvr.core.jsonl import iter_jsonl
from tvr.visualtrans.data.dataset import DATA_FILE, Item, images_folder, load_dataset
from tvr.visualtrans.web.answers import (
    MAX_NOTE,
    VerifyError,
    agrees,
    canonical_answer,
    check_flags,
)
from tvr.visualtrans.web.models import VtServing, VtVerdict
from tvr.web.db import IDEMPOTENCY_KEY, Tester, commit, insert, stored_by_key, utcnow

QUESTIONS_DIR = "questions"
FAMILIES_FILE = "families.jsonl"


@dataclass(frozen=True)
class VerifyOptions:
    verifiers: int = 2
    claim_minutes: float = 30.0
    seed: int = 0


def read_families(path: Path) -> dict[str, str]:
    """item id -> family of a families.jsonl (an `id` and a `family` string per line)."""
    out: dict[str, str] = {}
    for line, record in iter_jsonl(path):
        if not isinstance(record, dict):
            raise InputError(path, line, None, "expected an object")
        for name in ("id", "family"):
            if not isinstance(record.get(name), str):
                raise InputError(path, line, name, "expected a string")
        out[record["id"]] = record["family"]
    return out


class Verification:
    """The items of a build under verification."""

    def __init__(self, build: str | Path, options: VerifyOptions) -> None:
        if options.verifiers < 1:
            raise UserError(f"--verifiers must be 1 or more, got {options.verifiers}")
        if options.claim_minutes <= 0:
            raise UserError(f"claim_minutes must be positive, got {options.claim_minutes}")
        self.build = Path(build)
        folder = self.build / QUESTIONS_DIR
        if not (folder / DATA_FILE).is_file():
            raise UserError(f"--data {build}: no {QUESTIONS_DIR}/{DATA_FILE} (a build folder "
                            "of `tvr visualtrans build` holds it)")  # fmt: skip
        dataset = load_dataset(folder / DATA_FILE)
        self.items: list[Item] = dataset.unique_items()
        self.by_id: dict[str, Item] = {it.id: it for it in self.items}
        self.index_of: dict[str, int] = {it.id: k for k, it in enumerate(self.items)}
        self.images = images_folder(folder / DATA_FILE, self.items[0])
        families = folder / FAMILIES_FILE
        self.families = read_families(families) if families.is_file() else {}
        self.options = options
        self.warnings = list(dataset.warnings)
        missing = dataset.missing_images(self.images)
        if missing:
            self.warnings.append(f"{len(missing)} image(s) missing under {self.images}, e.g. "
                                 f"{missing[0][1]} of item {missing[0][0]}")  # fmt: skip
        self.order_cache: dict[int, list[str]] = {}

    @property
    def target(self) -> int:
        return self.options.verifiers

    def family(self, item: Item) -> str:
        return self.families.get(item.id, "-")

    def image(self, index: int, k: int) -> str | None:
        """The k-th image (0-based) of the item at `index`, relative to `images`, or None."""
        if not 0 <= index < len(self.items):
            return None
        item = self.items[index]
        if not 0 <= k < len(item.images):
            return None
        return item.images[k]

    def position(self, item: Item) -> int:
        """The item's place among the served items (the index of its image URLs)."""
        return self.index_of[item.id]

    def order_for(self, tester_id: int) -> list[str]:
        order = self.order_cache.get(tester_id)
        if order is None:
            seed = self.options.seed

            def rank(key: str) -> bytes:
                return hashlib.sha256(f"{seed}\x1f{tester_id}\x1f{key}".encode()).digest()

            order = sorted(self.by_id, key=rank)
            if len(self.order_cache) > 10_000:
                self.order_cache.clear()
            self.order_cache[tester_id] = order
        return order


def complete_counts(db: Session, v: Verification) -> Counter:
    """Complete verdicts per item id, on the generated answer the item has now."""
    rows = db.execute(
        select(VtVerdict.item_id, VtVerdict.label).where(VtVerdict.reviewed.is_(True))
    )
    return Counter(i for i, label in rows if i in v.by_id and v.by_id[i].label == label)


def still_needed(v: Verification, counts: Counter) -> int:
    return sum(max(0, v.target - counts[i]) for i in v.by_id)


@dataclass
class Next:
    """The item a verifier works on next: its serving, and their verdict if they answered."""

    serving: VtServing
    item: Item
    verdict: VtVerdict | None
    done: int  # items this verifier has reviewed
    still_needed: int

    @property
    def elapsed(self) -> float:
        return max((utcnow() - self.serving.served_at).total_seconds(), 0.0)


def next_item(db: Session, v: Verification, tester: Tester, _retry: bool = True) -> Next | None:
    """The verifier's open item, else a new one (the module's rules); None when none needs them."""
    mine = list(
        db.scalars(
            select(VtServing)
            .where(VtServing.tester_id == tester.id)
            .order_by(VtServing.served_at, VtServing.id)
        )
    )
    verdicts = {
        r.item_id: r for r in db.scalars(select(VtVerdict).where(VtVerdict.tester_id == tester.id))
    }
    done = sum(r.reviewed for r in verdicts.values())
    counts = complete_counts(db, v)
    for serving in mine:
        verdict = verdicts.get(serving.item_id)
        if serving.item_id in v.by_id and (verdict is None or not verdict.reviewed):
            item = v.by_id[serving.item_id]
            return Next(serving, item, verdict, done, still_needed(v, counts))
    seen = {s.item_id for s in mine}
    since = utcnow() - timedelta(minutes=v.options.claim_minutes)
    reviewed = set(
        map(tuple, db.execute(
            select(VtVerdict.tester_id, VtVerdict.item_id).where(VtVerdict.reviewed.is_(True))
        ))
    )  # fmt: skip
    claims = Counter(
        i
        for t, i in db.execute(
            select(VtServing.tester_id, VtServing.item_id).where(
                VtServing.served_at >= since, VtServing.tester_id != tester.id
            )
        )
        if (t, i) not in reviewed
    )
    wanted = [
        i for i in v.order_for(tester.id) if i not in seen and counts[i] + claims[i] < v.target
    ]
    if not wanted:
        return None
    key = min(wanted, key=lambda i: counts[i] + claims[i])  # the first in the verifier's order
    serving = VtServing(tester_id=tester.id, item_id=key)
    if not insert(db, serving):  # the same verifier asked twice at once
        if _retry:
            return next_item(db, v, tester, _retry=False)
        raise VerifyError("could not choose an item; reload the page", 409)
    return Next(serving, v.by_id[key], None, done, still_needed(v, counts))


def _served(
    db: Session, v: Verification, tester: Tester, serving_id: int
) -> tuple[VtServing, Item]:
    serving = db.get(VtServing, serving_id) if abs(serving_id) < 2**62 else None
    if serving is None or serving.tester_id != tester.id:
        raise VerifyError(f"no item {serving_id} was served to you", 404)
    item = v.by_id.get(serving.item_id)
    if item is None:
        raise VerifyError("this item is not part of the build served now", 404)
    return serving, item


def submit_answer(
    db: Session,
    v: Verification,
    tester: Tester,
    serving_id: int,
    answer: Any,
    key: Any,
    client_seconds: float | None,
) -> tuple[VtVerdict, bool]:
    """Store the verifier's blind answer to an item served to them: (verdict, stored now). A
    retried key returns the verdict stored before (stored now: False)."""
    if not isinstance(key, str) or not IDEMPOTENCY_KEY.match(key):
        raise VerifyError("key must be 8-64 letters, digits, - or _ (one per answer)")
    before = stored_by_key(db, VtVerdict, tester.id, key)
    if before is not None:
        return before, False
    serving, item = _served(db, v, tester, serving_id)
    if db.scalar(select(VtVerdict.id).where(VtVerdict.serving_id == serving.id)) is not None:
        raise VerifyError("you have answered this item already", 409)
    text = canonical_answer(item, answer)
    if client_seconds is not None and not (math.isfinite(client_seconds) and client_seconds >= 0):
        raise VerifyError("client_seconds must be a non-negative number or null")
    now = utcnow()
    row = VtVerdict(
        tester_id=tester.id,
        serving_id=serving.id,
        idempotency_key=key,
        item_id=item.id,
        label=item.label,
        answer=text,
        agrees=agrees(item, text),
        served_at=serving.served_at,
        submitted_at=now,
        server_seconds=max((now - serving.served_at).total_seconds(), 0.0),
        client_seconds=client_seconds,
    )
    if not insert(db, row):  # a doubled request: the other one stored it
        again = stored_by_key(db, VtVerdict, tester.id, key)
        if again is not None:
            return again, False
        raise VerifyError("you have answered this item already", 409)
    return row, True


def submit_review(
    db: Session,
    v: Verification,
    tester: Tester,
    serving_id: int,
    flags: Any,
    fix: Any,
    note: Any,
) -> VtVerdict:
    """Store the verifier's review of the generated answer of an item they answered. The same
    review sent again is a no-op; another one is refused (409)."""
    serving, item = _served(db, v, tester, serving_id)
    verdict = db.scalar(select(VtVerdict).where(VtVerdict.serving_id == serving.id))
    if verdict is None:
        raise VerifyError("answer the question first; the generated answer is shown after", 409)
    names = check_flags(flags)
    fixed = None
    if fix is not None and not (isinstance(fix, str) and not fix.strip()):
        if "wrong_answer" not in names:
            raise VerifyError("a corrected answer goes with the flag 'wrong answer'")
        fixed = canonical_answer(item, fix, "corrected answer")
        if agrees(item, fixed):
            raise VerifyError("the corrected answer is the generated answer")
    if note is not None and not isinstance(note, str):
        raise VerifyError("the note is text")
    note = (note or "").strip() or None
    if note is not None and len(note) > MAX_NOTE:
        raise VerifyError(f"the note is too long ({len(note)} characters, at most {MAX_NOTE})")
    flags_json = json.dumps(names)
    if verdict.reviewed:
        if (verdict.flags_json, verdict.fix, verdict.note) == (flags_json, fixed, note):
            return verdict
        raise VerifyError("you have reviewed this item already", 409)
    verdict.flags_json, verdict.fix, verdict.note = flags_json, fixed, note
    verdict.reviewed, verdict.reviewed_at = True, utcnow()
    commit(db)
    return verdict
