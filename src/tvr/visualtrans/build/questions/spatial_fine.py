"""Spatial fine-grained: where an object ends up in the stack (its layer; the objects above or
below it), the object named by where it was before (leftmost, rightmost, closest to the camera;
to the left or right of another object); and where a book of a row ends up.

Answers come from the metadata alone: a stack's `spread_order`, `closest` and `stack`; a row's
`initial_order` and `final_order`. Layer options are the layers in order, Layer 1 the bottom
(a window of four placed so that the answer letters are balanced); object lists are the
scene's objects in a seeded order; a set answer lists the objects bottom to top.
"""

from __future__ import annotations

from tvr.visualtrans.build.questions.base import Context, Draft, EpisodeView, Family, shuffled

ABSOLUTE = {"leftmost": "leftmost", "rightmost": "rightmost", "closest": "closest-to-camera"}


def stack_images(ep: EpisodeView) -> list[str]:
    """The images in the order of building the stack: the spread objects first."""
    return [ep.start, ep.end] if ep.meta.direction == "stack" else [ep.end, ep.start]


def absolute_objects(meta) -> list[tuple[str, str]]:
    out = [("leftmost", meta.spread_order[0]), ("rightmost", meta.spread_order[-1])]
    if meta.closest is not None:
        out.append(("closest", meta.closest))
    return out


def relative_objects(meta) -> list[tuple[str, str]]:
    """(relation, object): e.g. ("to the left of blue block", the object left of it), in the
    release's words, for the reference objects that leave one object on that side only: "to the
    left of" the second object of the spread order (only the first is left of it) and "to the
    right of" the last but one. "To the left of" the third object would fit two objects, each
    with its own layer: a question with two correct answers."""
    order = meta.spread_order
    if len(order) < 2:
        return []
    return [(f"to the left of {order[1]}", order[0]), (f"to the right of {order[-2]}", order[-1])]


def layers(meta) -> tuple[str, ...]:
    return tuple(f"Layer {i} (from the bottom)" for i in range(1, max(4, len(meta.stack)) + 1))


def layer_absolute(ep: EpisodeView, ctx: Context) -> list[Draft]:
    m = ep.meta
    out = []
    for pos, obj in absolute_objects(m):
        if obj not in m.stack:
            continue
        out.append(Draft("fine.layer_absolute", f"{ep.episode}|{pos}", ep.scene, ep.episode,
                         stack_images(ep),
                         f"After the transformation, which layer is the object originally at "
                         f"the {ABSOLUTE[pos]} position now located in?", "choice",
                         correct=layers(m)[m.stack.index(obj)], ordered=layers(m)))  # fmt: skip
    return out


def layer_relative(ep: EpisodeView, ctx: Context) -> list[Draft]:
    m = ep.meta
    out = []
    for rel, obj in relative_objects(m):
        if obj not in m.stack:
            continue
        out.append(Draft("fine.layer_relative", f"{ep.episode}|{rel}", ep.scene, ep.episode,
                         stack_images(ep),
                         f"From the camera's viewpoint, after the transformation, which layer did "
                         f"the object that was originally {rel} move to?", "choice",
                         correct=layers(m)[m.stack.index(obj)], ordered=layers(m)))  # fmt: skip
    return out


def _set_drafts(ep: EpisodeView, ctx: Context, family: str, refs: list[tuple[str, str]],
                lead: str) -> list[Draft]:  # fmt: skip
    m = ep.meta
    out = []
    rng = ctx.rng(family, ep.episode)
    listed = ", ".join(shuffled(rng, m.objects))
    for ref, obj in refs:
        if obj not in m.stack:
            continue
        i = m.stack.index(obj)
        for where, names in (("above", m.stack[i + 1 :]), ("below", m.stack[:i])):
            if not names:
                continue
            out.append(Draft(family, f"{ep.episode}|{where}|{ref}", ep.scene, ep.episode,
                             stack_images(ep),
                             f"{lead}, list all objects that are positioned {where} the object "
                             f"that was originally {ref}, whether or not they are in direct "
                             f"contact. Only select from the given object list: {listed}. Do not "
                             "add or infer any new objects.", "set",
                             label=", ".join(names)))  # fmt: skip
    return out


def set_absolute(ep: EpisodeView, ctx: Context) -> list[Draft]:
    refs = [(ABSOLUTE[p] if p != "closest" else "closest to the camera", o)
            for p, o in absolute_objects(ep.meta)]  # fmt: skip
    return _set_drafts(ep, ctx, "fine.set_absolute", refs, "After the transformation")


def set_relative(ep: EpisodeView, ctx: Context) -> list[Draft]:
    return _set_drafts(ep, ctx, "fine.set_relative", relative_objects(ep.meta),
                       "From the camera's viewpoint after the transformation")  # fmt: skip


BOOKEND = ("the far left of the bookend", "the middle of the bookend",
           "the far right of the bookend")  # fmt: skip


def row_position(ep: EpisodeView, ctx: Context) -> list[Draft]:
    m = ep.meta
    out = []
    for pos, idx in (("leftmost", 0), ("middle", 1), ("rightmost", 2)):
        obj = m.initial_order[idx]
        out.append(Draft("fine.row_position", f"{ep.episode}|{pos}", ep.scene, ep.episode,
                         [ep.start, ep.end],
                         f"After the transformation, where is the object originally at the {pos} "
                         "position now located?", "choice",
                         correct=BOOKEND[m.final_order.index(obj)], ordered=BOOKEND))  # fmt: skip
    return out


STACK = ("stack",)
FAMILIES = (
    Family("fine.layer_absolute", "spatial_fine_grained", "choice", STACK, layer_absolute,
           r"^after the transformation, which layer is the object originally at the .+ "
           r"position now located in\?", "layer of the object first at an absolute position"),
    Family("fine.layer_relative", "spatial_fine_grained", "choice", STACK, layer_relative,
           r"^from the camera's viewpoint,? after the transformation, which layer did the object "
           r"that was originally .+ move to\?", "layer of the object first beside another"),
    Family("fine.set_absolute", "spatial_fine_grained", "set", STACK, set_absolute,
           r"^after the transformation, list all objects that are positioned (above|below) the "
           r"object that was originally", "objects above/below the object first at a position"),
    Family("fine.set_relative", "spatial_fine_grained", "set", STACK, set_relative,
           r"^from the camera's viewpoint,? after the transformation, list all objects that are "
           r"positioned (above|below)", "objects above/below the object first beside another"),
    Family("fine.row_position", "spatial_fine_grained", "choice", ("row",), row_position,
           r"^after the transformation, where is the object originally at the .+ position now "
           r"located\?", "where a book of the row ends up"),
)  # fmt: skip
