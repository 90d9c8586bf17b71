"""The rating study: which units are served, who rates which next, and how a rating is stored.

A unit is one model's descriptions of one sample of a seeded subset of a split
(`tvr.vtt.subset`, as the paper chose 200 test samples). Raters never see which model wrote
what. Each unit wants `raters` decided ratings (at least two, as in the paper); the next unit
of a rater is one they have not seen whose decided ratings plus the claims of raters working on
it right now are fewest, ties broken by an order seeded per rater; a unit that has all its
ratings (or claims for them) is not served again, so ratings spread evenly over the units. A
claim is a unit served and not yet rated; it lapses after `claim_minutes`. A rater always gets
their own open unit back first (after a reload, or on another browser). Nothing here touches
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

from tvr.core.errors import UserError
from tvr.vtt.data.layout import records_file, states_folder
from tvr.vtt.data.predictions import read_predictions
from tvr.vtt.data.records import VttRecord, check_states, read_records
from tvr.vtt.subset import choose_subset
from tvr.vtt.web.models import VttRating, VttServing
from tvr.web.db import IDEMPOTENCY_KEY, Tester, insert, stored_by_key, utcnow
from tvr.web.errors import Refusal

CRITERIA = ("fluency", "relevance", "logical_soundness")
MIN_RATERS = 2


class RateError(Refusal):
    """A bad request of a rater: the message is shown; nothing is stored."""


@dataclass(frozen=True)
class StudyOptions:
    """What to rate: named prediction files, the subset of the split, ratings wanted per unit."""

    predictions: dict[str, Path]
    split: str = "test"
    subset: int | None = 200
    seed: int = 0
    raters: int = MIN_RATERS
    claim_minutes: float = 30.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "predictions": {k: str(v) for k, v in self.predictions.items()},
            "split": self.split,
            "subset": self.subset,
            "seed": self.seed,
            "raters": self.raters,
            "claim_minutes": self.claim_minutes,
        }


@dataclass(frozen=True)
class Unit:
    """One model's descriptions of one sample (`index`: the sample's place in the subset)."""

    index: int
    record: VttRecord
    model: str
    descriptions: tuple[str, ...]

    @property
    def key(self) -> tuple[str, str]:
        return (self.record.id, self.model)

    def rows(self) -> list[dict[str, str]]:
        """What the page lists: "1 → 2: description" for each transformation (an empty one as
        missing), then the descriptions written beyond the last state."""
        out = []
        for k in range(max(self.record.n, len(self.descriptions))):
            text = self.descriptions[k].strip() if k < len(self.descriptions) else ""
            pair = f"{k + 1} → {k + 2}" if k < self.record.n else "extra"
            out.append({"pair": pair, "text": text})
        return out


class Study:
    """The served units of a release folder and named prediction files."""

    def __init__(self, data: str | Path, options: StudyOptions) -> None:
        if options.raters < MIN_RATERS:
            raise UserError(f"each unit needs at least {MIN_RATERS} raters, got {options.raters}")
        if not options.predictions:
            raise UserError("give the predictions to rate: --predictions NAME=FILE ...")
        if options.claim_minutes <= 0:
            raise UserError(f"claim_minutes must be positive, got {options.claim_minutes}")
        path = records_file(data)
        self.states = states_folder(data)
        records = [r for r in read_records(path) if r.split == options.split]
        if not records:
            raise UserError(f"{path}: no {options.split} samples")
        self.options = options
        self.samples = choose_subset(records, options.subset, options.seed)
        check_states(self.samples, self.states, path)
        self.models = list(options.predictions)
        self.units: dict[tuple[str, str], Unit] = {}
        self.warnings: list[str] = []
        for model, file in options.predictions.items():
            preds = read_predictions(file)
            absent = 0
            for index, record in enumerate(self.samples):
                prediction = preds.get(record.id)
                absent += prediction is None
                texts = prediction.transformations if prediction else ()
                self.units[(record.id, model)] = Unit(index, record, model, tuple(texts))
            if absent:
                self.warnings.append(
                    f"{model}: no prediction for {absent} of the "
                    f"{len(self.samples)} samples (shown without descriptions)"
                )
        self.plan_cache: dict[int, list[tuple[str, str]]] = {}

    @property
    def target(self) -> int:
        return self.options.raters

    def state_image(self, index: int, state: int) -> Path | None:
        """The image of state `state` of the subset's sample `index`, or None."""
        if not 0 <= index < len(self.samples):
            return None
        record = self.samples[index]
        if not 0 <= state <= record.n:
            return None
        return self.states / record.state_names()[state]

    def order_for(self, tester_id: int) -> list[tuple[str, str]]:
        """The units in this rater's seeded order (the tie-break of `next_unit`)."""
        order = self.plan_cache.get(tester_id)
        if order is None:
            seed = self.options.seed

            def rank(key: tuple[str, str]) -> bytes:
                return hashlib.sha256(
                    f"{seed}\x1f{tester_id}\x1f{key[0]}\x1f{key[1]}".encode()
                ).digest()

            order = sorted(self.units, key=rank)
            if len(self.plan_cache) > 10_000:
                self.plan_cache.clear()
            self.plan_cache[tester_id] = order
        return order


