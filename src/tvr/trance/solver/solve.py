"""The solver's API: `solve(sample, parse_final, ...)` -> a prediction in tvr's format.

What it reads of the sample: its `id`, its initial `objects` (attributes and positions, with
their indices: what the paper gives a model) and, in View, its own `view` if it has one (which
final image is given). Never its `steps` nor its `final`: the final scene comes only through the
perception (`parse_final`), which in the oracle ablation is `GroundTruthPerception`.

Choosing among explanations: for each supposed camera (View: L, C and R; otherwise C), the parse
is put on the world grid and matched (`matching.match_rules`: energies of steps and of the
parse's doubts); each explanation within the matching's margin gets its steps and an order
(`search.find_order`). The chosen answer is the first by: an order exists that breaks no rule,
least energy (an order that needs an extra move adds a step's), higher parse confidence.
Whether an unseen object may be hidden where it stood is asked of the sampler's occlusion check
(`tvr.trance.world.occlusion`) from the supposed camera's base position.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tvr.trance.choices import MATCHINGS, RENDER_CHECKS
from tvr.trance.solver.matching import INF, MARGIN, OUT, STEP, Reading, match_gt, match_rules
from tvr.trance.solver.perception import Perception
from tvr.trance.solver.render_check import WIDE
from tvr.trance.solver.scene import ParsedScene, on_grid
from tvr.trance.solver.search import find_order
from tvr.trance.solver.steps import derive_groups
from tvr.trance.world import vocab
from tvr.trance.world.simulator import objects_to_array

#: readings that need more steps than this are not searched for an order (a reference has at
#: most 4; a wrong camera in View reads most objects as moved)
MAX_READING_STEPS = 6
#: an unseen object may be hidden where it stands if fewer of its pixels (of 320x240) would show
#: from the supposed camera (the rules' threshold is 150; a parser misses a little more)
HIDDEN_PIXELS = 300


@dataclass
class Solution:
    prediction: dict[str, Any]
    valid: bool = False  # the steps break no rule
    view: str | None = None  # the camera the solver inferred
    explanations: int = 0  # distinct explanations within the matching's margin for that camera
    cost: float = INF
    notes: dict[str, Any] = field(default_factory=dict)

    @property
    def ambiguous(self) -> bool:
        return self.explanations > 1


def _field(sample: Any, name: str, default: Any = None) -> Any:
    if isinstance(sample, Mapping):
        return sample.get(name, default)
    if name == "view":
        return getattr(sample, "extra", {}).get("view", default)
    return getattr(sample, name, default)


#: a step's evidence when the matching gives none (a move within the view: the object is seen
#: elsewhere)
MOVE_EVIDENCE = 10.0


def _evidence(e: Any, step: tuple[int, int]) -> float:
    """How much surer the parse is of `step` (object, value) than of its absence."""
    obj, value = step
    attr = vocab.value_attribute(value)
    if attr == "position":
        return float(e.evidence.get((obj, OUT), MOVE_EVIDENCE))
    col = 2 + ("size", "color", "material", "shape").index(attr)
    return float(e.evidence.get((obj, col), MOVE_EVIDENCE))


def _objects(sample: Any) -> list[dict[str, Any]]:
    objs = _field(sample, "objects")
    return [o if isinstance(o, Mapping) else o.to_dict() for o in objs]


def hidden_check(rotations: np.ndarray, view: str) -> Callable[[np.ndarray, int], bool]:
    """occluded(state, i): from the base camera of `view`, object i, where it stands in `state`,
    shows fewer than 150 pixels (of 320x240: the rules' threshold), or fewer than HIDDEN_PIXELS
    and under half of what it would show with no other object there (a parser misses a little
    more than the rules call occluded)."""
    from tvr.trance.world.camera import CAMERA_BASE
    from tvr.trance.world.occlusion import OCCLUSION_THRESHOLD, fast_visible_pixel_counts
    from tvr.trance.world.simulator import COL_X, COL_Y

    camera = CAMERA_BASE[view]

    def occluded(state: np.ndarray, i: int) -> bool:
        shown = fast_visible_pixel_counts(state, rotations, camera, targets=[i])[i]
        if shown < OCCLUSION_THRESHOLD:
            return True
        if shown >= HIDDEN_PIXELS:
            return False
        alone = state.copy()
        others = np.arange(len(state)) != i
        alone[others, COL_X], alone[others, COL_Y] = vocab.GRID_MAX, vocab.GRID_MAX
        full = fast_visible_pixel_counts(alone, rotations, camera, targets=[i])[i]
        return bool(shown < 0.5 * full)

    return occluded


#: an initial object and a detection of the initial image are the same when this close (grid units)
SAME_PLACE = 4.0


def initial_readings(initial: np.ndarray, scene: ParsedScene) -> list[Reading]:
    """Per initial object, the parser's attribute reading of it in the initial image (centre
    camera): the detection nearest its known place, within SAME_PLACE grid units (greedy by
    distance); None for objects it did not see there."""
    objs = on_grid(scene, "C")
    pairs = sorted(
        (float(np.hypot(o.world[0] - initial[i, 0], o.world[1] - initial[i, 1])), f, i)
        for f, o in enumerate(objs)
        for i in range(len(initial))
        if o.logp is not None
    )
    out: list[Reading] = [None] * len(initial)
    used: set[int] = set()
    for d, f, i in pairs:
        if d > SAME_PLACE:
            break
        if f in used or out[i] is not None:
            continue
        used.add(f)
        out[i] = objs[f].logp
    return out


def initial_state(sample: Any) -> np.ndarray:
    """The given initial scene: the sample's `objects` as a state (10, 6)."""
    return objects_to_array(_field(sample, "objects"))


