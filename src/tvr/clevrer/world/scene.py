"""Scene sampling: which objects, where they start, how and when they are launched.

Follows the paper's recipe ("start with randomly initialized moving objects, then recursively
introduce new objects whose motion traces overlap with the existing ones"): objects resting on
the floor and objects moving at frame 0 are placed inside the view; then each entering object
picks an object already placed, predicts where it will be at a chosen time (straight line,
constant deceleration), and is aimed at that point from outside the view, launched so that it
arrives at that time. Objects moving at frame 0 head for a resting object. With probability
`future_hit_probability` the last entering object is aimed after the shown frames (the
collision that predictive questions ask about). Whether the collisions really happen is the
simulator's business; the video-level rejection rules (`video.py`) keep the interesting ones.
All numbers are `WorldConfig` fields; docs/clevrer.md (The world) lists them with their reasons.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tvr.clevrer.vocab import COLORS, FPS, MATERIALS, SHAPES
from tvr.clevrer.world.camera import in_view, outside_distance
from tvr.clevrer.world.config import WorldConfig

ROLES = ("resting", "moving", "entering")


@dataclass(frozen=True)
class ObjectSpec:
    """One object: attributes, start pose, launch velocity and launch frame.

    Args:
        color, material, shape: the attributes (CLEVRER's vocabulary).
        position: start centre (x, y) on the floor; z is the shape's half height.
        yaw: rotation about z at the start (radians).
        velocity: (vx, vy) given at `launch_frame` (units/s); (0, 0) for a resting object.
        launch_frame: frame at whose start the velocity is set (0 for objects moving at once;
            an entering object waits outside the view until then).
        role: "resting", "moving" (inside the view at frame 0) or "entering".
        target: index of the object it was aimed at (entering objects; moving ones heading for
            a resting object), else -1.
    """

    color: str
    material: str
    shape: str
    position: tuple[float, float]
    yaw: float
    velocity: tuple[float, float]
    launch_frame: int
    role: str
    target: int = -1


@dataclass(frozen=True)
class SceneSpec:
    """The objects of one video, in object-id order."""

    objects: tuple[ObjectSpec, ...]


def attribute_combinations() -> list[tuple[str, str, str]]:
    """All 48 (color, material, shape) combinations, in vocabulary order."""
    return [(c, m, s) for c in COLORS for m in MATERIALS for s in SHAPES]


def travelled(speed: float, t: np.ndarray | float, decel: float) -> np.ndarray:
    """Distance covered after time t by an object launched at `speed` slowing at `decel`."""
    t = np.minimum(np.asarray(t, dtype=np.float64), speed / decel)
    return speed * t - 0.5 * decel * t * t


def predicted_position(obj: ObjectSpec, time_s: float, decel: float) -> np.ndarray:
    """Free-flight centre (x, y) of an object at `time_s`, ignoring every other object."""
    start = np.asarray(obj.position, dtype=np.float64)
    v = np.asarray(obj.velocity, dtype=np.float64)
    speed = float(np.hypot(*v))
    tau = time_s - obj.launch_frame / FPS
    if speed == 0.0 or tau <= 0.0:
        return start
    return start + v / speed * float(travelled(speed, tau, decel))


def _floor_points_in_view(points: np.ndarray, z: float, margin_px: float) -> np.ndarray:
    pts = np.concatenate([points, np.full((*points.shape[:-1], 1), z)], axis=-1)
    return in_view(pts, margin_px=margin_px)


def _place_in_view(
    rng: np.random.Generator, placed: list[np.ndarray], config: WorldConfig
) -> np.ndarray | None:
    """A start point inside the view, within the arena and away from `placed`; None if stuck."""
    for _ in range(200):
        r = config.arena_radius * math.sqrt(rng.random())
        a = rng.uniform(0.0, 2.0 * math.pi)
        p = np.array([r * math.cos(a), r * math.sin(a)])
        if not _floor_points_in_view(p, config.object_radius, config.start_margin_px):
            continue
        if all(np.hypot(*(p - q)) >= config.min_separation for q in placed):
            return p
    return None


def _entry_start(
    rng: np.random.Generator,
    aim_centre: np.ndarray,
    placed: list[np.ndarray],
    used: list[np.ndarray],
    config: WorldConfig,
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(start outside the view, unit direction of travel, aim point); None if stuck.

    The direction is random, at least `min_entry_angle_deg` away from the directions in
    `used` when such a direction works (objects enter only across the left, right and near
    edges, so three of them may not find room); the aim point is `aim_centre` shifted sideways by up to
    `config.aim_offset`; the start is the first point behind the aim, going backwards along the
    direction, whose whole silhouette is at least `entry_margin_px` outside the image.
    """
    steps = np.arange(0.7, config.max_entry_distance, 0.05)
    # radius of a sphere around any of the shapes (a cylinder's corner is the farthest point)
    bound = config.object_radius * math.sqrt(2.0)
    cos_min = math.cos(math.radians(config.min_entry_angle_deg))
    for k in range(120):
        a = rng.uniform(0.0, 2.0 * math.pi)
        direction = np.array([math.cos(a), math.sin(a)])
        if k < 80 and any(float(direction @ u) > cos_min for u in used):
            continue  # too close to an earlier entering object's direction (tried first)
        side = np.array([-direction[1], direction[0]])
        aim = aim_centre + side * float(rng.uniform(-config.aim_offset, config.aim_offset))
        candidates = aim[None, :] - steps[:, None] * direction[None, :]
        pts = np.concatenate([candidates, np.full((len(candidates), 1), config.object_radius)], 1)
        hidden = outside_distance(pts, bound) > config.entry_margin_px
        if not hidden.any():
            continue
        start = candidates[int(np.argmax(hidden))]
        if all(np.hypot(*(start - q)) >= config.min_separation for q in placed):
            return start, direction, aim
    return None


def sample_scene(rng: np.random.Generator, config: WorldConfig) -> SceneSpec | None:
    """One random scene, or None when the objects could not be placed (the caller resamples)."""
    n = int(rng.integers(config.n_objects[0], config.n_objects[1] + 1))
    n_enter = min(int(rng.integers(config.n_entering[0], config.n_entering[1] + 1)), n - 1)
    # the last entering object may be aimed after the shown frames; it comes on top of at
    # least one entering object aimed within them
    future_last = bool(rng.random() < config.future_hit_probability)
    if future_last:
        n_enter = min(max(n_enter, 2), n - 1)
    n_move = min(
        int(rng.integers(config.n_moving_at_start[0], config.n_moving_at_start[1] + 1)),
        n - n_enter,
    )
    if future_last:  # keep a resting object for the future hit (see below)
        n_move = min(n_move, n - n_enter - 1)
    roles = ["resting"] * (n - n_enter - n_move) + ["moving"] * n_move + ["entering"] * n_enter
    combos = attribute_combinations()
    chosen = [combos[i] for i in rng.choice(len(combos), size=n, replace=False)]
    decel = config.sliding_deceleration
    contact = 2.0 * config.object_radius

    objects: list[ObjectSpec] = []
    starts: list[np.ndarray] = []
    directions: list[np.ndarray] = []  # of the entering objects so far
    for role, (color, material, shape) in zip(roles, chosen, strict=True):
        yaw = float(rng.uniform(0.0, 2.0 * math.pi))
        if role in ("resting", "moving"):
            p = _place_in_view(rng, starts, config)
            if p is None:
                return None
            velocity = (0.0, 0.0)
            target = -1
            if role == "moving":
                # towards a resting object if there is one (a collision in the first seconds),
                # else towards the arena centre; in both cases with a random deviation
                resting = [i for i, o in enumerate(objects) if o.role == "resting"]
                target = resting[int(rng.integers(len(resting)))] if resting else -1
                goal = starts[target] if resting else np.zeros(2)
                spread = config.start_heading_spread_deg if not resting else config.aim_spread_deg
                heading = math.atan2(goal[1] - p[1], goal[0] - p[0]) + math.radians(
                    rng.uniform(-spread, spread)
                )
                speed = float(rng.uniform(*config.start_speed))
                velocity = (speed * math.cos(heading), speed * math.sin(heading))
            objects.append(
                ObjectSpec(
                    color, material, shape, (float(p[0]), float(p[1])), yaw, velocity, 0, role, target
                )
            )
            starts.append(p)
            continue
        # an entering object: aim at an object already placed, at a chosen time when the
        # target's predicted centre is well inside the view
        future = future_last and len(objects) == n - 1
        target = int(rng.integers(len(objects)))
        if future:
            # the future hit goes to a resting object nobody else was sent to, else to any
            # resting object: its predicted position is the most trustworthy
            resting = [i for i, o in enumerate(objects) if o.role == "resting"]
            free = [i for i in resting if all(o.target != i for o in objects)] or resting
            if free:
                target = free[int(rng.integers(len(free)))]
        window = config.future_hit_time if future else config.hit_time
        if n_move == 0 and all(o.role != "entering" for o in objects):
            window = config.first_hit_time  # nothing moves at the start: come in soon
        for _ in range(20):
            t_hit = float(rng.uniform(*window))
            aim_centre = predicted_position(objects[target], t_hit, decel)
            if _floor_points_in_view(aim_centre, config.object_radius, config.start_margin_px):
                break
        else:
            return None
        for _ in range(10):
            found = _entry_start(rng, aim_centre, starts, directions, config)
            if found is None:
                return None
            start, direction, aim = found
            # distance the centre covers until it touches the target's predicted position
            dist = max(float(np.hypot(*(aim - start))) - contact, 0.0)
            v_hit = float(rng.uniform(*config.hit_speed))
            if future:
                # slow enough to be launched (and come into view) by `latest_future_launch`
                t_min = max(t_hit - config.latest_future_launch, 0.1)
                v_hit = min(v_hit, dist / t_min - decel * t_min / 2.0)
                if v_hit < config.min_future_hit_speed:
                    continue  # too short a path: another direction
            speed = min(math.sqrt(v_hit * v_hit + 2.0 * decel * dist), config.max_speed)
            v_hit = math.sqrt(max(speed * speed - 2.0 * decel * dist, 0.0))
            break
        else:
            return None
        travel_s = (speed - v_hit) / decel
        launch = max(0, round((t_hit - travel_s) * FPS))
        velocity = (speed * float(direction[0]), speed * float(direction[1]))
        objects.append(
            ObjectSpec(
                color,
                material,
                shape,
                (float(start[0]), float(start[1])),
                yaw,
                velocity,
                int(launch),
                role,
                target,
            )
        )
        starts.append(start)
        directions.append(direction)
    return SceneSpec(tuple(objects))
