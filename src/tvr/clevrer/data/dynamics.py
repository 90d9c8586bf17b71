"""The official predicted-dynamics layout, written: from SceneFacts, and as ground truth of a
simulated video (every frame, the exact collisions, every counterfactual run).

Layout (one file per video, ``sim_XXXXX.json``; the released dynamics predictor writes it and the
released executor reads it)::

    {objects: [{id, color, material, shape}],
     predictions: [{what_if: -1 | id,
                    trajectory: [{frame_index, objects: [{x, y, color, material, shape}]}],
                    collisions: [{frame, objects: [{color, material, shape}, {...}]}]}]}

As the released code has it: trajectory and collision objects are named by their attributes;
``x`` is the object centre's row and ``y`` its column on the predictor's 100 x 150 grid
(`tvr.clevrer.programs.dynamics.image_to_grid`); a trajectory frame lists the objects in view;
the predictions are ordered what_if -1, 0, 1, ... (the released executor finds the run of
what_if k at position k + 1). Reading this layout back into SceneFacts, with its checks, is
`tvr.clevrer.programs.dynamics.read_dynamics` (one reader for both model output and ground truth).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tvr.clevrer.data.fields import dump_json
from tvr.clevrer.data.rounding import rounded
from tvr.clevrer.programs.dynamics import facts_from_dynamics, image_to_grid
from tvr.clevrer.programs.facts import ObjectProps, Run, SceneFacts
from tvr.core.jsonl import write_text

if TYPE_CHECKING:
    from tvr.clevrer.world.video import VideoSim

#: grid positions are written with this many decimals (1e-3 of a grid cell = 0.0032 pixels)
DECIMALS = 3


def _attrs(p: ObjectProps) -> dict[str, str]:
    return {"color": p.color, "material": p.material, "shape": p.shape}


def _run_json(objects: tuple[ObjectProps, ...], run: Run, what_if: int) -> dict[str, Any]:
    if run.motion is None:
        raise ValueError(f"run what_if={what_if} has no motion to write")
    xy = np.asarray(run.motion.xy, dtype=np.float64)
    visible = np.asarray(run.motion.visible, dtype=bool)
    # the whole run at once: the same arithmetic as `image_to_grid` and `round` per value
    gx, gy = image_to_grid(xy[..., 0], xy[..., 1])
    rows, cols = rounded(gx, DECIMALS), rounded(gy, DECIMALS)
    attrs = [_attrs(p) for p in objects]
    n = len(objects)
    trajectory = [
        {"frame_index": f,
         "objects": [{"x": x[o], "y": y[o], **attrs[o]} for o in range(n) if seen[o]]}
        for f, (x, y, seen) in enumerate(zip(rows, cols, visible.tolist(), strict=True))
    ]  # fmt: skip
    collisions = [
        {"frame": e.frame, "objects": [_attrs(objects[o]) for o in e.objects]}
        for e in run.events
        if e.kind == "collision"
    ]
    return {"what_if": what_if, "trajectory": trajectory, "collisions": collisions}


def dynamics_from_facts(facts: SceneFacts) -> dict[str, Any]:
    """The layout of `facts`: every frame of its motion, its collisions, the factual run first and
    then the counterfactual runs by removed id."""
    objects = facts.objects
    return {
        "objects": [{"id": i, **_attrs(p)} for i, p in enumerate(objects)],
        "predictions": [_run_json(objects, facts.factual, -1)]
        + [_run_json(objects, facts.counterfactual[k], k) for k in sorted(facts.counterfactual)],
    }


def dynamics_from_video(video: VideoSim) -> dict[str, Any]:
    """Ground truth of a simulated video in the layout: every simulated frame, the simulator's
    collisions, a counterfactual run per object (the world's `facts_from_video`, written)."""
    from tvr.clevrer.world.facts import facts_from_video

    return dynamics_from_facts(facts_from_video(video))


def write_dynamics(path: str | Path, data: Mapping[str, Any], check: bool = False) -> None:
    """Write one video's layout atomically (compact JSON); `check` reads it through the reader
    first (an InputError naming `path` and the field if it is not a valid layout)."""
    if check:
        facts_from_dynamics(data, str(path))
    write_text(Path(path), dump_json(data))
