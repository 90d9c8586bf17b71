"""Evaluation of TRANCE predictions by simulation (journal paper, section 4.3).

Basic: ObjAcc, AttrAcc, ValAcc, Acc of the single predicted step (a value is right when it is one
of the reference step's accepted options: any valid out-of-view destination for an "out" move).

Event and View: the predicted steps are applied one by one to the initial state with the
simulator (`tvr.trance.world.simulator`); a step that breaks a rule is applied all the same.
  distance        (object, attribute) pairs that differ from the true final state
  normalized      distance / number of reference steps
  loose correct   distance 0
  correct         loose correct and no step overlaps or leaves the plane
  AD, AND, LAcc, Acc   means over samples
  EO = (LAcc - Acc) / LAcc on the order-sensitive samples: those where some order of the
       reference steps breaks a rule (found here by trying every order).
Breakdowns per number of reference steps and, for View, per final view.

Predictions longer than a reference can be (Event, View: 4 steps) are simulated step by step by
default, as the released evaluator does (it applies every step it is given, so a no-op fifth step
can still be correct); `MAX_STEPS_POLICIES` names the other choices.

Everything runs on numpy arrays over all samples at once; `ReferenceTable` holds the samples'
arrays, `PredictionTable` the predictions', both built once from files.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from tvr.core.errors import InputError, UserError
from tvr.core.gc_pause import without_gc
from tvr.core.jsonl import BOM, input_file, parse_json
from tvr.trance.data.sample import Sample
from tvr.trance.eval.plain import plain_steps
from tvr.trance.eval.policies import MAX_STEPS_POLICIES
from tvr.trance.world import simulator as world
from tvr.trance.world import vocab
from tvr.trance.world.vocab import SETTINGS, VIEWS

PAD = world.PAD_VALUE
_VALUE_ATTR = np.array([*vocab.VALUE_ATTR, -1])


def _setting(setting: str) -> str:
    if setting not in SETTINGS:
        raise UserError(f"setting must be one of {list(SETTINGS)}, got {setting!r}")
    return setting


@dataclass
class ReferenceTable:
    """The samples to score against, as arrays; one row per (sample, view) in View."""

    setting: str
    ids: list[str]
    views: np.ndarray  # (N,) index into camera.VIEWS, -1 outside View
    init: np.ndarray  # (N, 10, 6)
    final: np.ndarray  # (N, 10, 6)
    objs: np.ndarray  # (N, 4) reference objects, padded with -1
    values: np.ndarray  # (N, 4) reference values, padded with PAD
    options: np.ndarray  # (N, 33) accepted values of the first step (Basic)
    order_sensitive: np.ndarray  # (N,)
    index: Mapping[tuple[str, int], int] = field(default_factory=dict)  # (id, view) -> row

    @property
    def num_steps(self) -> np.ndarray:
        return (self.values != PAD).sum(axis=1)

    @classmethod
    def from_samples(
        cls, samples: list[Sample], setting: str, views: tuple[str, ...] = VIEWS
    ) -> ReferenceTable:
        _setting(setting)
        rows: list[tuple[Sample, int]] = []
        for s in samples:
            if setting == "basic" and len(s.steps) != 1:
                continue
            if setting == "view":
                chosen = (s.extra["view"],) if isinstance(s.extra.get("view"), str) else views
                rows.extend((s, VIEWS.index(v)) for v in chosen)
            else:
                rows.append((s, -1))
        n = len(rows)
        init = np.zeros((n, vocab.NUM_OBJECTS, world.NUM_COLS), dtype=np.int16)
        final = np.zeros_like(init)
        objs = np.full((n, vocab.MAX_STEPS), -1, dtype=np.int64)
        values = np.full((n, vocab.MAX_STEPS), PAD, dtype=np.int64)
        options = np.zeros((n, vocab.NUM_VALUES), dtype=bool)
        cache: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for r, (s, _) in enumerate(rows):
            if s.id not in cache:
                cache[s.id] = (s.initial_array, s.final_array)
            init[r], final[r] = cache[s.id]
            for k, st in enumerate(s.steps):
                objs[r, k] = st.obj
                values[r, k] = st.value
            options[r, list(s.steps[0].accepted)] = True
        ids = [s.id for s, _ in rows]
        view_idx = np.array([v for _, v in rows], dtype=np.int64)
        table = cls(
            setting, ids, view_idx, init, final, objs, values, options, np.zeros(n, dtype=bool)
        )
        table.order_sensitive = world.order_sensitive_batch(init, objs, values)
        table.index = {(i, int(v)): r for r, (i, v) in enumerate(zip(ids, view_idx, strict=True))}
        return table


def _no_steps() -> np.ndarray:
    return np.zeros(0, dtype=np.int64)


@dataclass
class LongSteps:
    """The steps after the K-th of the predictions that have more than K, row by row (CSR)."""

    rows: np.ndarray = field(default_factory=_no_steps)  # (M,) ascending table rows
    start: np.ndarray = field(default_factory=lambda: np.zeros(1, dtype=np.int64))  # (M+1,)
    objs: np.ndarray = field(default_factory=_no_steps)  # (T,) objects, row after row
    values: np.ndarray = field(default_factory=_no_steps)  # (T,) values

    @classmethod
    def from_groups(
        cls, rows: np.ndarray, counts: np.ndarray, objs: np.ndarray, values: np.ndarray
    ) -> LongSteps:
        """From groups of `counts` steps given in any row order (each row at most once)."""
        rows, counts = np.asarray(rows, dtype=np.int64), np.asarray(counts, dtype=np.int64)
        order = np.argsort(rows, kind="stable")
        old_start = np.cumsum(counts) - counts
        new_counts = counts[order]
        start = np.concatenate([[0], np.cumsum(new_counts)]).astype(np.int64)
        take = np.arange(int(start[-1])) + np.repeat(old_start[order] - start[:-1], new_counts)
        objs, values = np.asarray(objs, dtype=np.int64), np.asarray(values, dtype=np.int64)
        return cls(rows[order], start, objs[take], values[take])

    def of(self, row: int) -> list[tuple[int, int]]:
        """The steps after the K-th of one row ([] if it has no more)."""
        i = int(np.searchsorted(self.rows, row))
        if i == len(self.rows) or self.rows[i] != row:
            return []
        lo, hi = int(self.start[i]), int(self.start[i + 1])
        return list(zip(self.objs[lo:hi].tolist(), self.values[lo:hi].tolist(), strict=True))


@dataclass
class PredictionTable:
    """Predictions aligned with a ReferenceTable's rows: the first K steps (K: the most a
    reference has) as arrays, the steps after them, if any, in `more`."""

    objs: np.ndarray  # (N, K) padded with -1
    values: np.ndarray  # (N, K) padded with PAD
    present: np.ndarray  # (N,) a usable prediction was given
    errors: dict[int, str]  # row -> why its prediction was not usable (lenient mode)
    problems: list[str]  # lenient mode: every bad line, as "file, line N, field: message"
    more: LongSteps = field(default_factory=LongSteps)  # steps after the K-th (simulate policy)
    long_lines: int = 0  # lines with more steps than K: simulated, or refused by the policy
    max_steps_policy: str = "simulate"

    def steps_of(self, row: int) -> list[tuple[int, int]]:
        """Every predicted step of one row, in order."""
        first = [
            (int(o), int(v))
            for o, v in zip(self.objs[row], self.values[row], strict=True)
            if v != PAD
        ]
        return first + self.more.of(row) if len(self.more.rows) else first


def max_steps_for(setting: str) -> int:
    """The most steps a reference of the setting has (Basic 1, Event and View 4)."""
    return 1 if setting == "basic" else vocab.MAX_STEPS


# MAX_STEPS_POLICIES lives in tvr.trance.eval.policies (light: the CLI's choices import it)


class TooManySteps(InputError):
    """A prediction line with more steps than the max-steps policy allows."""


def step_limit(setting: str, policy: str = "simulate") -> int | None:
    """The most steps a prediction line may have under a max-steps policy; None: no limit."""
    if policy not in MAX_STEPS_POLICIES:
        raise UserError(
            f"max-steps policy must be one of {list(MAX_STEPS_POLICIES)}, got {policy!r}"
        )
    if setting == "basic" or policy != "simulate":
        return max_steps_for(setting)
    return None


def parse_prediction(
    record: Any,
    setting: str,
    path: str | Path = "<predictions>",
    lineno: int | None = None,
    max_steps_policy: str = "simulate",
) -> tuple[str, int, list[tuple[int, int]]]:
    """(sample id, view index or -1, [(object, value)]) of one prediction record; InputError if
    bad (TooManySteps if it has more steps than `max_steps_policy` allows)."""
    if not isinstance(record, dict):
        raise InputError(path, lineno, None, "expected a JSON object with 'id' and 'steps'")
    sid = record.get("id")
    if not isinstance(sid, str) or not sid:
        raise InputError(path, lineno, "id", f"expected a sample id string, got {sid!r}")
    view = -1
    if setting == "view":
        v = record.get("view")
        if v not in VIEWS:
            raise InputError(
                path,
                lineno,
                "view",
                f"expected one of {list(VIEWS)} in the View setting, got {v!r}",
            )
        view = VIEWS.index(v)
    steps = record.get("steps")
    if not isinstance(steps, list):
        raise InputError(
            path, lineno, "steps", f"expected a list of steps, got {type(steps).__name__}"
        )
    limit = step_limit(setting, max_steps_policy)
    if limit is not None and len(steps) > limit:
        why = f"{len(steps)} steps, but {setting} allows at most {limit}"
        if setting != "basic":
            why += f" under --max-steps-policy {max_steps_policy} ('simulate' applies them all)"
        raise TooManySteps(path, lineno, "steps", why)
    out = []
    for k, st in enumerate(steps):
        if isinstance(st, dict):
            obj, value = st.get("obj"), st.get("value")
        elif isinstance(st, list | tuple) and len(st) == 2:
            obj, value = st
        else:
            raise InputError(
                path, lineno, f"steps[{k}]", 'expected {"obj": 0..9, "value": "color.red"}'
            )
        if isinstance(obj, bool) or not isinstance(obj, int) or not 0 <= obj < vocab.NUM_OBJECTS:
            raise InputError(
                path, lineno, f"steps[{k}].obj", f"{obj!r} is not an object index 0..9"
            )
        if value not in vocab.VALUE_INDEX:
            raise InputError(
                path,
                lineno,
                f"steps[{k}].value",
                f"unknown value {value!r} (e.g. 'color.red', 'position.front-left.1')",
            )
        out.append((obj, vocab.VALUE_INDEX[value]))
    return sid, view, out


@without_gc
def read_predictions(
    path: str | Path,
    ref: ReferenceTable,
    lenient: bool = False,
    fast: bool = True,
    max_steps_policy: str = "simulate",
) -> PredictionTable:
    """Predictions of a JSONL file aligned with the reference rows.

    Strict (default): the first bad line raises an InputError naming file, line and field.
    Lenient: a bad line is recorded; if it names a known sample, that sample counts as wrong.
    Lines with more steps than a reference has follow `max_steps_policy` (MAX_STEPS_POLICIES).
    `fast=False` parses every line with the general parser (what the fast path is tested against).
    """
    path = input_file(path)
    limit = step_limit(ref.setting, max_steps_policy)
    n = len(ref.ids)
    k = max_steps_for(ref.setting)
    objs = np.full((n, k), -1, dtype=np.int64)
    values = np.full((n, k), PAD, dtype=np.int64)
    present = np.zeros(n, dtype=bool)
    data = path.read_bytes()
    if not data.strip():
        raise InputError(path, None, None, "no predictions (the file is empty)")
    plain = plain_steps(data, ref, limit) if fast else None
    if plain is not None:  # every line plain and good: read in bulk (plain.py)
        more = _fill_plain(plain, k, objs, values, present)
        return PredictionTable(
            objs, values, present, {}, [], more, len(more.rows), max_steps_policy
        )
    errors, problems, longer, refused = _fill_lines(
        path, ref, k, lenient, max_steps_policy, objs, values, present
    )
    more = _long_steps(longer)
    return PredictionTable(
        objs, values, present, errors, problems, more, len(longer) + refused, max_steps_policy
    )


def _fill_plain(plain: tuple, k: int, objs: np.ndarray, values: np.ndarray,
                present: np.ndarray) -> LongSteps:  # fmt: skip
    """Fill the tables from `plain_steps`' bulk read; the steps after the k-th of each row."""
    rows, counts, step_objs, step_values = plain
    step_rows = np.repeat(rows, counts)
    step_k = np.arange(len(step_rows)) - np.repeat(np.cumsum(counts) - counts, counts)
    more = LongSteps()
    if counts.max(initial=0) > k:  # predictions longer than a reference (simulate policy)
        head, long = step_k < k, counts > k
        more = LongSteps.from_groups(
            rows[long], counts[long] - k, step_objs[~head], step_values[~head]
        )
        step_rows, step_k = step_rows[head], step_k[head]
        step_objs, step_values = step_objs[head], step_values[head]
    objs[step_rows, step_k] = step_objs
    values[step_rows, step_k] = step_values
    present[rows] = True
    return more


