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
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from tvr.clevrer.vocab import COLORS, FPS, MATERIALS, SHAPES
from tvr.clevrer.world.camera import CAMERA_LOCATION, in_view, outside_distance
from tvr.clevrer.world.config import WorldConfig

ROLES = ("resting", "moving", "entering")
# when an object moving at frame 0 reaches the object it pushes out of the view (s, about)
START_PUSH_ARRIVAL_S = 1.0
# frames before a future hit from which its path is no longer checked for clearance
FUTURE_APPROACH_FRAMES = 3
# a short-stopping object's target: at rest (units/s) from this many frames before the earliest
# stop time on; the short object's path is not checked against it for its last frames
SHORT_SETTLE_FRAMES = 10
SHORT_REST_SPEED = 0.05
SHORT_APPROACH_FRAMES = 40
# how far (units) a pushed object's path is followed to find where it leaves the view, and how
# far past the border its centre is sent
MAX_EXIT_DISTANCE = 12.0
EXIT_OVERSHOOT = 0.3
# the floor directions (radians) along the image's rows, towards its right and left border:
# perpendicular to the camera's line of sight
_LOOK = math.atan2(-CAMERA_LOCATION[1], -CAMERA_LOCATION[0])
SIDEWAYS_RAD: tuple[float, float] = (_LOOK - math.pi / 2.0, _LOOK + math.pi / 2.0)


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
        future: the entering object aimed at a collision after the shown frames (the last
            object of its scene; `aim_future_hit` aims it again on the simulated run).
        short: the entering object that stops just short of a resting object after the shown
            frames (the one before the future object; `aim_short_stop` aims it again).
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
    future: bool = False
    short: bool = False


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
    mode: str = "hit",
) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """(start outside the view, unit direction of travel, aim point); None if stuck.

    The direction is random, at least `min_entry_angle_deg` away from the directions in
    `used` when such a direction works (objects enter only across the left, right and near
    edges, so three of them may not find room); for `mode` "push" and "pass" it is first drawn
    within `exit_spread_deg` of the image's horizontal (to the left or right border). The aim
    point is `aim_centre` shifted sideways by up to `config.aim_offset` ("hit"), by
    `push_offset` ("push", "short": head-on), by `pass_offset` ("pass": the object passes it) or
    by `future_offset` ("future": a glancing hit). The start is the first point behind the aim,
    going backwards along the direction, whose whole silhouette is at least `entry_margin_px`
    outside the image.
    """
    steps = np.arange(0.7, config.max_entry_distance, 0.05)
    # radius of a sphere around any of the shapes (a cylinder's corner is the farthest point)
    bound = config.object_radius * math.sqrt(2.0)
    cos_min = math.cos(math.radians(config.min_entry_angle_deg))
    for k in range(120):
        if mode in ("push", "pass") and k < 60:
            # across the image, towards its left or right border
            a = SIDEWAYS_RAD[int(rng.integers(2))] + math.radians(
                rng.uniform(-config.exit_spread_deg, config.exit_spread_deg))
        else:
            a = rng.uniform(0.0, 2.0 * math.pi)
        direction = np.array([math.cos(a), math.sin(a)])
        if k < 80 and any(float(direction @ u) > cos_min for u in used):
            continue  # too close to an earlier entering object's direction (tried first)
        side = np.array([-direction[1], direction[0]])
        if mode == "pass":  # past the aim point's object, not into it
            offset = float(rng.uniform(*config.pass_offset)) * (1.0 if rng.random() < 0.5 else -1.0)
        elif mode == "future":  # a glancing hit (see `future_offset`)
            offset = float(rng.uniform(*config.future_offset)) * (1.0 if rng.random() < 0.5 else -1.0)
        elif mode in ("push", "short"):  # head-on, so the pushed object keeps the direction
            offset = float(rng.uniform(-config.push_offset, config.push_offset))
        else:
            offset = float(rng.uniform(-config.aim_offset, config.aim_offset))
        aim = aim_centre + side * offset
        candidates = aim[None, :] - steps[:, None] * direction[None, :]
        pts = np.concatenate([candidates, np.full((len(candidates), 1), config.object_radius)], 1)
        hidden = outside_distance(pts, bound) > config.entry_margin_px
        if not hidden.any():
            continue
        start = candidates[int(np.argmax(hidden))]
        if all(np.hypot(*(start - q)) >= config.min_separation for q in placed):
            return start, direction, aim
    return None


