"""The atomic steps that explain a matching.

Each changed (object, attribute) gives a *group*: the alternative step sequences that produce the
change. A categorical attribute has one: the step setting the final value (a colour changed twice
ends as one step to its last value, which leaves the same final state). A position has every
multiset of position moves, of the fewest moves needed (`tier` 0) or one more (`tier` 1), that
sums to the displacement; an object that left the view has every single move that lands it on the
plane's invisible area (the evaluator counts any invisible spot as equal).
"""

from __future__ import annotations

import itertools
from functools import lru_cache

import numpy as np

from tvr.trance.solver.matching import MOVES, Explanation, moves_needed, out_moves
from tvr.trance.world import simulator as world
from tvr.trance.world import vocab

Step = tuple[int, int]  # (object, value index)
Group = list[tuple[Step, ...]]  # alternatives

_CAT_COLS = (
    ("size", world.COL_SIZE, vocab.SIZES),
    ("color", world.COL_COLOR, vocab.COLORS),
    ("material", world.COL_MATERIAL, vocab.MATERIALS),
    ("shape", world.COL_SHAPE, vocab.SHAPES),
)


@lru_cache(maxsize=4096)
def decompositions(dx: int, dy: int, count: int) -> tuple[tuple[int, ...], ...]:
    """Multisets of `count` position values whose moves sum to (dx, dy) grid units."""
    out = []
    for combo in itertools.combinations_with_replacement(range(len(MOVES)), count):
        if sum(MOVES[k][1] for k in combo) == dx and sum(MOVES[k][2] for k in combo) == dy:
            out.append(tuple(MOVES[k][0] for k in combo))
    return tuple(out)


def derive_groups(initial: np.ndarray, expl: Explanation, tier: int = 0) -> list[Group]:
    """The step groups of an explanation; `tier` extra moves allowed per position change."""
    groups: list[Group] = []
    target = expl.target
    for i in range(len(initial)):
        if i in expl.out:
            groups.append([((i, v),) for v in out_moves(initial, i)])
            continue
        for attr, col, names in _CAT_COLS:
            if target[i, col] != initial[i, col]:
                value = vocab.VALUE_INDEX[f"{attr}.{names[int(target[i, col])]}"]
                groups.append([((i, value),)])
        dx = int(target[i, world.COL_X]) - int(initial[i, world.COL_X])
        dy = int(target[i, world.COL_Y]) - int(initial[i, world.COL_Y])
        if dx or dy:
            k = int(moves_needed(dx, dy)) + tier
            groups.append([tuple((i, v) for v in d) for d in decompositions(dx, dy, k)])
    return groups
