"""The human test: per-tester sample order, answer validation, scoring, history and export.

Scoring calls `tvr.trance.eval.metrics.evaluate_steps`, the code behind `tvr evaluate`, so a human
answer and a model prediction are scored alike. Nothing here touches HTTP.
"""

from __future__ import annotations

import hashlib
import json
import random
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from tvr.trance.data.sample import Sample
from tvr.trance.eval.metrics import evaluate_steps, max_steps_for
from tvr.trance.web.catalog import Catalog, SplitData, sample_view
from tvr.trance.world import vocab
from tvr.trance.world.vocab import VIEWS
from tvr.web.db import IDEMPOTENCY_KEY, Answer, Serving, Tester, insert, stored_by_key, utcnow
from tvr.web.errors import Refusal


class AnswerError(Refusal):
    """A bad answer or request: the message is shown to the tester; nothing is stored."""


# --- orders ----------------------------------------------------------------------------------------
def _rng(*parts: str) -> random.Random:
    seed = int.from_bytes(hashlib.sha256("\x1f".join(parts).encode()).digest()[:8], "big")
    return random.Random(seed)


@dataclass(frozen=True)
class Plan:
    """Which samples a tester sees in one test: practice ones first, then the test order."""

    practice_split: SplitData
    practice: list[int]
    test: list[int]


def plan(
    catalog: Catalog, problem: str, split: SplitData, tester_name: str, n_practice: int
) -> Plan:
    """The practice samples come from the train split (another split when testing on train);
    with a single split the practice samples are set aside from it. The test order is a shuffle
    seeded by (tester, problem, split): the same tester always gets the same order."""
    key = (problem, split.name, tester_name, n_practice)
    cached = catalog.plan_cache.get(key)
    if cached is not None:
        return cached
    order = list(range(len(split)))
    _rng(tester_name, problem, split.name).shuffle(order)
    others = [s for n, s in catalog.splits[problem].items() if n != split.name]
    pool = next((s for s in others if s.name == "train"), others[0] if others else None)
    if not n_practice:
        result = Plan(split, [], order)
    elif pool is None:
        keep = max(len(order) - n_practice, 1)
        result = Plan(split, order[keep:], order[:keep])
    else:
        rng = _rng(tester_name, problem, pool.name, "practice")
        result = Plan(pool, rng.sample(range(len(pool)), min(n_practice, len(pool))), order)
    if len(catalog.plan_cache) > 10_000:
        catalog.plan_cache.clear()
    catalog.plan_cache[key] = result
    return result


@dataclass
class Next:
    """The sample to show next, or None when the test is done."""

    practice: bool
    split: SplitData
    index: int
    sample: Sample
    view: str
    position: int  # 1-based number of this sample within its part
    total: int
    served_at: datetime  # when it was first shown to this tester (the start of its clock)
    last_practice: bool = False  # the last practice sample: the test comes next

    @property
    def elapsed(self) -> float:
        """Seconds since the sample was first shown (the clock, also after a reload)."""
        return max((utcnow() - self.served_at).total_seconds(), 0.0)


def next_sample(
    db: Session, catalog: Catalog, tester: Tester, problem: str, split: SplitData, n_practice: int
) -> Next | None:
    """The first sample of the plan the tester has not answered; records when it was served."""
    p = plan(catalog, problem, split, tester.name, n_practice)
    done = {
        (sid, practice)
        for sid, practice in db.execute(
            select(Answer.sample_id, Answer.practice).where(
                Answer.tester_id == tester.id,
                Answer.problem == problem,
                Answer.split.in_({split.name, p.practice_split.name}),
            )
        )
    }
    for practice, sd, indices in ((True, p.practice_split, p.practice), (False, split, p.test)):
        for k, i in enumerate(indices):
            sample = sd.sample(i)
            if (sample.id, practice) in done:
                continue
            view = sample_view(problem, sample)
            row = _serve(db, tester, problem, sd.name, sample.id, i, practice, view)
            last = practice and k + 1 == len(indices) and bool(p.test)
            return Next(practice, sd, i, sample, view, k + 1, len(indices), row.served_at, last)
    return None