def exit_speed(
    point: np.ndarray, direction: np.ndarray, seconds: float, config: WorldConfig
) -> float | None:
    """The least speed at which an object sliding from `point` along `direction` (slowing at
    mu * g) has its centre out of the view within `seconds`; None if it never leaves the view
    within `max_exit_distance` that way or there is too little time."""
    if seconds < 0.3:
        return None
    steps = np.arange(0.0, MAX_EXIT_DISTANCE, 0.05)
    pts = point[None, :] + steps[:, None] * direction[None, :]
    inside = _floor_points_in_view(pts, config.object_radius, 0.0)
    if inside.all():
        return None
    # past the border by a little, so that the centre really crosses it
    d = float(steps[int(np.argmin(inside))]) + EXIT_OVERSHOOT
    a = config.sliding_deceleration
    stop = math.sqrt(2.0 * a * d)  # reaches d just as it stops
    if stop < a * seconds:
        return stop
    return d / seconds + a * seconds / 2.0  # still moving at `seconds`


def _launch_entering(
    rng: np.random.Generator,
    aim_at: Callable[[float], np.ndarray],
    window: tuple[float, float],
    mode: str,
    future: bool,
    starts: list[np.ndarray],
    directions: list[np.ndarray],
    config: WorldConfig,
) -> tuple[np.ndarray, np.ndarray, tuple[float, float], int, float] | None:
    """(start, unit direction, launch velocity, launch frame, time of the hit) of an entering
    object that reaches `aim_at(t)` (its target's centre at time t) at a time t drawn from
    `window`; None if stuck.

    `mode` is "hit", "push" or "pass" (`exit_push_probability`, `pass_probability`), or
    "future" for a future hit (`future`, launched by `latest_future_launch`).
    """
    decel = config.sliding_deceleration
    contact = 2.0 * config.object_radius
    for _ in range(20):
        t_hit = float(rng.uniform(*window))
        aim_centre = aim_at(t_hit)
        if _floor_points_in_view(aim_centre, config.object_radius, config.start_margin_px):
            break
    else:
        return None
    for _ in range(10):
        found = _entry_start(rng, aim_centre, starts, directions, config, mode)
        if found is None:
            return None
        start, direction, aim = found
        # distance the centre covers until it touches the target's predicted position
        dist = max(float(np.hypot(*(aim - start))) - contact, 0.0)
        v_hit = float(rng.uniform(*config.hit_speed))
        if mode in ("push", "pass"):
            v_out = exit_speed(aim, direction, config.exit_by_s - t_hit, config)
            if v_out is not None:
                transfer = config.push_transfer if mode == "push" else 1.0
                v_push = v_out / transfer * float(rng.uniform(*config.exit_speed_margin))
                if v_push * v_push + 2.0 * decel * dist <= config.max_speed**2:
                    v_hit = max(v_hit, v_push)
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
    return start, direction, velocity, int(launch), t_hit


def _launch_short(
    rng: np.random.Generator,
    target: np.ndarray,
    t_stop: float,
    starts: list[np.ndarray],
    directions: list[np.ndarray],
    config: WorldConfig,
) -> tuple[np.ndarray, np.ndarray, tuple[float, float], int, float] | None:
    """(start, direction, velocity, launch frame, stop time) of an entering object that slides
    head-on towards the resting object at `target` and stops `short_gap` units before touching
    it at `t_stop` (s), launched by `latest_future_launch`; None if no path does.

    At the last shown frame it still moves straight at its target, so a constant-velocity
    extrapolation has the two collide; friction stops it first. Predictive questions take such a
    pair as a distractor that needs dynamics to reject.
    """
    decel = config.sliding_deceleration
    contact = 2.0 * config.object_radius
    for _ in range(10):
        found = _entry_start(rng, target, starts, directions, config, "short")
        if found is None:
            return None
        start, direction, aim = found
        stop = aim - direction * (contact + float(rng.uniform(*config.short_gap)))
        d = float((stop - start) @ direction)
        if d <= 0.0:
            continue
        v0 = math.sqrt(2.0 * decel * d)
        launch_s = t_stop - v0 / decel
        if v0 > config.max_speed or not 0.0 <= launch_s <= config.latest_future_launch:
            continue
        velocity = (v0 * float(direction[0]), v0 * float(direction[1]))
        return start, direction, velocity, round(launch_s * FPS), t_stop
    return None


