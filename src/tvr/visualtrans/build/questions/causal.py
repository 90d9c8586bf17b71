"""Procedural causal: which operation happened during the transformation?

Stacks: one question per placement of the metadata's stack; the correct option is that placement (an object directly on the
one below it, said "on top of", "over" or "underneath"); distractors are placements of pairs
that are not directly on each other in the final stack. Boards: the correct option is one of
the moves; distractors are cells with no new disc, or a move's cell with the other colour."""

from __future__ import annotations

from tvr.visualtrans.build.questions.base import Context, Draft, EpisodeView, Family
from tvr.visualtrans.build.questions.spatial_fine import stack_images

STEM = ("Identify which of the following operations is most likely to occur during the "
        "transformation process from the <image1> to the <image2>.")  # fmt: skip


def placement(rng, upper: str, lower: str) -> str:
    forms = (f"Place the {upper} on top of the {lower}.", f"Stack the {upper} over the {lower}.",
             f"Place the {lower} underneath the {upper}.")  # fmt: skip
    return forms[int(rng.integers(len(forms)))]


def stack_causal(ep: EpisodeView, ctx: Context) -> list[Draft]:
    m = ep.meta
    rng = ctx.rng("causal.stack", ep.episode)
    pairs = list(zip(m.stack[1:], m.stack[:-1], strict=False))  # (upper, directly below)
    if not pairs:
        return []
    true = set(pairs)
    wrong = [(a, b) for a in m.objects for b in m.objects if a != b and (a, b) not in true]
    if len(wrong) < 3:
        return []
    distractors = tuple(placement(rng, a, b) for a, b in wrong)
    return [Draft("causal.stack", f"{ep.episode}|{upper}|{lower}", ep.scene, ep.episode,
                  stack_images(ep), STEM, "choice", correct=placement(rng, upper, lower),
                  distractors=distractors, sep=" ")
            for upper, lower in pairs]  # fmt: skip


def disc(color: str, row: int, column: int) -> str:
    return f"Place a {color} disc in row {row}, column {column}."


def board_causal(ep: EpisodeView, ctx: Context) -> list[Draft]:
    m = ep.meta
    rng = ctx.rng("causal.board", ep.episode)
    taken = {(mv.row, mv.column) for mv in m.moves}
    move = m.moves[int(rng.integers(len(m.moves)))]
    colors = sorted({mv.color for mv in m.moves} | {"red", "yellow"})
    pool = [disc(c, r, k) for r in range(1, 4) for k in range(1, 8) for c in colors
            if (r, k) not in taken]  # fmt: skip
    pool += [disc(c, mv.row, mv.column) for mv in m.moves for c in colors if c != mv.color]
    return [Draft("causal.board", ep.episode, ep.scene, ep.episode, [ep.start, ep.end],
                  STEM + "\n(Row 1 is the bottom row; Column 1 is the leftmost column.)",
                  "choice", correct=disc(move.color, move.row, move.column),
                  distractors=tuple(pool), sep=" ")]  # fmt: skip


PATTERN = r"^identify which of the following operations is most likely to occur"
FAMILIES = (
    Family("causal.stack", "procedural_causal", "choice", ("stack",), stack_causal, PATTERN,
           "a placement that happened"),
    Family("causal.board", "procedural_causal", "choice", ("board",), board_causal, PATTERN,
           "a disc that was played"),
)  # fmt: skip