def _serve(
    db: Session,
    tester: Tester,
    problem: str,
    split: str,
    sid: str,
    index: int,
    practice: bool,
    view: str,
) -> Serving:
    q = select(Serving).where(
        Serving.tester_id == tester.id,
        Serving.problem == problem,
        Serving.split == split,
        Serving.sample_id == sid,
        Serving.practice == practice,
    )
    row = db.scalar(q)
    if row is not None:
        return row
    row = Serving(
        tester_id=tester.id,
        problem=problem,
        split=split,
        sample_id=sid,
        sample_index=index,
        practice=practice,
        view=view,
    )
    if not insert(db, row):  # the same page opened twice at once
        row = db.scalar(q)
    return row


# --- answers ---------------------------------------------------------------------------------------
def parse_steps(raw: Any, problem: str) -> list[tuple[int, int]]:
    """[(object, value index)] of the submitted steps; AnswerError naming the bad step."""
    limit = max_steps_for(problem)
    if not isinstance(raw, list):
        raise AnswerError("the answer must be a list of steps")
    if not raw:
        raise AnswerError("add at least one step before submitting")
    if len(raw) > limit:
        raise AnswerError(f"{len(raw)} steps, but {problem} allows at most {limit}")
    out = []
    for k, st in enumerate(raw, start=1):
        if not isinstance(st, dict):
            raise AnswerError(f"step {k}: expected an object, attribute and value")
        obj, attr, value = st.get("obj"), st.get("attr"), st.get("value")
        if isinstance(obj, bool) or not isinstance(obj, int) or not 0 <= obj < vocab.NUM_OBJECTS:
            raise AnswerError(f"step {k}: object {obj!r} is not an object index 0..9")
        if not isinstance(value, str) or value not in vocab.VALUE_INDEX:
            raise AnswerError(f"step {k}: {value!r} is not a value (e.g. 'color.red')")
        if attr is not None and attr != vocab.value_attribute(value):
            raise AnswerError(
                f"step {k}: the value {value!r} does not belong to the attribute {attr!r}"
            )
        out.append((obj, vocab.VALUE_INDEX[value]))
    return out


def score_answer(problem: str, sample: Sample, steps: list[tuple[int, int]]) -> dict[str, Any]:
    """The evaluator's detail record of one answer (the same code as `tvr evaluate`). Basic
    answers also get the Event scores (distance), shown as extra information."""
    d = evaluate_steps(sample, steps, problem)
    if problem == "basic":
        e = evaluate_steps(sample, steps, "event")
        d.update({k: e[k] for k in ("distance", "norm_distance", "loose_correct", "broken_rule")})
    return d


