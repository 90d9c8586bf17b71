"""pybullet simulation of one scene: per-frame states, camera view and object-object collisions.

One pybullet client in DIRECT mode per process (created on first use, again after a fork);
each run resets it and creates the floor and the objects in object-id order, as single rigid
bodies. The solver runs a fixed number of iterations (no early exit on the residual), sorts
overlapping pairs and solves all islands in one batch, and no body ever sleeps, so a run is a
pure function of its inputs, and an object that touches no other object changes nobody else's
motion by a single bit: a counterfactual run (the scene without object X, which is simply never
created) equals the factual run, bit for bit, until X's first contact. An object that never touches another one thus has a counterfactual run equal to
the factual one, and `counterfactual_runs` copies it instead of simulating it again (the tests
check the property on runs from scratch).

Collision events: a contact episode of a pair starts at the first physics step in which one of
its contact points touches (distance <= `TOUCH_DISTANCE`, or a positive normal impulse) and
lasts until the two objects have been more than `collision_release_distance` apart for
`collision_debounce_frames` frames in a row; a collision event is the episode's start. Two
objects pushing or sliding along each other thus make one event, however their contact points
flicker. The event's frame is the first frame whose state comes after that step (steps between
frames f and f + 1 give frame f + 1), so the states of the frames before the event are
untouched by it. Contact points are read after every physics step of the frames in which two
objects are close enough to touch (a conservative distance test): only those close pairs' points
until one of them has a point, then (from that step to the frame's end) every point. Before that
step no two objects touched, so no speed grew and no other pair could have a point either.
"""

from __future__ import annotations

import itertools
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from tvr.clevrer.vocab import SIMULATED_FRAMES
from tvr.clevrer.world.camera import in_view
from tvr.clevrer.world.config import WorldConfig
from tvr.clevrer.world.scene import ObjectSpec, SceneSpec
from tvr.core.banners import import_pybullet

pb = import_pybullet()  # without its build-time banner

# a contact point at most this far apart (units) counts as touching
TOUCH_DISTANCE = 1e-3
# islands smaller than this are solved together in one batch (far above any scene's size)
SOLVER_BATCH = 1_000_000


@dataclass(frozen=True)
class Collision:
    """One collision event: the frame it shows in, the two objects (a < b), where it happened."""

    frame: int
    objects: tuple[int, int]
    location: tuple[float, float, float]


@dataclass(frozen=True)
class RunTrace:
    """One simulation (factual, or without object `removed`) sampled at 25 fps.

    Arrays cover SIMULATED_FRAMES frames T and all N objects of the scene; a removed object's
    rows are NaN and never in view.

    Args:
        location: (T, N, 3) object centres.
        orientation: (T, N, 4) quaternions x, y, z, w.
        velocity: (T, N, 3) linear velocity, units/s.
        angular_velocity: (T, N, 3) rad/s.
        inside_view: (T, N) centre projects inside the 480x320 image.
        present: (N,) False only for the removed object.
        collisions: collision events in frame order.
        first_contact: (N,) frame at whose start the steps with the object's first contact point
            with another object begin (-1: never); frames up to it are not affected by it.
        max_penetration: deepest overlap of two objects in any contact point (units, >= 0).
        max_contact_gap: widest gap (units, >= 0) across which a contact point pushed two
            objects apart (Bullet's speculative contacts act just before the touch).
        removed: the removed object, -1 for the factual run.
    """

    location: np.ndarray
    orientation: np.ndarray
    velocity: np.ndarray
    angular_velocity: np.ndarray
    inside_view: np.ndarray
    present: np.ndarray
    collisions: tuple[Collision, ...]
    first_contact: np.ndarray
    max_penetration: float
    max_contact_gap: float = 0.0
    removed: int = -1


# ---------------------------------------------------------------------------------------------
# the process's pybullet client

_CLIENT: dict[str, int] = {}