def solve(
    sample: Any,
    parse_final: Perception | Callable[[str, str], ParsedScene],
    *,
    setting: str = "event",
    view: str | None = None,
    matching: str = "rules",
    parse_initial: Callable[[Any], np.ndarray] = initial_state,
    render_check: str = "off",
) -> Solution:
    """Solve one sample (a `Sample` or a sample dict) from the parse of one final image.

    view: which final image is given (View; default the sample's own `view`, else C).
    render_check: "auto" checks the candidate explanations against the final image where the
    parse is doubtful (`tvr.trance.solver.render_check`; needs a perception with
    `final_image`), "off" never renders."""
    if matching not in MATCHINGS:
        raise ValueError(f"unknown matching {matching!r}; known: {', '.join(MATCHINGS)}")
    if render_check not in RENDER_CHECKS:
        known = ", ".join(RENDER_CHECKS)
        raise ValueError(f"unknown render check {render_check!r}; known: {known}")
    sid = str(_field(sample, "id"))
    initial = parse_initial(sample)
    image_view = view or _field(sample, "view") or "C"
    parser = parse_final.parse_final if hasattr(parse_final, "parse_final") else parse_final
    scene = parser(sid, image_view)
    # how the parser saw the initial objects in the initial image (an image perception only)
    seen = None
    if hasattr(parse_final, "parse_initial"):
        seen = initial_readings(initial, parse_final.parse_initial(sid))
    match = {"rules": match_rules, "gt": match_gt}[matching]
    cameras = vocab.VIEWS if setting == "view" else ("C",)
    rotations = np.array([float(o.get("rotation", 0.0)) for o in _objects(sample)])
    # an exact perception (the oracle) lists every object of the visible area: none is hidden
    exact = scene.notes.get("exact", all(o.probabilities is None for o in scene.objects))
    # render-and-compare needs a perception that holds the image, and a parse that can doubt
    check = render_check == "auto" and not exact and hasattr(parse_final, "final_image")
    searched = [0]  # sequences simulated by the order search, over every camera and explanation
    readings = []  # (energy, camera, explanation, explanations of that camera within MARGIN)
    wide = []  # the same within WIDE of each camera's least (the render check only)
    placed = {}
    for cam in cameras:
        placed[cam] = (on_grid(scene, cam), None if exact else hidden_check(rotations, cam))
        m = match(initial, *placed[cam], seen)
        readings += [(e.cost, cam, e, len(m.explanations)) for e in m.explanations]
    readings.sort(key=lambda r: r[0])
    if check and readings and (
        len(readings) > 1 or any(e.evidence and min(e.evidence.values()) < WIDE
                                 for _, _, e, _ in readings)
    ):  # fmt: skip
        # a doubt shows already: the pairings within WIDE too (a sure parse skips this search)
        for cam in cameras:
            m = match(initial, *placed[cam], seen, margin=WIDE)
            n = sum(e.cost <= m.cost + MARGIN for e in m.explanations)
            wide += [(e.cost, cam, e, n) for e in m.explanations]

    def candidate(cam: str, e: Any, n_expl: int) -> tuple | None:
        """(key, order, camera, explanations, energy, explanation) of a reading, or None."""
        if e.steps > MAX_READING_STEPS:
            return None  # no reference has so many: a supposed camera that does not fit
        order = None
        for tier in (0, 1):
            order = find_order(initial, derive_groups(initial, e, tier))
            searched[0] += order.tried if order is not None else 0
            if order is not None and order.valid:
                break
        if order is None:
            return None
        energy = e.cost + STEP * max(len(order.steps) - e.steps, 0)
        # Basic has one step: a reading of more is kept only when none of one exists
        extra_steps = setting == "basic" and len(order.steps) != 1
        return ((not order.valid, extra_steps, energy, -e.confidence), order, cam, n_expl,
                energy, e)  # fmt: skip

    best: tuple | None = None
    for energy_at_least, cam, e, n_expl in readings:
        if best is not None and not any(best[0][:2]) and energy_at_least > best[4]:
            break  # an order cannot make a dearer reading win (an order only adds steps)
        c = candidate(cam, e, n_expl)
        if c is not None and (best is None or c[0] < best[0]):
            best = c
    notes: dict[str, Any] = {}
    if wide and best is not None:
        best = _render_check(parse_final, sid, image_view, initial, rotations, best, wide,
                             candidate, notes)  # fmt: skip
    notes["searched"] = searched[0]
    prediction: dict[str, Any] = {"id": sid}
    if setting == "view":
        prediction["view"] = image_view
    if best is None:
        prediction["steps"] = []
        return Solution(prediction, notes={"failed": "no explanation", **notes})
    _, order, cam, n_expl, cost, best_e = best
    chosen = list(order.steps)
    if setting == "basic" and len(chosen) > 1:  # the step the parse is surest of
        chosen = [max(chosen, key=lambda s: _evidence(best_e, s))]
    steps = [{"obj": o, "value": vocab.VALUES[v]} for o, v in chosen]
    prediction["steps"] = steps
    return Solution(prediction, order.valid, cam, n_expl, cost, notes=notes)


