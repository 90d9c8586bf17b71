"""Procedural plan: the first or last step (with the release's `mask` field, `first` or
`last`), and the object manipulated first or last.

Stacks: the first step puts the bottom object on the surface, the last puts the top object on
the one below it (from the metadata's `steps`); distractors: the other objects on the surface,
or placements that are not the last step. Sequences: the steps' own operations and objects;
distractors: the other steps'."""

from __future__ import annotations

from tvr.visualtrans.build.questions.base import Context, Draft, EpisodeView, Family
from tvr.visualtrans.build.questions.spatial_fine import stack_images


def _step_text(step) -> str:
    if step.onto == "surface":
        return f"Put the {step.object} on the surface"
    return f"Place the {step.object} on the {step.onto}"


def step(ep: EpisodeView, ctx: Context) -> list[Draft]:
    m = ep.meta
    out = []
    if m.family == "stack":
        images = stack_images(ep)
        first, last = _step_text(m.steps[0]), _step_text(m.steps[-1])
        surface = [f"Put the {o} on the surface" for o in m.objects]
        pairs = [f"Place the {a} on the {b}" for a in m.objects for b in m.objects if a != b]
        pools = {"first": (first, surface), "last": (last, pairs)}
    else:
        images = [ep.start, ep.end]
        ops = [s.operation for s in m.steps]
        pools = {"first": (ops[0], ops), "last": (ops[-1], ops)}
    for mask, (correct, pool) in pools.items():
        others = tuple(p for p in pool if p != correct)
        if len(set(others)) < 1:
            continue
        out.append(Draft("plan.step", f"{ep.episode}|{mask}", ep.scene, ep.episode, images,
                         f"what is the most likely operation in the {mask} step to achieve this "
                         "transformation?", "choice", correct=correct, distractors=others,
                         mask=mask, sep=" "))  # fmt: skip
    return out


def manipulated(ep: EpisodeView, ctx: Context) -> list[Draft]:
    m = ep.meta
    objects = list(dict.fromkeys(s.object for s in m.steps))
    if len(objects) < 2:
        return []
    images = stack_images(ep) if m.family == "stack" else [ep.start, ep.end]
    out = []
    for which, obj in (("first", objects[0]), ("last", objects[-1])):
        out.append(Draft("plan.object", f"{ep.episode}|{which}", ep.scene, ep.episode, images,
                         f"Which of the following objects should be manipulated {which} in the "
                         "transformation process?", "choice", correct=obj,
                         distractors=tuple(o for o in objects if o != obj)))  # fmt: skip
    return out


FAMILIES = (
    Family("plan.step", "procedural_plan", "choice", ("stack", "sequence"), step,
           r"^what is the most likely operation in the (first|last) step",
           "the first or last step (mask)"),
    Family("plan.object", "procedural_plan", "choice", ("stack", "sequence"), manipulated,
           r"^which of the following objects should be manipulated (first|last)",
           "the object manipulated first or last"),
)  # fmt: skip