def _client() -> int:
    """The process's DIRECT client (a forked child makes its own), without a renderer."""
    if _CLIENT.get("pid") != os.getpid():
        c = pb.connect(pb.DIRECT)
        _drop_renderer(c)
        _CLIENT["id"] = c
        _CLIENT["pid"] = os.getpid()
    return _CLIENT["id"]


def _drop_renderer(c: int) -> None:
    """Unload the client's built-in TinyRenderer plugin.

    It meshes every new body's shapes for `getCameraImage`, which we never call: creating a
    body costs about 5 times less without it. Physics is untouched (the renderer keeps its own
    meshes and never acts on the bodies). `loadPlugin` of a plugin already loaded returns its id.
    """
    plugin = pb.loadPlugin("tinyRendererPlugin", physicsClientId=c)
    if plugin >= 0:
        pb.unloadPlugin(plugin, physicsClientId=c)


def yaw_quaternion(yaw: float) -> tuple[float, float, float, float]:
    """Quaternion (x, y, z, w) of a rotation by `yaw` about +z."""
    return (0.0, 0.0, math.sin(yaw / 2.0), math.cos(yaw / 2.0))


def bounding_radius(shape: str, config: WorldConfig) -> float:
    """Radius of the smallest sphere around the object's centre that holds the whole shape."""
    r = config.object_radius
    if shape == "sphere":
        return r
    if shape == "cube":
        return config.half_height("cube") * math.sqrt(3.0)
    return r * math.sqrt(2.0)  # cylinder: radius r, half height r


def launch_angular_velocity(obj: ObjectSpec, config: WorldConfig) -> tuple[float, float, float]:
    """A sphere is launched rolling (no slip at the floor); cubes and cylinders slide."""
    if obj.shape != "sphere":
        return (0.0, 0.0, 0.0)
    r = config.object_radius
    return (-obj.velocity[1] / r, obj.velocity[0] / r, 0.0)


# ---------------------------------------------------------------------------------------------
# one run

_NAN3 = (math.nan, math.nan, math.nan)
_NAN4 = (math.nan, math.nan, math.nan, math.nan)