def _push_at_start(
    rng: np.random.Generator, p: np.ndarray, resting: list[np.ndarray], config: WorldConfig
) -> tuple[int, float, float] | None:
    """(index into `resting`, heading, speed) of an object moving at frame 0 from `p` that hits
    one of the resting objects head-on fast enough to push it out of the view by `exit_by_s`
    (as `exit_push_probability` has entering objects do); None if no resting object can be
    pushed out so."""
    decel = config.sliding_deceleration
    options = []
    for k, q in enumerate(resting):
        gap = float(np.hypot(*(q - p)))
        unit = (q - p) / gap
        dist = max(gap - 2.0 * config.object_radius, 0.0)
        v_out = exit_speed(q, unit, config.exit_by_s - START_PUSH_ARRIVAL_S, config)
        if v_out is None:
            continue
        v_hit = v_out / config.push_transfer * float(rng.uniform(*config.exit_speed_margin))
        speed = math.sqrt(v_hit * v_hit + 2.0 * decel * dist)
        if speed <= config.max_speed:
            options.append((k, math.atan2(unit[1], unit[0]), speed))
    if not options:
        return None
    return options[int(rng.integers(len(options)))]


def _free_resting(rng: np.random.Generator, objects: list[ObjectSpec]) -> int | None:
    """A resting object nobody else was sent to, else any resting object (drawn); None if none
    rests."""
    resting = [i for i, o in enumerate(objects) if o.role == "resting"]
    free = [i for i in resting if all(o.target != i for o in objects)] or resting
    return free[int(rng.integers(len(free)))] if free else None


def _roles(rng: np.random.Generator, config: WorldConfig) -> tuple[list[str], int, bool, bool]:
    """The scene's roles in placing order (resting, moving at the start, entering), how many move
    at the start, and whether the last entering object hits after the shown frames
    (`future_last`) and the one before it stops short of a resting object (`short_last`)."""
    n = int(rng.integers(config.n_objects[0], config.n_objects[1] + 1))
    n_enter = min(int(rng.integers(config.n_entering[0], config.n_entering[1] + 1)), n - 1)
    # the last entering object may be aimed after the shown frames; it comes on top of at
    # least one entering object aimed within them
    future_last = bool(rng.random() < config.future_hit_probability)
    # ... and the one before it may stop short of a resting object after the shown frames;
    # both come on top of at least one entering object that hits within them
    short_last = future_last and bool(rng.random() < config.short_probability)
    if future_last:
        n_enter = min(max(n_enter, 2 + short_last), n - 1)
        short_last = short_last and n_enter >= 3
    n_move = min(
        int(rng.integers(config.n_moving_at_start[0], config.n_moving_at_start[1] + 1)),
        n - n_enter,
    )
    if future_last:  # keep a resting object for the future hit (see below)
        n_move = min(n_move, n - n_enter - 1)
    roles = ["resting"] * (n - n_enter - n_move) + ["moving"] * n_move + ["entering"] * n_enter
    return roles, n_move, future_last, short_last


def _start_motion(rng: np.random.Generator, p: np.ndarray, objects: list[ObjectSpec],
                  starts: list[np.ndarray], config: WorldConfig) -> tuple[tuple[float, float], int]:  # fmt: skip
    """(velocity, target) of an object moving at frame 0 from `p`: towards a resting object if
    there is one (a collision in the first seconds), else towards the arena centre, in both
    cases with a random deviation; or, at `leave_probability`, pushing a resting object out of
    the view, or across the image and out of it."""
    resting = [i for i, o in enumerate(objects) if o.role == "resting"]
    target = resting[int(rng.integers(len(resting)))] if resting else -1
    goal = starts[target] if resting else np.zeros(2)
    spread = config.start_heading_spread_deg if not resting else config.aim_spread_deg
    heading = math.atan2(goal[1] - p[1], goal[0] - p[0]) + math.radians(
        rng.uniform(-spread, spread)
    )
    speed = float(rng.uniform(*config.start_speed))
    if rng.random() < config.leave_probability:
        pushed = _push_at_start(rng, p, [starts[i] for i in resting], config)
        if pushed is not None:
            # head-on into a resting object that it pushes out of the view
            k, heading, speed = pushed
            target = resting[k]
        else:
            # across the image and out of it (whatever it meets on the way)
            heading = SIDEWAYS_RAD[int(rng.integers(2))] + math.radians(
                rng.uniform(-config.exit_spread_deg, config.exit_spread_deg))
            unit = np.array([math.cos(heading), math.sin(heading)])
            v_out = exit_speed(p, unit, config.exit_by_s, config)
            if v_out is not None:
                speed = min(v_out * float(rng.uniform(*config.exit_speed_margin)),
                            config.max_speed)
                target = -1
    return (speed * math.cos(heading), speed * math.sin(heading)), target