def _render_check(
    perception: Any, sid: str, image_view: str, initial: np.ndarray, rotations: np.ndarray,
    best: tuple, wide: list, candidate: Callable[..., tuple | None], notes: dict[str, Any],
) -> tuple:  # fmt: skip
    """`best`, or the candidate explanation whose render is nearer the observed image, where
    the parse is doubtful (another reading within WIDE of the least energy: `render_check`)."""
    from tvr.trance.solver import render_check as rc
    from tvr.trance.world.simulator import apply_steps

    wide = wide + [(a.cost, cam, a, n) for _, cam, e, n in wide
                   for a in rc.alternatives(initial, e)]  # fmt: skip
    least = min(r[0] for r in wide)
    others = sorted(
        (r for r in wide if r[0] < least + rc.WIDE and r[2] is not best[5]
         and r[2].key() != best[5].key()), key=lambda r: r[0],
    )  # fmt: skip
    if not others:
        return best  # sure: nothing rendered
    notes["doubtful"] = True
    pool, seen_states = [best], {_final_key(initial, best)}
    for _, cam, e, n_expl in others:
        if len(pool) >= rc.MAX_CANDIDATES:
            break
        c = candidate(cam, e, n_expl)
        if c is None or c[0][:2] > best[0][:2]:
            continue  # only readings of the best kind (an order that breaks no rule; Basic: one)
        k = _final_key(initial, c)
        if k in seen_states:
            continue  # the same final scene: the same render
        seen_states.add(k)
        pool.append(c)
    if len(pool) < 2:
        return best
    observed = perception.final_image(sid, image_view)
    if observed is None:
        return best
    rot = [float(r) for r in rotations]
    renders = [rc.render_state(apply_steps(initial, list(c[1].steps))[0], rot, c[2]) for c in pool]
    k, d = rc.pick(observed, renders)
    notes["render_check"] = {"candidates": len(pool), "chosen": k,
                             "distances": [round(float(x), 1) for x in d]}  # fmt: skip
    return pool[k]


def _final_key(initial: np.ndarray, c: tuple) -> tuple:
    """The final scene a candidate implies (its camera and the state after its steps)."""
    from tvr.trance.world.simulator import apply_steps

    state = apply_steps(initial, list(c[1].steps))[0]
    return (c[2], state.tobytes())


def solve_all(
    samples: Iterable[Any],
    perception: Perception,
    *,
    setting: str = "event",
    matching: str = "rules",
    views: tuple[str, ...] = vocab.VIEWS,
    progress: Callable[[int], None] | None = None,
    render_check: str = "off",
) -> Iterator[Solution]:
    """Solutions of many samples; in View, one per view scored (the sample's own view, else each
    of `views`), as `tvr evaluate` scores them."""
    for s in samples:
        own = _field(s, "view")
        for v in ([own] if own else views) if setting == "view" else [None]:
            yield solve(
                s, perception, setting=setting, view=v, matching=matching, render_check=render_check
            )
        if progress:
            progress(1)
