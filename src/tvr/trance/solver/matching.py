"""Matching the initial objects to the parsed final ones.

The rule (`match_rules`): a step changes one attribute of one object, so an object keeps every
attribute that no step touched. Each final object is paired with one initial object; the cost of
a pair is the number of steps it needs: one per categorical attribute that differs, and the
fewest position moves (8 directions x 1 or 2 steps of 10 units) that carry the object from its
initial grid point to the final one (a displacement that is no sum of moves cannot be a pair).
An initial object that no final object takes either left the view (it stood in the visible area:
one "out" move, if one exists from where it stood) or stands, unseen, in the invisible area as
it started (cost 0). The explanations are the pairings of least total cost; more than one
distinct one means the parse is ambiguous (`Matching.ambiguous`).

`match_gt` (`--matching gt`) pairs by the identities that only the oracle perception knows.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from tvr.trance.solver.scene import WorldObject
from tvr.trance.world import simulator as world
from tvr.trance.world import vocab

MATCHINGS = ("rules", "gt")
#: pairs dearer than this many steps are not considered (a reference has at most 4 steps)
MAX_PAIR_COST = 8
#: tied explanations kept at most
MAX_EXPLANATIONS = 32
INF = math.inf

#: the 16 position values as (value index, dx, dy) in grid units
MOVES: tuple[tuple[int, int, int], ...] = tuple(
    (v, vocab.VALUE_DX[v], vocab.VALUE_DY[v])
    for v in range(vocab.NUM_VALUES)
    if vocab.ATTRIBUTES[vocab.VALUE_ATTR[v]] == "position"
)
_SPAN = (vocab.GRID_MAX - vocab.GRID_MIN) // vocab.STEP_UNITS  # 8 steps of 10 across the plane


@lru_cache(maxsize=1)
def _move_table() -> dict[tuple[int, int], int]:
    """Fewest moves for each displacement (in tens of grid units) within the plane's span."""
    unit = [(dx // vocab.STEP_UNITS, dy // vocab.STEP_UNITS) for _, dx, dy in MOVES]
    dist = {(0, 0): 0}
    queue = deque([(0, 0)])
    while queue:
        a, b = queue.popleft()
        for ua, ub in unit:
            n = (a + ua, b + ub)
            if abs(n[0]) <= _SPAN and abs(n[1]) <= _SPAN and n not in dist:
                dist[n] = dist[(a, b)] + 1
                queue.append(n)
    return dist


def moves_needed(dx: int, dy: int) -> float:
    """Fewest position moves for a displacement in grid units (inf if no sum of moves)."""
    if dx % vocab.STEP_UNITS or dy % vocab.STEP_UNITS:
        return INF
    return _move_table().get((dx // vocab.STEP_UNITS, dy // vocab.STEP_UNITS), INF)


def out_moves(state: np.ndarray, obj: int) -> list[int]:
    """Position values that carry `obj` from where it stands in `state` onto the plane's
    invisible area (overlap is the search's business: it depends on the order)."""
    x, y = int(state[obj, world.COL_X]), int(state[obj, world.COL_Y])
    return [
        v for v, dx, dy in MOVES
        if world.on_plane(x + dx, y + dy) and not world.is_visible(x + dx, y + dy)
    ]  # fmt: skip


@dataclass(frozen=True)
class Explanation:
    """One reading of the final image: the state each initial object ends in (`target`), with
    the objects that left the view (`out`: anywhere in the invisible area)."""

    target: np.ndarray  # (10, 6)
    out: frozenset[int]
    cost: float  # steps it needs at least
    confidence: float  # product of the paired objects' confidences

    def key(self) -> tuple[bytes, frozenset[int]]:
        return (self.target.tobytes(), self.out)


@dataclass
class Matching:
    explanations: list[Explanation] = field(default_factory=list)
    residual: float = 0.0  # mean distance of the parsed positions to their grid points

    @property
    def ambiguous(self) -> bool:
        return len(self.explanations) > 1

    @property
    def cost(self) -> float:
        return self.explanations[0].cost if self.explanations else INF


def pair_cost(initial: np.ndarray, i: int, o: WorldObject) -> float:
    cats = int(sum(int(initial[i, 2 + k]) != o.cats[k] for k in range(4)))
    dx = o.grid[0] - int(initial[i, world.COL_X])
    dy = o.grid[1] - int(initial[i, world.COL_Y])
    return cats + (moves_needed(dx, dy) if (dx or dy) else 0)


def _unpaired_cost(initial: np.ndarray, i: int) -> float:
    if world.is_visible(int(initial[i, world.COL_X]), int(initial[i, world.COL_Y])):
        return 1 if out_moves(initial, i) else INF
    return 0


def _explanation(
    initial: np.ndarray, objs: list[WorldObject], pairs: dict[int, int]
) -> Explanation:
    """pairs: final object -> initial index."""
    target = initial.copy()
    conf, cost = 1.0, 0.0
    for f, i in pairs.items():
        o = objs[f]
        target[i, world.COL_X], target[i, world.COL_Y] = o.grid
        target[i, 2:] = o.cats
        conf *= o.confidence
        cost += pair_cost(initial, i, o)
    taken = set(pairs.values())
    out = frozenset(
        i for i in range(len(initial))
        if i not in taken and world.is_visible(int(initial[i, 0]), int(initial[i, 1]))
    )  # fmt: skip
    cost += sum(_unpaired_cost(initial, i) for i in range(len(initial)) if i not in taken)
    return Explanation(target, out, cost, conf)


def match_rules(initial: np.ndarray, objs: list[WorldObject]) -> Matching:
    """Every least-cost pairing of the parsed final objects with the initial ones (distinct
    explanations only, at most MAX_EXPLANATIONS)."""
    n, m = len(objs), len(initial)
    residual = float(np.mean([o.residual for o in objs])) if objs else 0.0
    if n > m:
        return Matching([], residual)
    costs = np.array([[pair_cost(initial, i, o) for i in range(m)] for o in objs]).reshape(n, m)
    unpaired = np.array([_unpaired_cost(initial, i) for i in range(m)])
    cand = [sorted((c, i) for i, c in enumerate(costs[f]) if c <= MAX_PAIR_COST) for f in range(n)]
    order = sorted(range(n), key=lambda f: (len(cand[f]), cand[f][0][0] if cand[f] else 0))
    if any(not c for c in cand):
        return Matching([], residual)
    # lower bound of what the final objects still to pair add: each one's cheapest pair
    min_rest = [0.0] * (n + 1)
    for k in range(n - 1, -1, -1):
        min_rest[k] = min_rest[k + 1] + cand[order[k]][0][0]
    best = [INF]
    found: list[dict[int, int]] = []
    pairs: dict[int, int] = {}
    used: set[int] = set()

    def dfs(k: int, cost: float) -> None:
        if cost + min_rest[k] > best[0]:
            return
        if k == n:
            total = cost + sum(unpaired[i] for i in range(m) if i not in used)
            if total < best[0]:
                best[0] = total
                found.clear()
            if total == best[0] and total < INF and len(found) < 4 * MAX_EXPLANATIONS:
                found.append(dict(pairs))
            return
        f = order[k]
        for c, i in cand[f]:
            if i in used:
                continue
            used.add(i)
            pairs[f] = i
            dfs(k + 1, cost + c)
            used.discard(i)
            del pairs[f]

    dfs(0, 0.0)
    seen, out = set(), []
    for p in found:
        e = _explanation(initial, objs, p)
        if e.key() not in seen:
            seen.add(e.key())
            out.append(e)
        if len(out) >= MAX_EXPLANATIONS:
            break
    out.sort(key=lambda e: -e.confidence)
    return Matching(out, residual)


def match_gt(initial: np.ndarray, objs: list[WorldObject]) -> Matching:
    """The oracle pairing: each parsed object carries its true index."""
    residual = float(np.mean([o.residual for o in objs])) if objs else 0.0
    if any(o.index is None for o in objs):
        raise ValueError("--matching gt needs a perception that knows the objects' identities")
    pairs = {f: int(o.index) for f, o in enumerate(objs)}  # type: ignore[arg-type]
    e = _explanation(initial, objs, pairs)
    return Matching([e] if e.cost < INF else [], residual)
