"""The solver's API: `solve(sample, parse_final, ...)` -> a prediction in tvr's format.

What it reads of the sample: its `id`, its initial `objects` (attributes and positions, with
their indices: what the paper gives a model) and, in View, its own `view` if it has one (which
final image is given). Never its `steps` nor its `final`: the final scene comes only through the
perception (`parse_final`), which in the oracle ablation is `GroundTruthPerception`.

Choosing among explanations: for each supposed camera (View: L, C and R; otherwise C), the parse
is put on the world grid and matched; each explanation of least matching cost gets its steps and
an order (`search.find_order`). The chosen answer is the first by: an order exists that breaks no
rule, the parse lies on the grid (mean rounding residual), fewer steps, higher parse confidence.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from tvr.trance.solver.matching import INF, match_gt, match_rules
from tvr.trance.solver.perception import Perception
from tvr.trance.solver.scene import ParsedScene, on_grid
from tvr.trance.solver.search import find_order
from tvr.trance.solver.steps import derive_groups
from tvr.trance.world import vocab
from tvr.trance.world.simulator import objects_to_array

#: mean rounding residual (grid units) above which a supposed camera is judged inconsistent
RESIDUAL_TOLERANCE = 0.05


@dataclass
class Solution:
    prediction: dict[str, Any]
    valid: bool = False  # the steps break no rule
    view: str | None = None  # the camera the solver inferred
    explanations: int = 0  # distinct least-cost explanations for that camera
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
) -> Solution:
    """Solve one sample (a `Sample` or a sample dict) from the parse of one final image.

    view: which final image is given (View; default the sample's own `view`, else C)."""
    sid = str(_field(sample, "id"))
    initial = parse_initial(sample)
    image_view = view or _field(sample, "view") or "C"
    parser = parse_final.parse_final if hasattr(parse_final, "parse_final") else parse_final
    scene = parser(sid, image_view)
    match = {"rules": match_rules, "gt": match_gt}[matching]
    cameras = vocab.VIEWS if setting == "view" else ("C",)
    best: tuple | None = None
    for cam in cameras:
        objs = on_grid(scene, cam)
        m = match(initial, objs)
        off_grid = m.residual > RESIDUAL_TOLERANCE
        for e in m.explanations:
            order = None
            for tier in (0, 1):
                order = find_order(initial, derive_groups(initial, e, tier))
                if order is not None and order.valid:
                    break
            if order is None:
                continue
            key = (not order.valid, off_grid, len(order.steps), -e.confidence, m.residual)
            if best is None or key < best[0]:
                best = (key, order, cam, len(m.explanations), e.cost)
    prediction: dict[str, Any] = {"id": sid}
    if setting == "view":
        prediction["view"] = image_view
    if best is None:
        prediction["steps"] = []
        return Solution(prediction, notes={"failed": "no explanation"})
    _, order, cam, n_expl, cost = best
    steps = [{"obj": o, "value": vocab.VALUES[v]} for o, v in order.steps]
    if setting == "basic":
        steps = steps[:1]
    prediction["steps"] = steps
    return Solution(prediction, order.valid, cam, n_expl, cost)


def solve_all(
    samples: Iterable[Any],
    perception: Perception,
    *,
    setting: str = "event",
    matching: str = "rules",
    views: tuple[str, ...] = vocab.VIEWS,
    progress: Callable[[int], None] | None = None,
) -> Iterator[Solution]:
    """Solutions of many samples; in View, one per view scored (the sample's own view, else each
    of `views`), as `tvr evaluate` scores them."""
    for s in samples:
        own = _field(s, "view")
        for v in ([own] if own else views) if setting == "view" else [None]:
            yield solve(s, perception, setting=setting, view=v, matching=matching)
        if progress:
            progress(1)