def _hit_window(rng: np.random.Generator, future: bool, first: bool,
                config: WorldConfig) -> tuple[tuple[float, float], str]:  # fmt: skip
    """When an entering object hits its target (seconds) and how it leaves: "push" its target
    out of the view, "pass" it by and leave the view itself, "hit" it (whatever follows), or the
    "future" hit after the shown frames. `first`: nothing moves before it (it comes in soon)."""
    window = config.future_hit_time if future else config.hit_time
    if first:
        window = config.first_hit_time
    draw = rng.random()
    mode = "hit"
    if not future and draw < config.exit_push_probability + config.pass_probability:
        mode = "push" if draw < config.exit_push_probability else "pass"
    if future:
        mode = "future"
    if mode in ("push", "pass"):  # early enough to reach the border by `exit_by_s`
        window = (window[0], min(window[1], config.exit_by_s - config.exit_travel_s))
    return window, mode


def sample_scene(rng: np.random.Generator, config: WorldConfig) -> SceneSpec | None:
    """One random scene, or None when the objects could not be placed (the caller resamples)."""
    roles, n_move, future_last, short_last = _roles(rng, config)
    n = len(roles)
    combos = attribute_combinations()
    chosen = [combos[i] for i in rng.choice(len(combos), size=n, replace=False)]
    decel = config.sliding_deceleration
    objects: list[ObjectSpec] = []
    starts: list[np.ndarray] = []
    directions: list[np.ndarray] = []  # of the entering objects so far
    for role, (color, material, shape) in zip(roles, chosen, strict=True):
        yaw = float(rng.uniform(0.0, 2.0 * math.pi))
        if role in ("resting", "moving"):
            p = _place_in_view(rng, starts, config)
            if p is None:
                return None
            velocity, target = (0.0, 0.0), -1
            if role == "moving":
                velocity, target = _start_motion(rng, p, objects, starts, config)
            objects.append(ObjectSpec(color, material, shape, (float(p[0]), float(p[1])), yaw,
                                      velocity, 0, role, target))  # fmt: skip
            starts.append(p)
            continue
        # an entering object: aim at an object already placed, at a chosen time when the
        # target's predicted centre is well inside the view
        future = future_last and len(objects) == n - 1
        target = int(rng.integers(len(objects)))
        if future:
            # the future hit goes to a free resting object: its predicted position is the most
            # trustworthy
            free = _free_resting(rng, objects)
            target = target if free is None else free
        first = n_move == 0 and all(o.role != "entering" for o in objects)
        window, mode = _hit_window(rng, future, first, config)
        target_obj = objects[target]
        launched = None
        short = False
        if short_last and len(objects) == n - 2:
            # a slow approach that stops just short of a resting object after the video: at the
            # last shown frame it is still heading straight for it (`_launch_short`)
            # (`aim_short_stop` aims it again at an object really at rest then)
            free = _free_resting(rng, objects)
            if free is not None:
                target = free
                t_stop = float(rng.uniform(*config.short_stop_time))
                launched = _launch_short(rng, np.asarray(objects[target].position), t_stop,
                                         starts, directions, config)
                short = launched is not None
        if launched is None:
            launched = _launch_entering(
                rng, lambda t, o=target_obj: predicted_position(o, t, decel), window, mode,
                future, starts, directions, config)
        if launched is None:
            return None
        start, direction, velocity, launch, _ = launched
        objects.append(ObjectSpec(color, material, shape, (float(start[0]), float(start[1])), yaw,
                                  velocity, int(launch), role, target, future, short))  # fmt: skip
        starts.append(start)
        directions.append(direction)
    return SceneSpec(tuple(objects))


def _clear_path(obj: ObjectSpec, location: np.ndarray, upto: int, config: WorldConfig,
                target: int = -1, approach: int = 0) -> bool:
    """Whether `obj`'s free path until frame `upto` passes every object of `location` (T, M, 3)
    at `future_clearance` or more (its target only until `approach` frames before `upto`)."""
    decel = config.sliding_deceleration
    frames = np.arange(upto + 1)
    path = np.array([predicted_position(obj, fr / FPS, decel) for fr in frames])
    gaps = np.linalg.norm(location[: upto + 1, :, :2] - path[:, None, :], axis=-1)
    if 0 <= target < gaps.shape[1] and approach > 0:
        gaps[max(upto - approach, 0):, target] = np.inf
    return bool(np.nanmin(gaps) >= config.future_clearance)


