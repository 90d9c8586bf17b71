"""Search for an order of the steps that the simulator applies without breaking a rule.

Complete over the choices and the orders: every combination of the groups' alternatives, and
every order of its position and size steps, is simulated with
`tvr.trance.world.simulator.apply_steps_batch` (many at once). Colour, material and shape steps
change neither positions nor sizes, so they break no rule wherever they stand and are put first
(the reasoning of `simulator.order_sensitive_batch`); the orders of the geometric steps are all
tried, so for up to 4 steps this is every permutation that can differ. Beyond 7 geometric
steps (never a reference: at most 4 steps) only the first MAX_ORDERS orders, and at most
MAX_COMBINATIONS combinations, and MAX_SIMULATED sequences in all, are tried, so that a parse of
noise cannot hang the search (every reference needs under 6,000).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from tvr.trance.solver.steps import Group, Step
from tvr.trance.world import simulator as world
from tvr.trance.world import vocab

#: rows simulated per batch
CHUNK = 20000
#: orders of the geometric steps tried per combination at most (7! = 5040: complete up to 7)
MAX_ORDERS = 5040
#: combinations of the groups' alternatives tried at most (a noisy parse can need many)
MAX_COMBINATIONS = 20000
#: sequences simulated at most per search: past it the search gives up (an invalid order)
MAX_SIMULATED = 200_000


def _geometric(value: int) -> bool:
    return vocab.value_attribute(value) in ("position", "size")


@dataclass(frozen=True)
class Order:
    steps: list[Step]
    valid: bool  # breaks no rule
    tried: int  # sequences simulated


def find_order(initial: np.ndarray, groups: list[Group]) -> Order | None:
    """The first sequence (fewest steps first) that breaks no rule; if none does, an invalid one
    (the first combination in the groups' order); None when a group has no alternative."""
    if any(not g for g in groups):
        return None
    combos = list(itertools.islice(itertools.product(*groups), MAX_COMBINATIONS))
    combos.sort(key=lambda c: sum(len(a) for a in c))
    fallback: list[Step] | None = None
    tried = 0
    for _length, same in itertools.groupby(combos, key=lambda c: sum(len(a) for a in c)):
        rows_plain, rows_geo = [], []
        for combo in same:
            steps = [s for alt in combo for s in alt]
            plain = [s for s in steps if not _geometric(s[1])]
            geo = [s for s in steps if _geometric(s[1])]
            rows_plain.append(plain)
            rows_geo.append(geo)
            if fallback is None:
                fallback = plain + geo
        ngeo = len(rows_geo[0])
        if ngeo == 0:
            return Order(rows_plain[0], True, tried + 1)
        perms = list(itertools.islice(itertools.permutations(range(ngeo)), MAX_ORDERS))
        perms_a = np.array(perms, dtype=np.int64)
        geo_obj = np.array([[s[0] for s in g] for g in rows_geo], dtype=np.int64)
        geo_val = np.array([[s[1] for s in g] for g in rows_geo], dtype=np.int64)
        # every (combination, order) row; plain steps need no simulation
        per = len(perms)
        step = max(1, CHUNK // per)
        for start in range(0, len(rows_geo), step):
            o = geo_obj[start : start + step][:, perms_a].reshape(-1, ngeo)
            v = geo_val[start : start + step][:, perms_a].reshape(-1, ngeo)
            states = np.broadcast_to(initial, (len(o), *initial.shape))
            invalid = world.apply_steps_batch(states, o, v).invalid.any(axis=1)
            tried += len(o)
            ok = np.flatnonzero(~invalid)
            if not len(ok) and tried >= MAX_SIMULATED:
                return Order(fallback or [], False, tried)
            if len(ok):
                r = int(ok[0])
                c = start + r // per
                geo = [(int(a), int(b)) for a, b in zip(o[r], v[r], strict=True)]
                return Order(rows_plain[c] + geo, True, tried)
    return Order(fallback or [], False, tried)