class Simulation:
    """One run of a scene (without object `removed` if >= 0), built in the process's client.

    `advance(frames)` simulates on until that many frames are recorded and returns the trace so
    far, so a caller can look at the shown frames before paying for the rest. Only the newest
    Simulation of a process can advance: building one resets the client.
    """

    def __init__(self, spec: SceneSpec, config: WorldConfig, removed: int = -1) -> None:
        self.spec = spec
        self.config = config
        self.removed = removed
        self.c = _client()
        n = len(spec.objects)
        self.present = np.array([i != removed for i in range(n)])
        # per recorded frame, the values of every object in a flat list (x0, y0, z0, x1, ...;
        # NaN for the removed object)
        self.rows: dict[str, list[list[float]]] = {
            "location": [],
            "orientation": [],
            "velocity": [],
            "angular_velocity": [],
        }
        # pairs in a contact episode -> frames they have been apart (closest distance above
        # `collision_release_distance`) in a row
        self.open: dict[tuple[int, int], int] = {}
        self.collisions: list[Collision] = []
        self.first_contact = [-1] * n
        self.max_penetration = 0.0
        self.max_gap = 0.0
        self.next_frame = 0
        self.bound = [bounding_radius(o.shape, config) for o in spec.objects]
        # the pairs of bodies `_near` found close at the latest frame
        self.close: list[tuple[int, int]] | None = None
        # `_near`'s pairs of present objects: offsets of their x in a frame's flat rows and the
        # reach without the speed term
        margin = config.contact_threshold + 0.01
        present = [i for i in range(n) if i != removed]
        self.near_pairs = [
            (3 * i, 3 * j, self.bound[i] + margin + self.bound[j])
            for k, i in enumerate(present)
            for j in present[k + 1 :]
        ]
        self.launches: dict[int, list[int]] = {}
        for i, obj in enumerate(spec.objects):
            if i != removed and obj.velocity != (0.0, 0.0):
                self.launches.setdefault(obj.launch_frame, []).append(i)
        self._build()

    def _build(self) -> None:
        c, cfg = self.c, self.config
        pb.resetSimulation(physicsClientId=c)
        pb.setGravity(0.0, 0.0, -cfg.gravity, physicsClientId=c)
        pb.setPhysicsEngineParameter(
            fixedTimeStep=1.0 / cfg.physics_hz,
            numSubSteps=0,
            numSolverIterations=cfg.solver_iterations,
            solverResidualThreshold=0.0,
            deterministicOverlappingPairs=1,
            # every island in one solver call, always: otherwise an object's bounding box coming
            # near another (merging their islands) regroups the solver's batches, which changes
            # the others' motion in the last bits before any contact
            minimumSolverIslandSize=SOLVER_BATCH,
            contactBreakingThreshold=cfg.contact_threshold,
            physicsClientId=c,
        )
        plane = pb.createCollisionShape(pb.GEOM_PLANE, physicsClientId=c)
        # a plain static rigid body (not a fixed multibody): cheaper contacts, and no multibody
        # solver state shared between the objects that touch it
        self.floor = pb.createMultiBody(
            0.0, plane, useMaximalCoordinates=True, physicsClientId=c
        )
        pb.changeDynamics(
            self.floor,
            -1,
            lateralFriction=1.0,
            restitution=0.0,
            # Bullet combines rolling (spinning) friction as rf_a * mu_b + mu_a * rf_b: with 0
            # here the objects' own coefficients are the ones that act
            rollingFriction=0.0,
            spinningFriction=0.0,
            physicsClientId=c,
        )
        r = cfg.object_radius
        shapes = {
            "sphere": pb.createCollisionShape(pb.GEOM_SPHERE, radius=r, physicsClientId=c),
            "cube": pb.createCollisionShape(
                pb.GEOM_BOX, halfExtents=[cfg.half_height("cube")] * 3, physicsClientId=c
            ),
            "cylinder": pb.createCollisionShape(
                pb.GEOM_CYLINDER, radius=r, height=2.0 * r, physicsClientId=c
            ),
        }
        self.bodies: list[int] = []
        self.body_object: dict[int, int] = {}
        for i, obj in enumerate(self.spec.objects):
            if i == self.removed:
                self.bodies.append(-1)
                continue
            body = pb.createMultiBody(
                cfg.mass,
                shapes[obj.shape],
                basePosition=(obj.position[0], obj.position[1], cfg.half_height(obj.shape)),
                baseOrientation=yaw_quaternion(obj.yaw),
                useMaximalCoordinates=True,
                physicsClientId=c,
            )
            pb.changeDynamics(
                body,
                -1,
                lateralFriction=cfg.floor_friction,
                restitution=math.sqrt(cfg.object_restitution),
                rollingFriction=cfg.rolling_friction,
                spinningFriction=cfg.spinning_friction,
                linearDamping=0.0,
                angularDamping=0.0,
                # anchored friction: a resting box creeps 0.3 mm in 7 s instead of 5 mm
                frictionAnchor=1,
                # no sleeping: whether Bullet lets a body at rest sleep depends on the bodies
                # whose bounding boxes overlap it, which would let a removed object change the
                # others' motion before it touches them
                activationState=pb.ACTIVATION_STATE_DISABLE_SLEEPING,
                physicsClientId=c,
            )
            self.bodies.append(body)
            self.body_object[body] = i

    def _record(self) -> None:
        """Append the current state of every object."""
        c = self.c
        pos_orn, vel_ang = pb.getBasePositionAndOrientation, pb.getBaseVelocity
        loc: list[float] = []
        ori: list[float] = []
        vel: list[float] = []
        ang: list[float] = []
        add_loc, add_ori, add_vel, add_ang = loc.extend, ori.extend, vel.extend, ang.extend
        for body in self.bodies:
            if body < 0:
                add_loc(_NAN3)
                add_ori(_NAN4)
                add_vel(_NAN3)
                add_ang(_NAN3)
                continue
            pos, quat = pos_orn(body, c)
            lin, rot = vel_ang(body, c)
            add_loc(pos)
            add_ori(quat)
            add_vel(lin)
            add_ang(rot)
        rows = self.rows
        rows["location"].append(loc)
        rows["orientation"].append(ori)
        rows["velocity"].append(vel)
        rows["angular_velocity"].append(ang)

    def _launch(self, f: int) -> None:
        """Set the velocities of the objects launched at frame f (before it is recorded)."""
        for i in self.launches.get(f, ()):
            obj = self.spec.objects[i]
            pb.resetBaseVelocity(
                self.bodies[i],
                linearVelocity=(obj.velocity[0], obj.velocity[1], 0.0),
                angularVelocity=launch_angular_velocity(obj, self.config),
                physicsClientId=self.c,
            )

    def _near(self, loc: list[float], vel: list[float]) -> bool:
        """Whether two objects might touch during the next frame's steps (`loc`, `vel`: a
        recorded frame's flat rows); the pairs of bodies that might are left in `self.close`.

        Conservative: for some pair, the centre distance is below the sum of their bounding
        sphere radii (whatever their tilt), plus Bullet's contact threshold, plus 1.5 times
        what the two speeds cover in a frame. A speed can grow within the frame only by a hit,
        and a hit needs a contact point of some pair that passes this test, which turns on
        reading the contacts of every pair (`advance`).
        """
        step = 1.5 / 25.0
        hypot = math.hypot
        speed: dict[int, float] = {}
        close: list[tuple[int, int]] = []
        for a, b, base in self.near_pairs:
            va = speed.get(a)
            if va is None:
                va = speed[a] = hypot(vel[a], vel[a + 1])
            vb = speed.get(b)
            if vb is None:
                vb = speed[b] = hypot(vel[b], vel[b + 1])
            dx, dy = loc[b] - loc[a], loc[b + 1] - loc[a + 1]
            reach = base + step * (va + vb)
            if dx * dx + dy * dy < reach * reach:
                close.append((self.bodies[a // 3], self.bodies[b // 3]))
        self.close = close
        return bool(close)

    def _close_points(self) -> bool:
        """Whether a pair in `self.close` has a contact point after the latest step."""
        c, points = self.c, pb.getContactPoints
        return any(points(a, b, physicsClientId=c) for a, b in self.close)

    def _contacts(self, f: int) -> None:
        """Read the contact points after a physics step between frames f and f + 1."""
        touching: dict[tuple[int, int], list[tuple[float, ...]]] = {}
        floor = self.floor
        body_object = self.body_object
        first_contact = self.first_contact
        for pt in pb.getContactPoints(physicsClientId=self.c):
            a, b = pt[1], pt[2]
            if a == floor or b == floor:  # most points: the objects standing on the floor
                continue
            ia, ib = body_object[a], body_object[b]
            if first_contact[ia] < 0:
                first_contact[ia] = f
            if first_contact[ib] < 0:
                first_contact[ib] = f
            dist = pt[8]
            if -dist > self.max_penetration:
                self.max_penetration = -dist
            if pt[9] > 0.0 and dist > self.max_gap:
                self.max_gap = dist
            if dist <= TOUCH_DISTANCE or pt[9] > 0.0:
                pair = (ia, ib) if ia < ib else (ib, ia)
                pa, pb_ = pt[5], pt[6]
                touching.setdefault(pair, []).append(
                    ((pa[0] + pb_[0]) / 2.0, (pa[1] + pb_[1]) / 2.0, (pa[2] + pb_[2]) / 2.0)
                )
        for pair in sorted(touching):
            if pair not in self.open:
                pts = touching[pair]
                loc = tuple(float(sum(p[d] for p in pts) / len(pts)) for d in range(3))
                self.collisions.append(Collision(f + 1, pair, loc))
            self.open[pair] = 0

    def _release(self) -> None:
        """After a frame's steps: end the episodes of pairs apart for long enough."""
        cfg = self.config
        for pair in sorted(self.open):
            a, b = self.bodies[pair[0]], self.bodies[pair[1]]
            near = pb.getClosestPoints(
                a, b, cfg.collision_release_distance, physicsClientId=self.c
            )
            if near:
                self.open[pair] = 0
            elif self.open[pair] + 1 >= cfg.collision_debounce_frames:
                del self.open[pair]
            else:
                self.open[pair] += 1

    def advance(self, frames: int = SIMULATED_FRAMES) -> RunTrace:
        """Simulate on until `frames` frames are recorded; the trace of the frames so far."""
        c, k = self.c, self.config.substeps
        step = pb.stepSimulation
        rows = self.rows
        for f in range(self.next_frame, min(frames, SIMULATED_FRAMES)):
            if f > 0:  # the steps from frame f - 1 to frame f
                self.close = None
                if self._near(rows["location"][f - 1], rows["velocity"][f - 1]):
                    # every point from the first step in which a close pair has one (from the
                    # first step if `_near` named no pairs)
                    every = self.close is None
                    for _ in range(k):
                        step(c)
                        if every or self._close_points():
                            every = True
                            self._contacts(f - 1)
                else:
                    for _ in range(k):
                        step(c)
                if self.open:
                    self._release()
            if f in self.launches:
                self._launch(f)
            self._record()
            self.next_frame = f + 1
        return self.trace()

    def trace(self) -> RunTrace:
        """The run's arrays over the frames recorded so far."""
        n, t = len(self.bodies), len(self.rows["location"])
        arrays = {}
        for name, rows in self.rows.items():
            dim = 4 if name == "orientation" else 3
            flat = itertools.chain.from_iterable(rows)
            arrays[name] = np.fromiter(flat, dtype=np.float64, count=t * n * dim).reshape(t, n, dim)
        view = in_view(arrays["location"])
        view[:, ~self.present] = False
        return RunTrace(
            inside_view=view,
            present=self.present.copy(),
            collisions=tuple(sorted(self.collisions, key=lambda e: (e.frame, e.objects))),
            first_contact=np.array(self.first_contact, dtype=np.int64),
            max_penetration=float(self.max_penetration),
            max_contact_gap=float(self.max_gap),
            removed=self.removed,
            **arrays,
        )


# ---------------------------------------------------------------------------------------------
# public entry points


def simulate(spec: SceneSpec, config: WorldConfig, removed: int = -1) -> RunTrace:
    """One run from scratch: the factual one, or (removed >= 0) the scene without that object."""
    return Simulation(spec, config, removed=removed).advance()


def without(trace: RunTrace, i: int) -> RunTrace:
    """The factual trace with object i blanked out: the counterfactual of an object that never
    touched another one (nothing else changes, see the module docstring)."""
    present = trace.present.copy()
    present[i] = False
    arrays = {}
    for name in ("location", "orientation", "velocity", "angular_velocity"):
        a = getattr(trace, name).copy()
        a[:, i] = np.nan
        arrays[name] = a
    view = trace.inside_view.copy()
    view[:, i] = False
    first = trace.first_contact.copy()
    first[i] = -1
    return RunTrace(
        inside_view=view,
        present=present,
        collisions=trace.collisions,
        first_contact=first,
        max_penetration=trace.max_penetration,
        max_contact_gap=trace.max_contact_gap,
        removed=i,
        **arrays,
    )


def counterfactual_runs(
    spec: SceneSpec, config: WorldConfig, factual: RunTrace,
    known: Mapping[int, RunTrace] | None = None,
) -> dict[int, RunTrace]:
    """The run without each object in turn, keyed by the removed object's id; `known` holds
    runs without an object already simulated (the removed object's own values do not matter)."""
    runs = {}
    for i in range(len(spec.objects)):
        if known and i in known:
            runs[i] = known[i]
        elif factual.first_contact[i] < 0:
            runs[i] = without(factual, i)
        else:
            runs[i] = simulate(spec, config, removed=i)
    return runs