def _fill_lines(
    path: Path,
    ref: ReferenceTable,
    k: int,
    lenient: bool,
    max_steps_policy: str,
    objs: np.ndarray,
    values: np.ndarray,
    present: np.ndarray,
) -> tuple[dict[int, str], list[str], dict[int, list[tuple[int, int]]], int]:
    """Fill the tables line by line with the general parser: the rows scored as wrong (lenient)
    and why, the bad lines' messages, each long row's steps after the k-th, and how many lines
    were refused for too many steps."""
    errors: dict[int, str] = {}
    problems: list[str] = []
    seen: dict[int, int] = {}
    longer: dict[int, list[tuple[int, int]]] = {}  # row -> its steps after the k-th
    refused = 0
    with path.open("rb") as f:
        for lineno, line in enumerate(f, start=1):
            if not line.strip():
                continue
            row = None
            if lineno == 1 and line.startswith(BOM):
                line = line[len(BOM):]
            try:
                record = parse_json(line, path, lineno)
                if isinstance(record, dict) and isinstance(record.get("id"), str):
                    v = record.get("view")
                    row = ref.index.get((record["id"], VIEWS.index(v) if v in VIEWS else -1))
                sid, view, steps = parse_prediction(
                    record, ref.setting, path, lineno, max_steps_policy
                )
                row = ref.index.get((sid, view))
                if row is None:
                    what = f"{sid!r}" + (f" with view {VIEWS[view]!r}" if view >= 0 else "")
                    raise InputError(
                        path, lineno, "id", f"unknown sample {what} (not in the samples file)"
                    )
                if row in seen:
                    raise InputError(path, lineno, "id", f"second prediction for {sid!r} "
                                     f"(first on line {seen[row]})")  # fmt: skip
                seen[row] = lineno
                for j, (o, v) in enumerate(steps[:k]):
                    objs[row, j] = o
                    values[row, j] = v
                if len(steps) > k:
                    longer[row] = steps[k:]
                present[row] = True
            except InputError as err:
                too_long = isinstance(err, TooManySteps)
                refused += too_long
                if not (lenient or (too_long and max_steps_policy == "lenient")):
                    raise
                problems.append(str(err))
                if row is not None and row not in seen:
                    errors[row] = err.reason
                    seen[row] = lineno
    return errors, problems, longer, refused