def aim_short_stop(
    rng: np.random.Generator,
    spec: SceneSpec,
    location: np.ndarray,
    inside_view: np.ndarray,
    config: WorldConfig,
) -> SceneSpec:
    """The scene with its short-stopping object (if any, the one before the future object) aimed
    again at where a resting object really is when it stops.

    `location` (T, M, 3) and `inside_view` (T, M) are the run of the scene's first M = N - 2
    objects (without the short and the future object, which move nobody before their first
    contact). A target at rest and in view from `short_stop_time` on is drawn, and a path that
    passes every other object at `future_clearance` or more; the scene is returned unchanged
    if none is found (the object then stops wherever its first aim takes it).
    """
    s = len(spec.objects) - 2
    if s < 1 or not spec.objects[s].short:
        return spec
    m = location.shape[0]
    lo = round(config.short_stop_time[0] * FPS) - SHORT_SETTLE_FRAMES
    speed = np.linalg.norm(np.diff(location[:, :s, :2], axis=0), axis=-1) * FPS
    still = (speed[lo:] < SHORT_REST_SPEED).all(axis=0) & inside_view[lo:m, :s].all(axis=0)
    targets = [int(j) for j in np.flatnonzero(still)]
    starts = [np.asarray(location[0, i, :2], dtype=np.float64) for i in range(s)]
    directions = _entering_directions(spec.objects[:s])
    for _ in range(config.future_aim_tries):
        if not targets:
            break
        j = targets[int(rng.integers(len(targets)))]
        t_stop = float(rng.uniform(*config.short_stop_time))
        launched = _launch_short(rng, np.asarray(location[-1, j, :2], dtype=np.float64), t_stop,
                                 starts, directions, config)
        if launched is None:
            continue
        start, _, velocity, launch, _ = launched
        obj = replace(spec.objects[s], position=(float(start[0]), float(start[1])),
                      velocity=velocity, launch_frame=launch, target=j)
        upto = min(round(t_stop * FPS), m - 1)
        if _clear_path(obj, location, upto, config, target=j, approach=SHORT_APPROACH_FRAMES):
            return SceneSpec((*spec.objects[:s], obj, spec.objects[s + 1]))
    return spec


def _entering_directions(objects: tuple[ObjectSpec, ...]) -> list[np.ndarray]:
    out = []
    for o in objects:
        speed = math.hypot(*o.velocity)
        if o.role == "entering" and speed > 0:
            out.append(np.asarray(o.velocity) / speed)
    return out


def aim_future_hit(
    rng: np.random.Generator,
    spec: SceneSpec,
    location: np.ndarray,
    inside_view: np.ndarray,
    config: WorldConfig,
) -> SceneSpec:
    """The scene with its future object (if any) aimed again, at where a target really is.

    `location` (T, N, 3) and `inside_view` (T, N) are the run of the scene without the future
    object, which moves nobody else before its first contact: so the other objects are exactly
    there when it arrives, although earlier hits moved them from where `sample_scene` predicted
    (aimed there, only 34 of 100 planned future hits struck their target after the video). A
    target in view at the hit time is drawn (not the short-stopping object's target, which must
    stay where it is), and a path on which the future object passes every other object at a
    distance (`future_clearance`) until the hit; the scene is returned unchanged if none is
    found.
    """
    f = len(spec.objects) - 1
    if f < 1 or not spec.objects[f].future:
        return spec
    others = list(range(f))
    starts = [np.asarray(location[0, i, :2], dtype=np.float64) for i in others]
    directions = _entering_directions(spec.objects[:f])
    last = location.shape[0] - 1
    lo, hi = (round(t * FPS) for t in config.future_hit_time)
    avoid = {o.target for o in spec.objects[:f] if o.short}
    targets = [i for i in others if inside_view[lo : hi + 1, i].any() and i not in avoid]
    for _ in range(config.future_aim_tries):
        if not targets:
            break
        j = targets[int(rng.integers(len(targets)))]

        def aim_at(t: float, j: int = j) -> np.ndarray:
            return np.asarray(location[min(round(t * FPS), last), j, :2], dtype=np.float64)

        launched = _launch_entering(rng, aim_at, config.future_hit_time, "future", True, starts,
                                    directions, config)
        if launched is None:
            continue
        start, _, velocity, launch, t_hit = launched
        obj = replace(spec.objects[f], position=(float(start[0]), float(start[1])),
                      velocity=velocity, launch_frame=launch, target=j)
        # its free path until just before the hit, against everybody's real positions
        upto = max(round(t_hit * FPS) - FUTURE_APPROACH_FRAMES, launch)
        if _clear_path(obj, location[:, :f], upto, config):
            return SceneSpec((*spec.objects[:f], obj))
    return spec
