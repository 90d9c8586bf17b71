"""One video's simulation: sample a scene, keep it if its factual run is interesting, add the
counterfactual runs. Deterministic per (seed, index).

Attempt k of video `index` draws everything from `numpy.random.default_rng([seed, index, k])`.
A scene with a short-stopping object first has it aimed again on a run of the objects before it
and the future object (`aim_short_stop`); a scene with a future hit is then simulated without
its future object, which is aimed again at where its target really is (`aim_future_hit`; that
run is also the object's counterfactual run). The first attempt whose factual run passes every
rule of `WorldConfig` is kept. After `max_attempts` attempts the one that broke the fewest
rules (the earliest among equals; an attempt rejected on its shown frames counts the rules
broken there) is kept, with the rules it breaks in `VideoSim.broken_rules`.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from tvr.clevrer.vocab import SHOWN_FRAMES
from tvr.clevrer.world.camera import in_view
from tvr.clevrer.world.config import WorldConfig
from tvr.clevrer.world.events import run_events
from tvr.clevrer.world.physics import RunTrace, Simulation, counterfactual_runs, simulate
from tvr.clevrer.world.scene import SceneSpec, aim_future_hit, aim_short_stop, sample_scene

RULES = (
    "min_collisions_shown",
    "max_collisions_per_pair",
    "min_visible_frames",
    "visible_collisions_only",
    "min_event_span_frames",
    "max_quiet_start_frames",
    "min_visibility_run",
    "max_tilt_deg",
)


@dataclass(frozen=True)
class VideoSim:
    """A simulated video: its scene, factual run and one counterfactual run per object.

    Args:
        seed, index: what it was drawn from.
        config: the world configuration used.
        spec: the scene (objects in id order).
        factual: the factual run.
        counterfactual: removed object id -> the run without it.
        attempts: scenes drawn until this one was kept (1 = the first).
        broken_rules: rules of `RULES` the factual run breaks (empty for an accepted video).
    """

    seed: int
    index: int
    config: WorldConfig
    spec: SceneSpec
    factual: RunTrace
    counterfactual: Mapping[int, RunTrace]
    attempts: int
    broken_rules: tuple[str, ...] = ()


def tilt_degrees(orientation: np.ndarray) -> np.ndarray:
    """Angle between each object's own z axis and the world's +z (degrees), from xyzw quaternions."""
    x, y = orientation[..., 0], orientation[..., 1]
    cos = np.clip(1.0 - 2.0 * (x * x + y * y), -1.0, 1.0)
    return np.degrees(np.arccos(cos))


def _runs(column: np.ndarray) -> list[tuple[bool, int]]:
    """Run-length encoding of a boolean sequence: (value, length) pairs."""
    edges = np.flatnonzero(column[1:] != column[:-1]) + 1
    bounds = [0, *edges.tolist(), len(column)]
    return [(bool(column[a]), b - a) for a, b in itertools.pairwise(bounds)]


def broken_rules(spec: SceneSpec, trace: RunTrace, config: WorldConfig) -> tuple[str, ...]:
    """The rejection rules (names in `RULES`) that a factual run breaks."""
    broken = []
    shown = [c for c in trace.collisions if c.frame < SHOWN_FRAMES]
    if len(shown) < config.min_collisions_shown:
        broken.append("min_collisions_shown")
    pairs: dict[tuple[int, int], int] = {}
    for c in trace.collisions:
        pairs[c.objects] = pairs.get(c.objects, 0) + 1
    if pairs and max(pairs.values()) > config.max_collisions_per_pair:
        broken.append("max_collisions_per_pair")
    view = trace.inside_view
    if view[:SHOWN_FRAMES].sum(axis=0).min() < config.min_visible_frames:
        broken.append("min_visible_frames")
    if config.visible_collisions_only and trace.collisions:
        where = np.array([c.location for c in trace.collisions])
        if not in_view(where).all():
            broken.append("visible_collisions_only")
    frames = [e.frame for e in run_events(trace) if e.frame < SHOWN_FRAMES]
    if not frames or max(frames) - min(frames) < config.min_event_span_frames:
        broken.append("min_event_span_frames")
    speed = np.hypot(trace.velocity[..., 0], trace.velocity[..., 1])
    early = (speed[: config.max_quiet_start_frames + 1] > 0.2) & view[
        : config.max_quiet_start_frames + 1
    ]
    if not early.any():
        broken.append("max_quiet_start_frames")
    for i in range(view.shape[1]):
        runs = _runs(view[:, i])
        if any(length < config.min_visibility_run for _, length in runs[1:-1]):
            broken.append("min_visibility_run")
            break
    upright = [i for i, o in enumerate(spec.objects) if o.shape != "sphere"]  # spheres roll
    if upright and np.nanmax(tilt_degrees(trace.orientation[:, upright])) > config.max_tilt_deg:
        broken.append("max_tilt_deg")
    return tuple(broken)


def simulate_video(seed: int, index: int, config: WorldConfig | None = None) -> VideoSim:
    """Sample, simulate and (if needed) resample video `index` of a set drawn with `seed`.

    An attempt is judged first on its shown frames (every rule is checked on them; a rule
    broken there stays broken) and simulated to the end only if it passes.
    """
    config = config or WorldConfig()
    best: tuple[int, int, SceneSpec, dict[int, RunTrace]] | None = None
    kept: tuple[int, SceneSpec, RunTrace, dict[int, RunTrace]] | None = None
    for attempt in range(config.max_attempts):
        rng = np.random.default_rng([seed, index, attempt])
        spec = sample_scene(rng, config)
        if spec is None:
            continue
        known: dict[int, RunTrace] = {}
        if len(spec.objects) >= 3 and spec.objects[-2].short:
            # the first N - 2 objects alone, as they move before the two late objects arrive
            base = simulate(SceneSpec(spec.objects[:-2]), config)
            spec = aim_short_stop(rng, spec, base.location, base.inside_view, config)
        if spec.objects[-1].future:
            # the run without the future object, which is also its counterfactual run
            f = len(spec.objects) - 1
            known[f] = simulate(spec, config, removed=f)
            spec = aim_future_hit(rng, spec, known[f].location, known[f].inside_view, config)
        sim = Simulation(spec, config)
        broken = broken_rules(spec, sim.advance(SHOWN_FRAMES), config)
        if not broken:
            trace = sim.advance()
            broken = broken_rules(spec, trace, config)
            if not broken:
                kept = (attempt, spec, trace, known)
                break
        if best is None or len(broken) < best[0]:
            best = (len(broken), attempt, spec, known)
    if kept is None:
        if best is None:
            raise RuntimeError(
                f"video {index} (seed {seed}): no scene could be placed in "
                f"{config.max_attempts} attempts; loosen the placement settings of WorldConfig"
            )
        _, attempt, spec, known = best
        kept = (attempt, spec, simulate(spec, config), known)
    attempt, spec, trace, known = kept
    return VideoSim(
        seed=seed,
        index=index,
        config=config,
        spec=spec,
        factual=trace,
        counterfactual=counterfactual_runs(spec, config, trace, known),
        attempts=attempt + 1,
        broken_rules=broken_rules(spec, trace, config),
    )


def penetration(video: VideoSim) -> float:
    """Deepest object-object overlap (units) over the factual and counterfactual runs."""
    runs = [video.factual, *video.counterfactual.values()]
    return max(r.max_penetration for r in runs)


def floor_gap(video: VideoSim) -> float:
    """Largest |z - half height| of any upright object in any run (floating or sinking)."""
    worst = 0.0
    for run in [video.factual, *video.counterfactual.values()]:
        for i, obj in enumerate(video.spec.objects):
            if not run.present[i]:
                continue
            z = run.location[:, i, 2]
            worst = max(worst, float(np.max(np.abs(z - video.config.half_height(obj.shape)))))
    return worst if math.isfinite(worst) else math.inf