# --- assignment ------------------------------------------------------------------------------------
@dataclass
class Next:
    """The unit a rater rates next, with their progress."""

    serving: VttServing
    unit: Unit
    rated: int  # units this rater has rated
    still_needed: int  # decided ratings the study still wants, over all units

    @property
    def elapsed(self) -> float:
        return max((utcnow() - self.serving.served_at).total_seconds(), 0.0)


def decided_counts(db: Session, study: Study) -> Counter:
    """Decided ratings per unit of the study."""
    rows = db.execute(
        select(VttRating.sample_id, VttRating.model).where(VttRating.undecided.is_(False))
    )
    return Counter(key for key in map(tuple, rows) if key in study.units)


def still_needed(study: Study, decided: Counter) -> int:
    """Decided ratings the study still wants, summed over its units."""
    return sum(max(0, study.target - decided[k]) for k in study.units)


def open_claims(db: Session, tester: Tester, since: Any) -> Counter:
    """Per unit, the other raters who were served it since `since` and have not rated it."""
    rated = set(
        map(tuple, db.execute(select(VttRating.tester_id, VttRating.sample_id, VttRating.model)))
    )
    served = db.execute(
        select(VttServing.tester_id, VttServing.sample_id, VttServing.model).where(
            VttServing.served_at >= since, VttServing.tester_id != tester.id
        )
    )
    return Counter((s, m) for t, s, m in map(tuple, served) if (t, s, m) not in rated)


def next_unit(db: Session, study: Study, tester: Tester, _retry: bool = True) -> Next | None:
    """The rater's open unit, else a new one (see the module's rules); None when no unit needs
    this rater now."""
    mine = list(
        db.scalars(
            select(VttServing)
            .where(VttServing.tester_id == tester.id)
            .order_by(VttServing.served_at, VttServing.id)
        )
    )
    rated = set(
        map(
            tuple,
            db.execute(
                select(VttRating.sample_id, VttRating.model).where(VttRating.tester_id == tester.id)
            ),
        )
    )
    decided = decided_counts(db, study)
    for serving in mine:
        key = (serving.sample_id, serving.model)
        if key not in rated and key in study.units:
            return Next(serving, study.units[key], len(rated), still_needed(study, decided))
    seen = {(r.sample_id, r.model) for r in mine}
    claims = open_claims(db, tester, utcnow() - timedelta(minutes=study.options.claim_minutes))
    wanted = [
        k
        for k in study.order_for(tester.id)
        if k not in seen and decided[k] + claims[k] < study.target
    ]
    if not wanted:
        return None
    key = min(wanted, key=lambda k: decided[k] + claims[k])  # the first in the rater's order
    serving = VttServing(tester_id=tester.id, sample_id=key[0], model=key[1])
    if not insert(db, serving):  # the same rater asked twice at once: take the other's unit
        if _retry:
            return next_unit(db, study, tester, _retry=False)
        raise RateError("could not choose a sample; reload the page", 409)
    return Next(serving, study.units[key], len(rated), still_needed(study, decided))


# --- ratings ---------------------------------------------------------------------------------------
def submit(
    db: Session,
    study: Study,
    tester: Tester,
    serving_id: int,
    scores: dict[str, int | None],
    undecided: bool,
    key: Any,
    client_seconds: float | None,
) -> tuple[VttRating, bool]:
    """Store a rating of a unit served to this rater: (rating, stored now). A retried key
    returns the rating stored before (stored now: False)."""
    if not isinstance(key, str) or not IDEMPOTENCY_KEY.match(key):
        raise RateError("key must be 8-64 letters, digits, - or _ (one per rating)")
    before = stored_by_key(db, VttRating, tester.id, key)
    if before is not None:
        return before, False
    serving = db.get(VttServing, serving_id)
    if serving is None or serving.tester_id != tester.id:
        raise RateError(f"no sample {serving_id} was served to you", 404)
    unit = study.units.get((serving.sample_id, serving.model))
    if unit is None:
        raise RateError("this sample is not part of the study served now", 404)
    if db.scalar(select(VttRating.id).where(VttRating.serving_id == serving.id)) is not None:
        raise RateError("you have rated this sample already", 409)
    if undecided:
        scores = dict.fromkeys(CRITERIA)
    else:
        for name in CRITERIA:
            if scores.get(name) is None:
                label = name.replace("_", " ")
                raise RateError(f"rate the {label} (1-5), or choose 'cannot decide'")
    if client_seconds is not None and not (math.isfinite(client_seconds) and client_seconds >= 0):
        raise RateError("client_seconds must be a non-negative number or null")
    now = utcnow()
    row = VttRating(
        tester_id=tester.id,
        serving_id=serving.id,
        idempotency_key=key,
        sample_id=unit.record.id,
        model=unit.model,
        n=unit.record.n,
        descriptions_json=json.dumps(list(unit.descriptions), ensure_ascii=False),
        undecided=undecided,
        served_at=serving.served_at,
        submitted_at=now,
        server_seconds=max((now - serving.served_at).total_seconds(), 0.0),
        client_seconds=client_seconds,
        **{name: scores.get(name) for name in CRITERIA},
    )
    if not insert(db, row):  # a doubled request: the other one stored it
        again = stored_by_key(db, VttRating, tester.id, key)
        if again is not None:
            return again, False
        raise RateError("you have rated this sample already", 409)
    return row, True
