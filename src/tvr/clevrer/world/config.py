"""WorldConfig: every choice of CLEVRER's world that the paper leaves open, with its reason."""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class WorldConfig:
    """Object counts, sizes, speeds, entry rules, physics constants and the rejection rules.

    Units: scene units (CLEVR's; the floor is z = 0), seconds, frames at 25 fps. The paper gives
    only the attributes, "same size", Bullet, 7 s at 25 fps and "discard simulations with
    repetitive collisions between the same object pair"; every other value here is ours. The
    defaults are documented in docs/clevrer.md (The world).
    """

    # --- objects -----------------------------------------------------------------------------
    # CLEVRER's count answers run 0-5 and the paper publishes no object count; 4-6 objects
    # give enough partners for chains of collisions without crowding the 480x320 frame
    n_objects: tuple[int, int] = (4, 6)
    # objects entering from outside the view (the paper's "introduce new objects"): at least one,
    # so that every video has an "in" event to ask about
    n_entering: tuple[int, int] = (1, 3)
    # objects already moving at frame 0 inside the view (the paper's "randomly initialized moving
    # objects"); the remaining objects rest on the floor until something hits them. At least
    # one, since most of them cross the view and leave it (`leave_probability`)
    n_moving_at_start: tuple[int, int] = (1, 2)
    # CLEVR's "small" size: sphere radius, cylinder radius and half height 0.35; a cube's half
    # side is 0.35 / sqrt(2) as in CLEVR, so all three shapes span 0.7 across in the floor plane
    object_radius: float = 0.35
    # one mass for every object: the paper ties no dynamics to material, so rubber and metal
    # behave alike and only colour/material/shape tell objects apart
    mass: float = 1.0

    # --- where objects start ------------------------------------------------------------------
    # resting and initially moving objects start inside the image with their centre at least
    # this many pixels from its border (about one object width), and within `arena_radius` of
    # the origin, so that none starts half cut off or tiny in the far distance
    start_margin_px: float = 48.0
    arena_radius: float = 3.5
    # centre distance between any two objects at frame 0 (object width 0.7 plus a gap)
    min_separation: float = 1.2
    # an entering object starts with its whole silhouette (the disc its bounding sphere
    # projects to, 40-100 px wide) at least this many pixels outside the image
    entry_margin_px: float = 4.0
    # it starts at most this far from its aim point, else the direction is resampled (the far
    # side of CLEVR's camera sees the floor for 20+ units, so objects enter from the left, right
    # and near edges)
    max_entry_distance: float = 7.0
    # entering objects come from directions at least this far apart (degrees) where there is
    # room, not in convoys that run side by side into one pile
    min_entry_angle_deg: float = 40.0

    # --- speeds and aiming --------------------------------------------------------------------
    # speed of an entering object when it reaches its aim point (units/s): fast enough to push
    # the target visibly (about 2-4 object widths per second), slow enough to stay on screen
    hit_speed: tuple[float, float] = (1.5, 3.0)
    # speed of an object moving at frame 0 (units/s)
    start_speed: tuple[float, float] = (1.0, 2.5)
    # no launch speed above this (units/s): at 100 Hz an object moves at most 0.06 per step
    max_speed: float = 6.0
    # the aim point is the target's predicted centre shifted sideways by up to this much
    # (object width 0.7): head-on hits and glancing ones, and some near misses
    aim_offset: float = 0.45
    # aimed arrival times (s) of entering objects, spread over the shown 5.12 s so that events
    # happen early and late; launches before t = 0 are clamped to 0 (the hit comes earlier)
    hit_time: tuple[float, float] = (0.8, 4.4)
    # ... but when no object moves at frame 0, the first entering object arrives within
    # `first_hit_time` (s), so that the video does not open on a still scene
    first_hit_time: tuple[float, float] = (0.8, 2.2)
    # predictive questions ask about the 2 s after the video: with this probability the last
    # entering object (a second one, if need be) is aimed at a time in `future_hit_time` (s),
    # after the shown 5.12 s, launched by `latest_future_launch` (s) so that it is seen coming
    # (it arrives at `min_future_hit_speed` units/s or faster)
    future_hit_probability: float = 1.0
    future_hit_time: tuple[float, float] = (5.3, 6.6)
    latest_future_launch: float = 4.0
    min_future_hit_speed: float = 0.8
    # the future hit is aimed again on the run without it (`aim_future_hit`): targets and paths
    # tried, and the least distance (units; centres 0.7 apart touch) at which its path passes
    # every other object before the hit
    future_aim_tries: int = 12
    future_clearance: float = 0.9
    # the future hit is glancing: aimed this far to the side of its target's centre (units;
    # centres 0.6-0.7 apart touch), so its constant-velocity path does not pass closer than a
    # head-on near miss's would
    future_offset: tuple[float, float] = (0.2, 0.5)
    # with this probability the entering object before the future one (a scene with a future
    # hit has two or more) slides head-on at a resting object and stops `short_gap` units short
    # of touching it at a time in `short_stop_time` (s): at the last shown frame it still heads
    # straight for its target, so only friction tells that they will not collide (a predictive
    # distractor that a constant-velocity extrapolation takes for a collision)
    short_probability: float = 0.9
    short_gap: tuple[float, float] = (0.1, 0.4)
    short_stop_time: tuple[float, float] = (6.0, 6.9)
    # an object moving at frame 0 heads for a resting object, up to `aim_spread_deg` off (about
    # the angle an object width subtends at 2 units: hits and near misses), or, with no resting
    # object, for the arena centre up to `start_heading_spread_deg` off (it crosses the view)
    aim_spread_deg: float = 15.0
    start_heading_spread_deg: float = 60.0
    # objects leave the view: with this probability an entering object aimed within the shown
    # frames is sent fast enough that its target, pushed on along the same line (or the object
    # itself, on a near miss), slides out of the view by `exit_by_s` (s). Without it a hit
    # pushes its target into the view's deep far side or stops it short of the border, and
    # objects leave the view 0.04 times a video; CLEVRER's question families about exits need
    # exits in most videos (docs/clevrer.md, The world)
    exit_push_probability: float = 0.6
    exit_by_s: float = 4.8
    # such a hit is aimed at least this long (s) before `exit_by_s`, nearly head-on (up to
    # `push_offset` to the side), and this many times faster than the least speed that would do
    exit_travel_s: float = 2.0
    push_offset: float = 0.15
    exit_speed_margin: tuple[float, float] = (1.15, 1.4)
    # with this probability an entering object instead passes its aim object by, `pass_offset`
    # units to the side of its predicted centre (centres 0.7 apart touch: a near miss), and
    # leaves the view itself, as fast as a push; it may hit others on its way
    pass_probability: float = 0.3
    pass_offset: tuple[float, float] = (0.8, 1.4)
    # with this probability an object moving at frame 0 pushes a resting object out of the
    # view (hitting it head-on, fast enough), or, if none can be, heads across the image fast
    # enough to leave the view itself by `exit_by_s`
    leave_probability: float = 1.0
    # such an object travels across the image: its direction is within this many degrees of
    # the image's horizontal (objects entering from the near edge head into the view's deep
    # far side and never reach a border)
    exit_spread_deg: float = 35.0
    # a pushed object keeps about this share of the hitter's speed (equal masses, restitution
    # 0.7: (1 + e) / 2 = 0.85 head-on, less on glancing hits)
    push_transfer: float = 0.8

    # --- physics ------------------------------------------------------------------------------
    # Bullet step rate; frames are sampled every physics_hz / 25 steps. At 100 Hz the deepest
    # object-object overlap in 200 benchmark videos is 0.059 (3 px, during the fastest hits);
    # 200 Hz gives 0.021 at 1.6 times the cost (docs/clevrer.md (The world))
    physics_hz: int = 100
    solver_iterations: int = 10
    # Bullet's contact threshold (units): contact points are made this far apart and the solver
    # acts on them just before the touch. Bullet's 0.02 leaves bounces at most 0.012 apart;
    # 0.08 more than halves the overlap above but bounces objects up to 0.046 apart
    contact_threshold: float = 0.02
    gravity: float = 9.81
    # Coulomb friction object-floor (Bullet multiplies the two bodies' coefficients; the floor
    # has 1.0): deceleration mu * g = 0.49 units/s^2, so a 3 units/s object slides about 9
    # units over 6 s: objects slow down over seconds and some still move when the video ends
    floor_friction: float = 0.05
    # resistance to spinning about z (Bullet's length units): spin after a glancing hit dies
    # out in a second or two instead of lasting forever
    spinning_friction: float = 0.02
    # restitution between two objects (Bullet multiplies the bodies' values; each object gets
    # the square root): bouncy but lossy collisions; the floor has 0, so nothing bounces on it
    object_restitution: float = 0.7

    # --- events -------------------------------------------------------------------------------
    # a contact episode of two objects ends only once they have been more than
    # `collision_release_distance` apart (units, about 5 px) for `collision_debounce_frames`
    # frames: pushing, sliding along each other or resting against each other is one collision
    # event, not a stream of them, and a second event of a pair is a visible second hit
    collision_release_distance: float = 0.1
    collision_debounce_frames: int = 3

    # --- rejection rules (the factual run must satisfy all; else resample) ---------------------
    # collisions among the 128 shown frames: explanatory and counterfactual questions need some
    min_collisions_shown: int = 2
    # the paper discards simulations with repetitive collisions between the same pair
    max_collisions_per_pair: int = 1
    # every object is inside the view for at least this many shown frames, so questions can
    # name it and a model can see it
    min_visible_frames: int = 12
    # every collision of the 7 s happens with its location inside the view (a question about a
    # collision nobody can see has no visual answer)
    visible_collisions_only: bool = True
    # frames between the first and the last event (in, out, collision) of the shown frames:
    # events spread over the video instead of one burst
    min_event_span_frames: int = 40
    # some object inside the view moves (faster than 0.2 units/s) by this frame: the video
    # does not open on a still scene waiting for the first entering object
    max_quiet_start_frames: int = 30
    # an object whose centre stays in (or out of) the view for fewer frames than this between
    # two crossings of the border flickers in and out; such videos are resampled
    min_visibility_run: int = 3
    # objects stay upright: cubes and cylinders slide, they do not tip over (degrees)
    max_tilt_deg: float = 20.0
    # attempts per video before the best attempt so far (most rules met) is taken as it is
    max_attempts: int = 60

    def __post_init__(self) -> None:
        if self.physics_hz % 25:
            raise ValueError("physics_hz must be a multiple of the 25 fps frame rate")
        for name in ("n_objects", "n_entering", "n_moving_at_start"):
            lo, hi = getattr(self, name)
            if not 0 <= lo <= hi:
                raise ValueError(f"{name}: need 0 <= min <= max, got {(lo, hi)}")
        if self.n_objects[0] < 2 or self.n_objects[1] > 48:
            raise ValueError("n_objects must lie in 2..48 (48 distinct objects exist)")

    @property
    def substeps(self) -> int:
        """Physics steps per video frame."""
        return self.physics_hz // 25

    @property
    def sliding_deceleration(self) -> float:
        """Deceleration of an object sliding on the floor (units/s^2), mu * g."""
        return self.floor_friction * self.gravity

    @property
    def rolling_friction(self) -> float:
        """Bullet rolling friction of the objects: a sphere rolling without slipping then slows
        at mu * g like the sliding shapes (torque limit c * N, sphere inertia 2/5 m r^2)."""
        return self.floor_friction * 1.4 * self.object_radius

    def half_height(self, shape: str) -> float:
        """Height of the centre of an upright object above the floor."""
        if shape == "cube":
            return self.object_radius / math.sqrt(2.0)
        return self.object_radius
