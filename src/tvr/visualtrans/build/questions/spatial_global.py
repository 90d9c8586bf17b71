"""Spatial global: has the left-to-right order of a row, the 2 x 2 layout of four objects, or
their clockwise / counterclockwise order changed?

The correct option states the truth of the metadata (unchanged: the arrangement; changed: from
before to after); the distractors state arrangements that are not the truth (other orders, a
change that did not happen or not this one), drawn with the seed.
"""

from __future__ import annotations

import itertools

from tvr.visualtrans.build.questions.base import Context, Draft, EpisodeView, Family
from tvr.visualtrans.build.schemas import QUADRANTS

NO = "No, the relative positions{how} remain unchanged; the arrangement is: {a}."
YES = "Yes, the relative positions{how} have changed; the arrangement changed from {a} to {b}."


def _options(before: str, after: str, others: list[str], how: str = "") -> tuple[str, list[str]]:
    """The correct statement and distractor statements over the arrangement texts."""
    if before == after:
        correct = NO.format(how=how, a=before)
    else:
        correct = YES.format(how=how, a=before, b=after)
    pool = [NO.format(how=how, a=o) for o in [*others, after] if o != before or before != after]
    pool += [YES.format(how=how, a=before, b=o) for o in others if o != after and o != before]
    pool += [YES.format(how=how, a=o, b=before) for o in others if o != before]
    return correct, [p for p in dict.fromkeys(pool) if p != correct]


def row_order(ep: EpisodeView, ctx: Context) -> list[Draft]:
    m = ep.meta
    before, after = ", ".join(m.initial_order), ", ".join(m.final_order)
    others = [", ".join(p) for p in itertools.permutations(m.initial_order)]
    correct, pool = _options(before, after, [o for o in others if o not in (before, after)])
    return [Draft("global.row_order", ep.episode, ep.scene, ep.episode, [ep.start, ep.end],
                  "Has the relative left-to-right position of the three objects (left, middle, "
                  "right) changed?", "choice", correct=correct, distractors=tuple(pool))]  # fmt: skip


def _quadrant_text(places: dict[str, str]) -> str:
    return ", ".join(f"{places[q]} ({q})" for q in ("top-left", "top-right", "bottom-left",
                                                     "bottom-right"))  # fmt: skip


def quadrant(ep: EpisodeView, ctx: Context) -> list[Draft]:
    m = ep.meta
    before, after = _quadrant_text(m.before), _quadrant_text(m.after)
    rng = ctx.rng("global.quadrant", ep.episode)
    others = []
    for perm in itertools.permutations(m.objects):
        text = _quadrant_text(dict(zip(QUADRANTS, perm, strict=False)))
        if text not in (before, after):
            others.append(text)
    others = [others[i] for i in rng.permutation(len(others))[:6]]
    correct, pool = _options(before, after, others, " (top-left, top-right, bottom-left, "
                                                    "bottom-right)")  # fmt: skip
    return [Draft("global.quadrant", ep.episode, ep.scene, ep.episode, [ep.start, ep.end],
                  "Has the relative position (top-left, top-right, bottom-left, bottom-right) of "
                  "the four objects changed?", "choice", correct=correct,
                  distractors=tuple(pool))]  # fmt: skip


def cycle(places: dict[str, str], clockwise: bool) -> list[str]:
    """The objects around the 2 x 2 layout from the alphabetically first one."""
    order = [places[q] for q in QUADRANTS]
    if not clockwise:
        order = order[::-1]
    k = order.index(min(order))
    return order[k:] + order[:k]


def cyclic(ep: EpisodeView, ctx: Context) -> list[Draft]:
    m = ep.meta
    out = []
    for clockwise in (True, False):
        word = "clockwise" if clockwise else "counterclockwise"
        b, a = cycle(m.before, clockwise), cycle(m.after, clockwise)
        before, after = " → ".join(b), " → ".join(a)
        first = b[0]
        others = [" → ".join([first, *p]) for p in itertools.permutations(b[1:])]
        others = [o for o in others if o not in (before, after)]
        correct, pool = _options(before, after, others, f" ({word})")
        out.append(Draft("global.cyclic", f"{ep.episode}|{word}", ep.scene, ep.episode,
                         [ep.start, ep.end],
                         f"Has the {word} spatial order of the four objects changed?", "choice",
                         correct=correct, distractors=tuple(pool)))  # fmt: skip
    return out


FAMILIES = (
    Family("global.row_order", "spatial_global", "choice", ("row",), row_order,
           r"^has the relative left-to-right position of the three", "row order changed?"),
    Family("global.quadrant", "spatial_global", "choice", ("rack",), quadrant,
           r"^has the relative position \(top-left", "2 x 2 layout changed?"),
    Family("global.cyclic", "spatial_global", "choice", ("rack",), cyclic,
           r"^has the (counter)?clockwise spatial order", "cyclic order changed?"),
)  # fmt: skip
