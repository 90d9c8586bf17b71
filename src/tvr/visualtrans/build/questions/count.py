"""Counting: food items newly on the plate or put back into the basket, new groups of beads of
one colour, cups whose lid was put on or taken off. The answer is a whole number from the
metadata (set differences, the difference of the group counts, the cups that changed)."""

from __future__ import annotations

from tvr.visualtrans.build.questions.base import Context, Draft, EpisodeView, Family


def _count(ep: EpisodeView, family: str, stem: str, n: int) -> Draft:
    return Draft(family, ep.episode, ep.scene, ep.episode, [ep.start, ep.end], stem, "count",
                 label=str(n))  # fmt: skip


def food(ep: EpisodeView, ctx: Context) -> list[Draft]:
    m = ep.meta
    onto_plate = len(set(m.plate_after) - set(m.plate_before))
    into_basket = len(set(m.basket_after) - set(m.basket_before))
    if into_basket > onto_plate:
        return [_count(ep, "count.basket_back",
                       "How many food items are placed back into the basket?", into_basket)]
    return [_count(ep, "count.plate_new",
                   "How many food items are in the plate now that were not there before?",
                   onto_plate)]  # fmt: skip


def beads(ep: EpisodeView, ctx: Context) -> list[Draft]:
    m = ep.meta
    return [_count(ep, "count.bead_groups", "How many new groups consisting of beads with the "
                   "same color have been formed after the transformation?",
                   max(0, m.groups_after - m.groups_before))]  # fmt: skip


def lids(ep: EpisodeView, ctx: Context) -> list[Draft]:
    n = sum(c.lid_before != c.lid_after for c in ep.meta.cups)
    return [_count(ep, "count.lids", "How many paper cups had their lids added or removed?", n)]


def _none(ep: EpisodeView, ctx: Context) -> list[Draft]:
    return []  # written by `food`, which picks the plate or the basket question


FAMILIES = (
    Family("count.plate_new", "count", "count", ("food",), food,
           r"^how many food items are in the plate now", "new items on the plate"),
    Family("count.basket_back", "count", "count", ("food",), _none,
           r"^how many food items are placed back into the basket", "items back in the basket"),
    Family("count.bead_groups", "count", "count", ("beads",), beads,
           r"^how many new groups consisting of beads", "new same-colour groups"),
    Family("count.lids", "count", "count", ("lids",), lids,
           r"^how many paper cups had their lids", "cups whose lid changed"),
)  # fmt: skip
