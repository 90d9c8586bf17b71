"""Matching the initial objects to the parsed final ones.

The rule (`match_rules`): a step changes one attribute of one object, so an object keeps every
attribute that no step touched. Each parsed final object is paired with one initial object, and
every pairing is scored by an energy: `STEP` per step it needs, plus how much the parse must be
doubted to accept it. For a categorical attribute the pair either keeps the initial value (its
cost: the negative log-probability the parser gave that value) or changes it (one step plus the
negative log-probability of the new value). A position moves by 8 directions x 1 or 2 steps of
10 units, so a final position lies on a lattice of 10 units around the initial one: the parsed
position is snapped to it, costing the fewest moves that reach the lattice point plus the
squared distance to it over the parser's position noise (`POSITION_SIGMA`). A perception that
knows its objects exactly (the oracle: no probabilities, positions in grid units) makes every
doubt infinite, and the energy is `STEP` times the number of steps.

An initial object that no final object takes either left the view (one "out" move, if one
exists from where it stood), is hidden behind others where it stood (`occluded`, a callable the
solver gives, tells; cost `OCCLUDED` if the parser did not see it in the initial image either,
`BECAME_HIDDEN` if it did), was missed by the parser (`MISSED`), or stands, unseen, in the
invisible area as it started (cost 0). A parsed object paired with nothing is a false
detection (its cost grows with the detector's score; impossible for the oracle). The
explanations are the pairings of least energy; others within `MARGIN` are kept too, and more than
one explanation with different final states means the parse is ambiguous (`Matching.ambiguous`).

`match_gt` (`--matching gt`) pairs by the identities that only the oracle perception knows.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from tvr.trance.solver.scene import WorldObject
from tvr.trance.world import simulator as world
from tvr.trance.world import vocab

#: pairs dearer than this many steps are not considered (a reference has at most 4 steps)
MAX_PAIR_COST = 8
#: explanations kept at most
MAX_EXPLANATIONS = 32
INF = math.inf
#: energy of one step (nats: a step is as unlikely as a parse read against odds of e**3 to 1)
STEP = 3.0
#: the parser's position noise (grid units) for the lattice residual
POSITION_SIGMA = 1.5
#: an exact perception's position tolerance (grid units: rounding only)
EXACT_SIGMA = 0.02
#: an unseen initially visible object: hidden behind others (as the occlusion check says), or
#: missed by the parser although it shows
OCCLUDED, MISSED = 0.5, 2.0 * STEP
#: an object the parser saw in the initial image and not in the final one, where the occlusion
#: check says it would be hidden had it stayed, had stayed hidden 33 times and left 9 times (of
#: 1,200 generated Event samples; where the check says it would show, it left 466 times and
#: stayed hidden twice): staying hidden there costs a step less the log of those odds
BECAME_HIDDEN = STEP - math.log(33.0 / 9.0)
#: an object the parser did not see in the initial image is, by rule B1, never transformed when
#: it was occluded there; it leaves the view only if the parser missed it, which is dearer
UNSEEN_LEAVES = STEP + 2.0
#: the evidence key of an object that left the view
OUT = -1
#: explanations whose energy exceeds the least by at most this are kept (re-scored exactly)
MARGIN = 1.0
#: readings of a parsed object dearer than its cheapest by more than this are not explored
CANDIDATE_SPAN = 4.0 * STEP
#: the search over pairings stops after this many nodes (a parse of noise must not hang it)
MAX_NODES = 20_000

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
    cost: float  # energy: STEP per step plus the parse's doubts
    confidence: float  # product of the paired objects' confidences
    steps: int = 0  # the fewest steps it needs
    hidden: frozenset[int] = frozenset()  # unseen objects read as unchanged (occluded, missed)
    #: (object, state column) of each categorical change (or (object, OUT) of an object that
    #: left the view) -> what reading it otherwise would cost more
    evidence: dict[tuple[int, int], float] = field(default_factory=dict)

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


@dataclass(frozen=True)
class Pairing:
    """What pairing one parsed object with one initial object means: its final grid position,
    categories, energy and steps."""

    grid: tuple[int, int]
    cats: tuple[int, int, int, int]
    cost: float
    steps: int
    margins: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0)  # per changed attribute: keep - change


#: how an initial object looked to the parser in the initial image: the log-probabilities of
#: size, color, material, shape it read there (None: not seen, or no parser)
Reading = tuple[np.ndarray, ...] | None


def _attribute_choice(
    initial_value: int, o: WorldObject, k: int, seen: Reading = None
) -> tuple[int, float, int, float]:
    """(final value, energy, steps, margin) of attribute k (size, color, material, shape) of a
    pair; the margin of a change is what keeping the value would cost more.

    With `seen` (the parser's reading of the same object in the initial image), keeping the value
    costs only what the final image doubts it *more* than the initial image did: a parser that
    misreads an object misreads it in both images, and that is no step."""
    if o.logp is None:
        if o.cats[k] == initial_value:
            return initial_value, 0.0, 0, 0.0
        return o.cats[k], STEP, 1, INF
    lp = o.logp[k]
    keep = -float(lp[initial_value])
    if seen is not None:
        keep = max(0.0, keep + float(seen[k][initial_value]))
    others = np.delete(np.arange(len(lp)), initial_value)
    j = int(others[np.argmax(lp[others])])
    change = STEP - float(lp[j])
    return (initial_value, keep, 0, 0.0) if keep <= change else (j, change, 1, keep - change)


def pairing(initial: np.ndarray, i: int, o: WorldObject, seen: Reading = None) -> Pairing:
    """The best reading of final object `o` as initial object `i` (cost INF if none)."""
    cats, cost, steps, margins = [], 0.0, 0, []
    for k in range(4):
        v, c, n, margin = _attribute_choice(int(initial[i, 2 + k]), o, k, seen)
        cats.append(v)
        cost += c
        steps += n
        margins.append(margin)
    x0, y0 = int(initial[i, world.COL_X]), int(initial[i, world.COL_Y])
    dx, dy = o.world[0] - x0, o.world[1] - y0
    u = vocab.STEP_UNITS
    sx, sy = u * round(dx / u), u * round(dy / u)
    r = math.hypot(dx - sx, dy - sy)
    sigma = EXACT_SIGMA if o.logp is None else POSITION_SIGMA
    moves = moves_needed(sx, sy) if (sx or sy) else 0
    gx, gy = x0 + sx, y0 + sy
    if (
        moves == INF
        or r > 3 * sigma + (0 if o.logp is None else 2.0)
        or not world.is_visible(gx, gy)
    ):
        return Pairing((gx, gy), tuple(cats), INF, 0)  # type: ignore[arg-type]
    cost += 0.5 * (r / sigma) ** 2 + STEP * moves
    return Pairing((gx, gy), tuple(cats), cost, steps + int(moves), tuple(margins))  # type: ignore[arg-type]


def pair_cost(initial: np.ndarray, i: int, o: WorldObject, seen: Reading = None) -> float:
    return pairing(initial, i, o, seen).cost


def extra_cost(o: WorldObject) -> float:
    """Energy of reading a parsed object as a false detection: the surer the detector was, the
    dearer (a step and a half at score 0.25, over four steps at 0.9; the parser's false
    detections above its own threshold are rare: about 0.6% of the objects it reports)."""
    if o.logp is None or o.score >= 1.0:
        return INF
    return STEP * (0.5 + 4.0 * o.score)


def _unpaired_options(
    initial: np.ndarray, i: int, exact_ok: bool, seen: list[Reading] | None
) -> tuple[float, float]:
    """(out cost, least hidden cost) of an initial object no parsed object takes (`exact_ok`:
    it may be hidden at all, i.e. the perception is not exact; `seen`: the initial readings)."""
    if not world.is_visible(int(initial[i, world.COL_X]), int(initial[i, world.COL_Y])):
        return INF, 0.0
    if not exact_ok:
        return (STEP if out_moves(initial, i) else INF), INF
    unseen_before = seen is not None and seen[i] is None
    out = (UNSEEN_LEAVES if unseen_before else STEP) if out_moves(initial, i) else INF
    return out, (OCCLUDED if unseen_before else BECAME_HIDDEN)


def _explanation(
    initial: np.ndarray,
    objs: list[WorldObject],
    pairs: dict[int, int],
    occluded: Callable[[np.ndarray, int], bool] | None,
    seen: list[Reading] | None = None,
) -> Explanation:
    """pairs: final object -> initial index (others: false detections)."""
    target = initial.copy()
    conf, cost, steps = 1.0, 0.0, 0
    evidence: dict[tuple[int, int], float] = {}
    for f, o in enumerate(objs):
        i = pairs.get(f)
        if i is None:
            cost += extra_cost(o)
            continue
        p = pairing(initial, i, o, seen[i] if seen else None)
        target[i, world.COL_X], target[i, world.COL_Y] = p.grid
        target[i, 2:] = p.cats
        for k, margin in enumerate(p.margins):
            if margin:
                evidence[(i, 2 + k)] = margin
        conf *= o.confidence
        cost += p.cost
        steps += p.steps
    taken = set(pairs.values())
    out, hidden = set(), set()
    for i in range(len(initial)):
        if i in taken:
            continue
        out_cost, least = _unpaired_options(initial, i, occluded is not None, seen)
        if not world.is_visible(int(initial[i, 0]), int(initial[i, 1])):
            continue
        # an exact perception lists every object of the visible area: what it lacks left it
        hide = INF if occluded is None else least if occluded(target, i) else MISSED
        if out_cost < hide:
            out.add(i)
            cost += out_cost
            steps += 1
            evidence[(i, OUT)] = hide - out_cost
        else:
            hidden.add(i)
            cost += hide
    return Explanation(target, frozenset(out), cost, conf, steps, frozenset(hidden), evidence)


def match_rules(
    initial: np.ndarray,
    objs: list[WorldObject],
    occluded: Callable[[np.ndarray, int], bool] | None = None,
    seen: list[Reading] | None = None,
    margin: float = MARGIN,
) -> Matching:
    """The least-energy pairings of the parsed final objects with the initial ones, and those
    within `margin` (MARGIN) of it (distinct explanations, best first, at most
    MAX_EXPLANATIONS; the render check asks for a wider margin).

    occluded(state, i): whether object i, where it stands in `state`, is hidden from the
    image's camera by the others (None: the perception is exact, and an unseen object left).
    seen: per initial object, the parser's reading of it in the initial image (`Reading`)."""
    n, m = len(objs), len(initial)
    residual = float(np.mean([o.residual for o in objs])) if objs else 0.0
    costs = np.array(
        [[pair_cost(initial, i, o, seen[i] if seen else None) for i in range(m)] for o in objs]
    ).reshape(n, m)
    extra = np.array([extra_cost(o) for o in objs])
    unpaired = np.array(
        [min(_unpaired_options(initial, i, occluded is not None, seen)) for i in range(m)]
    )
    cand = []
    for f in range(n):
        c: list[tuple[float, int | None]] = [
            (costs[f, i], i) for i in range(m) if costs[f, i] <= STEP * MAX_PAIR_COST
        ]
        if extra[f] < INF:
            c.append((extra[f], None))
        c.sort(key=lambda t: t[0])
        if c:  # readings far dearer than this object's cheapest are not explored
            c = [t for t in c if t[0] <= c[0][0] + CANDIDATE_SPAN]
        cand.append(c)
    if any(not c for c in cand):
        return Matching([], residual)
    order = sorted(range(n), key=lambda f: (len(cand[f]), cand[f][0][0]))
    # lower bound of what the final objects still to pair add: each one's cheapest reading
    min_rest = [0.0] * (n + 1)
    for k in range(n - 1, -1, -1):
        min_rest[k] = min_rest[k + 1] + cand[order[k]][0][0]
    best = [INF]
    found: list[tuple[float, dict[int, int]]] = []
    pairs: dict[int, int] = {}
    used: set[int] = set()
    limit = 4 * MAX_EXPLANATIONS

    nodes = [0]

    def dfs(k: int, cost: float) -> None:
        nodes[0] += 1
        if cost + min_rest[k] > best[0] + margin or nodes[0] > MAX_NODES:
            return
        if k == n:
            total = cost + sum(unpaired[i] for i in range(m) if i not in used)
            if total == INF or total > best[0] + margin:
                return
            best[0] = min(best[0], total)
            found.append((total, dict(pairs)))
            if len(found) > limit:
                found.sort(key=lambda t: t[0])
                del found[limit:]
            return
        f = order[k]
        for c, i in cand[f]:
            if i is None:
                dfs(k + 1, cost + c)
                continue
            if i in used:
                continue
            used.add(i)
            pairs[f] = i
            dfs(k + 1, cost + c)
            used.discard(i)
            del pairs[f]

    dfs(0, 0.0)
    distinct, out = set(), []
    exact = [
        _explanation(initial, objs, p, occluded, seen) for t, p in found if t <= best[0] + margin
    ]
    exact.sort(key=lambda e: (e.cost, -e.confidence))
    for e in exact:
        if e.cost == INF or e.key() in distinct:
            continue
        distinct.add(e.key())
        out.append(e)
        if len(out) >= MAX_EXPLANATIONS:
            break
    if out:
        out = [e for e in out if e.cost <= out[0].cost + margin]
    return Matching(out, residual)


def match_gt(
    initial: np.ndarray,
    objs: list[WorldObject],
    occluded: Callable[[np.ndarray, int], bool] | None = None,
    seen: list[Reading] | None = None,
    margin: float = MARGIN,
) -> Matching:
    """The oracle pairing: each parsed object carries its true index."""
    residual = float(np.mean([o.residual for o in objs])) if objs else 0.0
    if any(o.index is None for o in objs):
        raise ValueError("--matching gt needs a perception that knows the objects' identities")
    pairs = {f: int(o.index) for f, o in enumerate(objs)}  # type: ignore[arg-type]
    e = _explanation(initial, objs, pairs, occluded, seen)
    return Matching([e] if e.cost < INF else [], residual)
