"""The bytes of detail.jsonl, put together from a few fragments a row instead of one dict a row.

Each line is what `orjson.dumps(metrics.details(...)[r])` writes, byte for byte (the tests check
it). A line is cut into fragments: the id; the view and num_steps; each reference step; the
prediction's opening; each predicted step (the steps after the K-th of a longer prediction in
one fragment); its end or the problem; and all the scores. Fragments that depend on few values
(a step, the scores of a row) are made once per distinct value, by orjson from the same dict
entries `details` makes, taken from a row that has them; then the fragments of all rows go into
one numpy array and are joined in order, skipping empty ones.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import numpy as np
import orjson

from tvr.trance.eval.metrics import (
    PAD,
    RULE_NAMES,
    PredictionTable,
    ReferenceTable,
    Scores,
    details,
)
from tvr.trance.world import vocab
from tvr.trance.world.vocab import VIEWS

_NEXT = b'}\n{"id":"'  # ends a line and starts the next one
_STEPS = [
    orjson.dumps({"obj": o, "value": vocab.VALUES[v]})
    for o in range(vocab.NUM_OBJECTS)
    for v in range(vocab.NUM_VALUES)
]  # code obj * 33 + value
_ESCAPED = re.compile(r'["\\\x00-\x1f]')  # characters orjson writes escaped


def _objects(frags: list[bytes]) -> np.ndarray:
    out = np.empty(len(frags), dtype=object)
    out[:] = frags
    return out


def _entries(d: dict[str, Any]) -> bytes:
    """`,"k1":v1,"k2":v2` as orjson writes these entries inside an object."""
    return b"," + orjson.dumps(d)[1:-1]


def _codes(x: np.ndarray) -> tuple[np.ndarray, int]:
    """Equality classes of x (floats by their bits, so -0.0 is not 0.0) and their number."""
    x = np.asarray(x)
    if x.dtype.kind == "b":
        return x.astype(np.int64), 2
    if x.dtype.kind in "iu" and len(x) and int(x.max()) - int(x.min()) < 1 << 16:
        low = int(x.min())
        return x.astype(np.int64) - low, int(x.max()) - low + 1
    if x.dtype.kind == "f":
        x = x.astype(np.float64).view(np.int64)
    uniq, inverse = np.unique(x, return_inverse=True)
    return inverse.reshape(-1), len(uniq)


def _by_value(fields: list[np.ndarray], make: Any) -> np.ndarray:
    """make(row) -> bytes for each row, called once per distinct combination of `fields`."""
    key = np.zeros(len(fields[0]), dtype=np.int64)
    total = 1
    for f in fields:
        codes, size = _codes(f)
        if total * size >= 1 << 62:  # renumber the combinations so far before going on
            uniq, key = np.unique(key, return_inverse=True)
            key, total = key.reshape(-1).astype(np.int64), len(uniq)
        key = key * size + codes
        total *= size
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return _objects([make(int(r)) for r in first])[inverse.reshape(-1)]


def _id_texts(ids: list[str]) -> list[bytes]:
    """Each id as orjson writes it, without the quotes."""
    if _ESCAPED.search("".join(ids)) is None:  # then no id holds a NUL either
        return "\x00".join(ids).encode("utf-8").split(b"\x00")
    return [orjson.dumps(i)[1:-1] for i in ids]


def _step_columns(
    objs: np.ndarray, values: np.ndarray, given: np.ndarray
) -> tuple[list[np.ndarray], np.ndarray]:
    """One column per step: `{"obj":o,"value":"name"}`, after a comma but for the first one;
    empty for padding steps and where not `given`; and which are not empty."""
    real = (values != PAD) & given[:, None]
    codes = np.where(real, objs * vocab.NUM_VALUES + values, 0)
    later = (np.cumsum(real, axis=1) - real) > 0
    m = len(_STEPS)
    table = _objects(_STEPS + [b"," + s for s in _STEPS] + [b""])
    cols = [
        table[np.where(real[:, j], codes[:, j] + m * later[:, j], 2 * m)]
        for j in range(values.shape[1])
    ]
    return cols, real


def _plain(ref: ReferenceTable, pred: PredictionTable, s: Scores) -> bool:
    """Whether every step and view lies in the lookup tables (always, for tables tvr reads)."""
    more = pred.more
    if ((more.values < 0) | (more.values >= PAD)).any():
        return False
    if ((more.objs < 0) | (more.objs >= vocab.NUM_OBJECTS)).any():
        return False
    if len(more.rows) and not np.asarray(pred.present)[more.rows].all():
        return False
    for objs, values in ((ref.objs, ref.values), (pred.objs, pred.values)):
        real = values != PAD
        if not ((values >= 0) & (values <= PAD)).all():
            return False
        if not ((objs[real] >= 0) & (objs[real] < vocab.NUM_OBJECTS)).all():
            return False
    if ref.setting != "basic" and np.asarray(s.first_broken_rule).max(initial=0) >= len(RULE_NAMES):
        return False
    return bool((np.asarray(ref.views) < len(VIEWS)).all())


def _dict_lines(ref: ReferenceTable, pred: PredictionTable, s: Scores) -> Iterator[bytes]:
    for d in details(ref, pred, s):
        yield orjson.dumps(d, option=orjson.OPT_SERIALIZE_NUMPY) + b"\n"


def detail_jsonl(
    ref: ReferenceTable, pred: PredictionTable, s: Scores, chunk: int = 50_000
) -> Iterator[bytes]:
    """The bytes of detail.jsonl, `chunk` lines at a time: one line per reference row, exactly
    what `orjson.dumps` makes of each record of `details(ref, pred, s)`."""
    n = len(ref.ids)
    if n == 0:
        return
    if not _plain(ref, pred, s):
        yield from _dict_lines(ref, pred, s)
        return
    views = np.asarray(ref.views)
    nsteps = ref.num_steps
    present = np.asarray(pred.present, dtype=bool)

    def head(r: int) -> bytes:
        d: dict[str, Any] = {"view": VIEWS[views[r]]} if views[r] >= 0 else {}
        d["num_steps"] = int(nsteps[r])
        return b'"' + _entries(d) + b',"reference":['

    ref_steps, ref_real = _step_columns(ref.objs, ref.values, np.ones(n, dtype=bool))
    pred_steps, pred_real = _step_columns(pred.objs, pred.values, present)
    cols = [_objects(_id_texts(ref.ids)), _by_value([views, nsteps], head), *ref_steps]
    cols.append(_objects([b'],"prediction":null', b'],"prediction":['])[present.astype(np.intp)])
    cols += pred_steps
    if len(pred.more.rows):  # the steps after the K-th of longer predictions, one fragment a row
        more = pred.more
        codes = (more.objs * vocab.NUM_VALUES + more.values).tolist()
        tail = np.full(n, b"", dtype=object)
        tail[more.rows] = [
            b"," + b",".join(_STEPS[c] for c in codes[lo:hi])
            for lo, hi in zip(more.start[:-1].tolist(), more.start[1:].tolist(), strict=True)
        ]
        cols.append(tail)
    end = np.full(n, b"]", dtype=object)
    absent = np.flatnonzero(~present)
    end[absent] = [_entries({"problem": pred.errors.get(r, "missing")}) for r in absent.tolist()]
    cols.append(end)
    if ref.setting == "basic":
        fields = [s.correct, s.obj_correct, s.attr_correct, s.value_correct]

        def tail(r: int) -> bytes:
            return _entries(
                {
                    "correct": bool(s.correct[r]),
                    "obj_correct": bool(s.obj_correct[r]),
                    "attr_correct": bool(s.attr_correct[r]),
                    "value_correct": bool(s.value_correct[r]),
                }
            )
    else:
        fields = [
            s.correct,
            s.loose_correct,
            s.distance,
            s.norm_distance,
            s.first_broken_step,
            s.first_broken_rule,
            ref.order_sensitive,
        ]

        def tail(r: int) -> bytes:
            step = int(s.first_broken_step[r])
            rule = RULE_NAMES[int(s.first_broken_rule[r])]
            return _entries(
                {
                    "correct": bool(s.correct[r]),
                    "loose_correct": bool(s.loose_correct[r]),
                    "distance": int(s.distance[r]),
                    "norm_distance": float(s.norm_distance[r]),
                    "broken_rule": {"rule": rule, "step": step + 1} if step >= 0 else None,
                    "order_sensitive": bool(ref.order_sensitive[r]),
                }
            )

    cols.append(_by_value([np.asarray(f) for f in fields], lambda r: tail(r) + _NEXT))
    grid = np.stack(cols, axis=1)
    keep = np.ones(grid.shape, dtype=bool)  # leave out the empty step fragments
    keep[:, 2 : 2 + ref_real.shape[1]] = ref_real
    keep[:, 3 + ref_real.shape[1] : 3 + ref_real.shape[1] + pred_real.shape[1]] = pred_real
    yield b'{"id":"'
    for lo in range(0, n, chunk):
        hi = min(lo + chunk, n)
        text = b"".join(grid[lo:hi][keep[lo:hi]].tolist())
        yield text[: -len(b'{"id":"')] if hi == n else text