def _long_steps(longer: dict[int, list[tuple[int, int]]]) -> LongSteps:
    """The steps after the k-th of the rows of `longer`, as one LongSteps table."""
    if not longer:
        return LongSteps()
    tails = list(longer.values())
    return LongSteps.from_groups(
        np.fromiter(longer, dtype=np.int64, count=len(longer)),
        np.array([len(t) for t in tails], dtype=np.int64),
        np.array([o for t in tails for o, _ in t], dtype=np.int64),
        np.array([v for t in tails for _, v in t], dtype=np.int64),
    )


# --- scoring ---------------------------------------------------------------------------------------------
@dataclass
class Scores:
    """Per-row results of one evaluation."""

    setting: str
    correct: np.ndarray
    loose_correct: np.ndarray | None = None
    distance: np.ndarray | None = None
    norm_distance: np.ndarray | None = None
    first_broken_step: np.ndarray | None = None  # 0-based, -1 none
    first_broken_rule: np.ndarray | None = None  # 0 none, 1 off_plane, 2 overlap
    obj_correct: np.ndarray | None = None
    attr_correct: np.ndarray | None = None
    value_correct: np.ndarray | None = None


RULE_NAMES = (None, "off_plane", "overlap")


def score_basic(ref: ReferenceTable, pred: PredictionTable) -> Scores:
    has = pred.present & (pred.values[:, 0] != PAD)
    v = np.where(has, pred.values[:, 0], 0)
    obj_ok = has & (pred.objs[:, 0] == ref.objs[:, 0])
    val_ok = has & ref.options[np.arange(len(v)), v]
    attr_ok = has & (_VALUE_ATTR[v] == _VALUE_ATTR[ref.values[:, 0]])
    return Scores(
        "basic", obj_ok & val_ok, obj_correct=obj_ok, attr_correct=attr_ok, value_correct=val_ok
    )