def submit(
    db: Session,
    catalog: Catalog,
    tester: Tester,
    problem: str,
    split_name: str,
    sample_id: Any,
    raw_steps: Any,
    key: Any,
    client_seconds: Any,
    practice: bool,
) -> tuple[Answer, bool]:
    """Validate, score and store one answer; (answer, stored now). A repeated idempotency key
    returns the stored answer; every problem raises AnswerError before anything is written."""
    if not isinstance(key, str) or not IDEMPOTENCY_KEY.match(key):
        raise AnswerError("missing or malformed submission key (8-64 letters, digits, - or _)", 400)
    prior = stored_by_key(db, Answer, tester.id, key)
    if prior is not None:
        if prior.sample_id != sample_id:
            raise AnswerError("this submission key was already used for another sample", 409)
        return prior, False
    split = catalog.split(problem, split_name)
    if split is None:
        raise AnswerError(f"unknown problem/split {problem!r}/{split_name!r}", 404)
    if not isinstance(sample_id, str) or len(sample_id) > 200:
        raise AnswerError(f"unknown sample {sample_id!r} in {problem}/{split_name}", 404)
    serving = db.scalar(
        select(Serving).where(
            Serving.tester_id == tester.id,
            Serving.problem == problem,
            Serving.split == split_name,
            Serving.sample_id == sample_id,
            Serving.practice == bool(practice),
        )
    )
    if serving is None:
        if sample_id not in split.index:
            raise AnswerError(f"unknown sample {sample_id!r} in {problem}/{split_name}", 404)
        raise AnswerError(f"sample {sample_id!r} was not given to you in this test", 409)
    steps = parse_steps(raw_steps, problem)
    if client_seconds is not None and (
        isinstance(client_seconds, bool)
        or not isinstance(client_seconds, int | float)
        or not 0 <= client_seconds < 7 * 24 * 3600
    ):
        raise AnswerError(f"bad client time {client_seconds!r}", 400)
    index = serving.sample_index
    sample = split.sample(index)
    d = score_answer(problem, sample, steps)
    now = utcnow()
    rule = d.get("broken_rule")
    answer = Answer(
        tester_id=tester.id,
        idempotency_key=key,
        problem=problem,
        split=split_name,
        sample_id=sample_id,
        sample_index=index,
        practice=bool(practice),
        view=serving.view,
        steps_json=json.dumps([{"obj": o, "value": vocab.VALUES[v]} for o, v in steps]),
        num_ref_steps=len(sample.steps),
        served_at=serving.served_at,
        submitted_at=now,
        server_seconds=max((now - serving.served_at).total_seconds(), 0.0),
        client_seconds=float(client_seconds) if client_seconds is not None else None,
        correct=bool(d["correct"]),
        loose_correct=d.get("loose_correct"),
        distance=d.get("distance"),
        norm_distance=d.get("norm_distance"),
        broken_rule=rule["rule"] if rule else None,
        broken_step=rule["step"] if rule else None,
        obj_correct=d.get("obj_correct"),
        attr_correct=d.get("attr_correct"),
        value_correct=d.get("value_correct"),
    )
    if not insert(db, answer):
        prior = stored_by_key(db, Answer, tester.id, key)
        if prior is not None and prior.sample_id == sample_id:
            return prior, False
        raise AnswerError("this sample is already answered", 409)
    return answer, True


def answer_steps(answer: Answer) -> list[dict[str, Any]]:
    return json.loads(answer.steps_json)


# --- history ----------------------------------------------------------------------------------------
def _mean(xs: list[float]) -> float | None:
    return sum(xs) / len(xs) if xs else None


def history_stats(problem: str, answers: list[Answer]) -> dict[str, Any]:
    """The tester's metrics over finished (non-practice) answers of one problem/split."""
    rows = [a for a in answers if not a.practice]
    out: dict[str, Any] = {
        "count": len(rows),
        "Acc": _mean([float(a.correct) for a in rows]),
        "mean_time": _mean([a.server_seconds for a in rows]),
        "mean_client_time": _mean([a.client_seconds for a in rows if a.client_seconds is not None]),
    }
    if problem == "basic":
        out["ObjAcc"] = _mean([float(bool(a.obj_correct)) for a in rows])
        out["AttrAcc"] = _mean([float(bool(a.attr_correct)) for a in rows])
        out["ValAcc"] = _mean([float(bool(a.value_correct)) for a in rows])
        return out
    out["LAcc"] = _mean([float(bool(a.loose_correct)) for a in rows])
    out["AD"] = _mean([float(a.distance) for a in rows])
    out["AND"] = _mean([float(a.norm_distance) for a in rows])
    out["by_steps"] = {
        k: {"count": len(g), "Acc": _mean([float(a.correct) for a in g])}
        for k in range(1, vocab.MAX_STEPS + 1)
        if (g := [a for a in rows if a.num_ref_steps == k])
    }
    out["by_view"] = {
        v: {"count": len(g), "Acc": _mean([float(a.correct) for a in g])}
        for v in VIEWS
        if (g := [a for a in rows if a.view == v])
    }
    return out


def export_records(problem: str, answers: list[Answer]) -> list[dict[str, Any]]:
    """A tester's test answers as prediction lines that `tvr evaluate` reads."""
    out = []
    for a in sorted((a for a in answers if not a.practice), key=lambda a: a.sample_index):
        rec: dict[str, Any] = {"id": a.sample_id, "steps": answer_steps(a)}
        if problem == "view":
            rec["view"] = a.view
        rec["time_s"] = round(a.server_seconds, 3)
        out.append(rec)
    return out
