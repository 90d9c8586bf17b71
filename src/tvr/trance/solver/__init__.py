"""A symbolic TRANCE solver (issue 31): parse, match, derive the atomic steps, order them.

It is given what the paper gives a model: the attributes of the initial objects with their
indices, and a parse of the final image (centre camera for Basic and Event; L, C or R for View).
It never reads the reference steps, nor the final scene, except through a perception object:
`GroundTruthPerception` is the oracle ablation (`--perception gt`) and the only one that exists;
an image parser is the missing part (docs/solver.md).

- `scene`: a parsed scene (objects with attributes, positions, visibility, confidence) and the
  camera frames of the three views.
- `perception`: the pluggable parser interface and its ground-truth implementation.
- `matching`: initial objects to final ones (by the rule that only transformed attributes change,
  or by the oracle's identities).
- `steps`: the atomic steps that explain a matching.
- `search`: an order of them that `tvr.trance.world.simulator` applies without breaking a rule.
- `solve`: the API, `solve(sample, parse_final=...)` -> a prediction in tvr's format.
"""

from tvr.trance.solver.perception import GroundTruthPerception, Perception
from tvr.trance.solver.scene import ParsedObject, ParsedScene
from tvr.trance.solver.solve import Solution, solve, solve_all

__all__ = [
    "GroundTruthPerception",
    "ParsedObject",
    "ParsedScene",
    "Perception",
    "Solution",
    "solve",
    "solve_all",
]