def _first_broken(sim: world.BatchResult) -> tuple[np.ndarray, np.ndarray]:
    """(first step that breaks a rule, 0-based or -1; that rule: 0 none, 1 off_plane, 2 overlap)."""
    rules = np.where(sim.off_plane, 1, np.where(sim.overlap, 2, 0))  # (B, K)
    broken = rules > 0
    first = np.where(broken.any(axis=1), broken.argmax(axis=1), -1)
    first_rule = np.where(first >= 0, rules[np.arange(len(first)), np.maximum(first, 0)], 0)
    return first, first_rule


def _simulate_more(
    states: np.ndarray, more: LongSteps
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Go on simulating the rows of `more` from `states` (M, 10, 6) with their further steps:
    (final states, first broken step among them or -1, its rule). Rows are batched by length,
    within a factor of two, so the padded arrays stay under twice the steps."""
    counts = np.diff(more.start)
    final = states.astype(np.int32)  # many moves may carry a position past int16
    first = np.full(len(counts), -1, dtype=np.int64)
    rule = np.zeros(len(counts), dtype=np.int64)
    group = np.floor(np.log2(np.maximum(counts, 1))).astype(np.int64)
    step_row = np.repeat(np.arange(len(counts)), counts)
    step_k = np.arange(len(step_row)) - np.repeat(more.start[:-1], counts)
    for g in np.unique(group):
        sel = np.flatnonzero(group == g)
        local = np.zeros(len(counts), dtype=np.int64)
        local[sel] = np.arange(len(sel))
        steps = np.flatnonzero(group[step_row] == g)
        width = int(counts[sel].max())
        objs = np.full((len(sel), width), -1, dtype=np.int64)
        values = np.full((len(sel), width), PAD, dtype=np.int64)
        objs[local[step_row[steps]], step_k[steps]] = more.objs[steps]
        values[local[step_row[steps]], step_k[steps]] = more.values[steps]
        sim = world.apply_steps_batch(final[sel], objs, values)
        final[sel] = sim.final
        first[sel], rule[sel] = _first_broken(sim)
    return final, first, rule


def score_event(ref: ReferenceTable, pred: PredictionTable) -> Scores:
    sim = world.apply_steps_batch(ref.init, pred.objs, pred.values)
    final = sim.final
    first, first_rule = _first_broken(sim)
    if len(pred.more.rows):  # predictions longer than K: every further step is applied too
        rows = pred.more.rows
        tail_final, tail_first, tail_rule = _simulate_more(final[rows], pred.more)
        final = final.astype(np.int32)
        final[rows] = tail_final
        later = (first[rows] < 0) & (tail_first >= 0)
        first[rows[later]] = pred.objs.shape[1] + tail_first[later]
        first_rule[rows[later]] = tail_rule[later]
    dist = world.distance_batch(final, ref.final)
    nref = ref.num_steps
    usable = pred.present
    loose = usable & (dist == 0)
    correct = loose & (first < 0)
    return Scores(
        ref.setting,
        correct=correct,
        loose_correct=loose,
        distance=dist,
        norm_distance=dist / np.maximum(nref, 1),
        first_broken_step=first,
        first_broken_rule=first_rule,
    )


def score(ref: ReferenceTable, pred: PredictionTable) -> Scores:
    return score_basic(ref, pred) if ref.setting == "basic" else score_event(ref, pred)


def _mean(x: np.ndarray) -> float | None:
    return float(x.mean()) if len(x) else None


def _event_block(s: Scores, mask: np.ndarray) -> dict[str, Any]:
    n = int(mask.sum())
    return {
        "count": n,
        "AD": _mean(s.distance[mask]),
        "AND": _mean(s.norm_distance[mask]),
        "LAcc": _mean(s.loose_correct[mask].astype(float)),
        "Acc": _mean(s.correct[mask].astype(float)),
    }


def summarize(ref: ReferenceTable, pred: PredictionTable, s: Scores) -> dict[str, Any]:
    """The summary.json of an evaluation: metrics, breakdowns, missing and bad predictions."""
    n = len(ref.ids)
    all_rows = np.ones(n, dtype=bool)
    missing = ~pred.present & ~np.isin(np.arange(n), list(pred.errors))
    out: dict[str, Any] = {
        "setting": ref.setting,
        "samples": n,
        "predicted": int(pred.present.sum()),
        "missing": int(missing.sum()),
        "invalid": len(pred.problems),
        "invalid_rows": len(pred.errors),
        "long_predictions": pred.long_lines,
        "max_steps_policy": pred.max_steps_policy,
    }
    if ref.setting == "basic":
        out["metrics"] = {
            "ObjAcc": _mean(s.obj_correct.astype(float)),
            "AttrAcc": _mean(s.attr_correct.astype(float)),
            "ValAcc": _mean(s.value_correct.astype(float)),
            "Acc": _mean(s.correct.astype(float)),
        }
        attr = _VALUE_ATTR[ref.values[:, 0]]
        out["by_attribute"] = {
            a: {"count": int((attr == i).sum()), "Acc": _mean(s.correct[attr == i].astype(float))}
            for i, a in enumerate(vocab.ATTRIBUTES)
        }
        return out
    out["metrics"] = _event_block(s, all_rows)
    del out["metrics"]["count"]
    nsteps = ref.num_steps
    out["by_steps"] = {str(k): _event_block(s, nsteps == k) for k in range(1, vocab.MAX_STEPS + 1)}
    if ref.setting == "view":
        out["by_view"] = {VIEWS[v]: _event_block(s, ref.views == v) for v in range(len(VIEWS))}
    os_mask = ref.order_sensitive
    block = _event_block(s, os_mask)
    lacc, acc = block["LAcc"], block["Acc"]
    block["EO"] = (lacc - acc) / lacc if lacc else None
    block["share"] = float(os_mask.mean()) if n else None
    out["order_sensitive"] = block
    rules = s.first_broken_rule
    out["broken_rules"] = {
        name: int((rules == i).sum()) for i, name in enumerate(RULE_NAMES) if name
    }
    return out


def details(ref: ReferenceTable, pred: PredictionTable, s: Scores) -> list[dict[str, Any]]:
    """One record per reference row (the lines of detail.jsonl)."""
    out = []
    nsteps = ref.num_steps
    for r, sid in enumerate(ref.ids):
        d: dict[str, Any] = {"id": sid}
        if ref.views[r] >= 0:
            d["view"] = VIEWS[ref.views[r]]
        d["num_steps"] = int(nsteps[r])
        d["reference"] = [
            {"obj": int(o), "value": vocab.VALUES[v]}
            for o, v in zip(ref.objs[r], ref.values[r], strict=True)
            if v != PAD
        ]
        d["prediction"] = (
            [{"obj": o, "value": vocab.VALUES[v]} for o, v in pred.steps_of(r)]
            if pred.present[r]
            else None
        )
        if not pred.present[r]:
            d["problem"] = pred.errors.get(r, "missing")
        d["correct"] = bool(s.correct[r])
        if ref.setting == "basic":
            d["obj_correct"] = bool(s.obj_correct[r])
            d["attr_correct"] = bool(s.attr_correct[r])
            d["value_correct"] = bool(s.value_correct[r])
        else:
            d["loose_correct"] = bool(s.loose_correct[r])
            d["distance"] = int(s.distance[r])
            d["norm_distance"] = float(s.norm_distance[r])
            step = int(s.first_broken_step[r])
            d["broken_rule"] = (
                {"rule": RULE_NAMES[int(s.first_broken_rule[r])], "step": step + 1}
                if step >= 0
                else None
            )
            d["order_sensitive"] = bool(ref.order_sensitive[r])
        out.append(d)
    return out


def evaluate_steps(
    sample: Sample, steps: list[tuple[int, int]], setting: str = "event"
) -> dict[str, Any]:
    """Score one prediction of one sample (what the web app and VLM runner call). Event and
    View apply every step, as `tvr evaluate` does by default; Basic scores the first."""
    ref = ReferenceTable.from_samples([sample], "event" if setting == "view" else setting)
    k = max_steps_for(setting)
    objs = np.full((1, k), -1, dtype=np.int64)
    values = np.full((1, k), PAD, dtype=np.int64)
    for j, (o, v) in enumerate(steps[:k]):
        objs[0, j], values[0, j] = o, v
    more = LongSteps()
    if setting != "basic" and len(steps) > k:
        rest = steps[k:]
        more = LongSteps.from_groups(
            np.zeros(1), np.array([len(rest)]), [o for o, _ in rest], [v for _, v in rest]
        )
    pred = PredictionTable(objs, values, np.ones(1, dtype=bool), {}, [], more, len(more.rows))
    return details(ref, pred, score(ref, pred))[0]
