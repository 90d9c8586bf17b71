"""CLEVRER's program executor: the whole program language as a table of small handlers with arity.

Programs are postfix token lists, as in the released question files. A value token (a colour,
material or shape, an order `first`/`second`/`last`, the frame `null`, or a frame number written
as digits) is pushed on a stack; a module pops its arguments (the deepest is the first), checks
their types and pushes its result. A finished program leaves exactly one value: the answer. A
multiple-choice program is the choice's program followed by the question's; its answer yes/no
reads as correct/wrong (`answer_choice`). `<START>` is skipped and `<END>`/`<NULL>` end a program,
as the official parser's sequences use them.

Names. `MODULES` holds the released executor's names (executor/executor.py of
github.com/chuangg/CLEVRER; the paper's Tables 4-5) and the names the
released question files use, which are aliases of the same handlers: `get_frame` = `query_frame`,
`get_object` = `query_object`, `get_col_partner` = `query_collision_partner`, `get_counterfact` =
`filter_counterfact`; and the files' `start`/`end` are input modules returning the special start
and end events (`events filter_start` and `events filter_end` give the same). `RELEASE_MODULES`
lists the modules that the released question files use (47 distinct tokens with the values).

Types are static: every module declares the kinds it accepts, so `check_program` types a program
without a video. Kinds: objects, object, events, event, frame, color, material, shape, order,
bool, int, direction. Two errors: `ProgramError` for a malformed program (unknown token, missing
argument, wrong kind, values left over, no answer at the end), found without looking at the video;
`ExecutionError` for a well-formed program this video cannot answer (`unique` of 0 or 2 things, an
order past the end or tied, a direction that is none of the four, an event of the wrong kind). Both
name the module and its position (0-based) in one line; ExecutionError is a subclass of
ProgramError, so `except ProgramError` catches both. The released executor returns the string
"error" for both; `answer_or_error` does the same for scoring a model's programs.

Answers are strings as in the released files: counts `str(int)` ("0", "3"), `exist`/`negate`
"yes"/"no", attributes as their words, a frame as its number, a direction as left/right/up/down.

Semantic decisions (and where the released executor, executor/executor.py and simulation.py of
the official repository, does otherwise):
- Events. `events` lists the factual run's in, out and collision events at frames < n_shown_frames,
  sorted by frame; `unseen_events` those at frames >= n_shown_frames (the 2 held-out seconds). The
  special start and end events are in no list (the released `events` list contains them; every
  released program filters them away before counting, ordering or matching). The released
  `unseen_events` stores an exit's object as `[[id]]` (line 101), so `filter_out` never finds an
  exit after the video there; here it is a plain event.
- Start and end. start is frame 0; end is the last shown frame of the run's motion, min(T,
  n_shown_frames) - 1 (127 when the motion reaches the video's end or beyond, 125 for a predicted
  trajectory whose last sample is frame 125; n_shown_frames - 1 without motion). The released
  executor hard-codes 125. Every listed event counts as after start; before end means frame <
  n_shown_frames and after end means frame >= n_shown_frames. `filter_start`/`filter_end` return
  the special event for any event list. The released `filter_end` returns the end event when the
  list holds it (`events filter_end` gives frame 125, since its `events` lists start and end); it
  fails (a NameError, line 411) only on a list without it, such as `unseen_events filter_end`.
- Motion. An object is moving at a frame when it is visible then and its image speed exceeds
  MOVING_SPEED = 0.32 px/frame at 480x320 (the released 0.1 on the predictor's 150x100 grid, times
  3.2). `filter_moving`/`filter_stationary` keep the objects visible at the frame that are moving /
  not moving. With frame `null`: moving = moving at some shown frame; stationary = visible at some
  shown frame and moving at none (the released executor also looks at the unseen frames for
  `null`). `filter_resting` is `filter_stationary`, as in the released executor.
- Direction (`query_direction`, object at a frame): the image velocity's angle, within
  DIRECTION_HALF_ANGLE = 40 degrees of right, up (towards the top of the frame), left or down, as
  the released executor; between two sectors, or not moving, is an ExecutionError.
- Order. `filter_order` sorts by frame; first, second or last. An event tied in frame with a
  different event next to it in that order is ambiguous: ExecutionError (the released executor
  takes the list order).
- `filter_before`/`filter_after`: frames strictly before / after the given event's frame.
- Causes (`filter_ancestor`, paper section 3): an object's first event is caused by the object;
  each later event of an object is caused by that object's latest earlier event (all of them if
  several share that frame); a collision by both objects' previous events. Ancestors are the
  transitive causes, over the whole factual run. The given event must be one of the run's events.
- `belong_to(entry, events)`: an event entry belongs when an event of the list has its kind and
  the same objects (frames are not compared, so a choice from `all_events` matches a real event);
  an object entry belongs when it takes part in an event of the list. So an object is
  "responsible" for an event only through the event's ancestors, as the released programs say.
- `all_events`: every possible collision between two objects and every possible in and out of one
  object, without frames (the released one lists collisions only; released programs always filter
  it with `filter_collision`, so their answers are the same).
- Counterfactual: `counterfact_events(obj)` is every event of the run without obj, over the same
  simulated horizon as the factual run (the 7 s the paper simulates, past the shown 5.12 s), as
  the released executor counts its what-if rollouts; so "what will happen without X" reads the
  future as predictive questions (`unseen_events`) do. `filter_counterfact(events, obj)` (the
  files' `get_counterfact`) keeps the listed events whose kind and objects occur in that run (the
  released one compares collisions only; released programs only ask about collisions).
- `filter_in`/`filter_out`/`filter_collision` accept one object or a list (events involving any).
- Object ids are 0..N-1 as in `SceneFacts.objects`; `objects` lists them all.

Readings. Four conventions change some answers without either reading being wrong: the order of
two events in one frame, the end frame (127 here, 125 hard-coded in the released executor), the
moving threshold, and the edges of the direction sectors. A `Reading` sets each one (the default
is tvr's); `CONVENTIONS` lists, per convention, the other readings a question's answer must
survive to be asked (`tvr.clevrer.questions` asks none that changes: the order of same-frame
events taken as listed and as reversed, the end at frame 125, the threshold 15% lower and higher,
every velocity turned 10 degrees either way), and `CONVENTION_MODULES` the modules each one can
affect.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from tvr.clevrer.programs.facts import Event, Run, SceneFacts
from tvr.clevrer.vocab import COLORS, MATERIALS, SHAPES
from tvr.core.errors import UserError

# image speed above which a visible object is moving: the released 0.1 per frame on the
# predictor's 150x100 grid, in pixels of the 480x320 frame (x 3.2)
MOVING_SPEED = 0.32
# half-width of each direction sector around right, up, left and down (the released value)
DIRECTION_HALF_ANGLE = 40.0
# the end frame the released executor hard-codes (executor.py line 67)
OFFICIAL_END_FRAME = 125
# how a question's answer must survive a convention: the moving threshold moved by this share
# either way, every velocity turned by this many degrees either way
MOVING_TOLERANCE = 0.15
DIRECTION_TOLERANCE_DEG = 10.0
TIES = ("together", "listed", "reversed")

ORDERS: tuple[str, ...] = ("first", "second", "last")
DIRECTIONS: tuple[str, ...] = ("right", "up", "left", "down")
KINDS: tuple[str, ...] = (
    "objects", "object", "events", "event", "frame", "color", "material", "shape", "order",
    "bool", "int", "direction",
)
# the kinds a finished open-ended program may end with
ANSWER_KINDS = frozenset({"bool", "int", "color", "material", "shape", "direction", "frame"})
VALUE_TOKENS: dict[str, str] = {
    **{c: "color" for c in COLORS},
    **{m: "material" for m in MATERIALS},
    **{s: "shape" for s in SHAPES},
    **{o: "order" for o in ORDERS},
    "null": "frame",
}
SKIP_TOKENS = frozenset({"<START>"})
STOP_TOKENS = frozenset({"<END>", "<NULL>"})

# names of the released question files -> the released executor's names
ALIASES: dict[str, str] = {
    "get_frame": "query_frame",
    "get_object": "query_object",
    "get_col_partner": "query_collision_partner",
    "get_counterfact": "filter_counterfact",
}


class ProgramError(UserError):
    """A program that cannot be answered; raised as such when it is malformed."""


class ExecutionError(ProgramError):
    """A well-formed program that this video cannot answer (e.g. `unique` of two objects)."""


@dataclass(frozen=True)
class Value:
    """One stack entry: its kind (one of KINDS) and its data."""

    kind: str
    data: Any


@dataclass(frozen=True)
class Handler:
    """One module: its function, arity, one-line doc, accepted kinds per argument and output kind.

    `output` is a kind, or a mapping from the first argument's kind to the output kind.
    `fn(ctx, *data)` gets the arguments' data and returns the output's data.
    """

    fn: Callable[..., Any]
    nargs: int
    doc: str
    inputs: tuple[frozenset[str], ...]
    output: str | Mapping[str, str]

    def output_kind(self, arg_kinds: Sequence[str]) -> str:
        """The output kind for these argument kinds."""
        if isinstance(self.output, str):
            return self.output
        return self.output[arg_kinds[0]]


class _Fail(Exception):
    """Raised by a handler; the runner turns it into an ExecutionError naming module and place."""


@dataclass(frozen=True)
class Reading:
    """How the executor reads the conventions an answer can hang on (the default: tvr's).

    Args:
        end_frame: the frame of the end event; None: the run's last shown frame (127). With a
            frame given, "before end" and "after end" compare with it (frame < / > end_frame).
        moving_speed: image speed (px/frame at 480x320) above which a visible object moves.
        direction_turn: degrees added to the angle of every image velocity (query_direction).
        ties: events in one frame: "together" (tvr: each of them is a cause of an object's
            next event, and `filter_order` on a tie is ambiguous), "listed" (one after the other
            in the listed order: in, out, collision, then object ids, as the released executor
            lists them) or "reversed" (the other way round within a frame).
    """

    end_frame: int | None = None
    moving_speed: float = MOVING_SPEED
    direction_turn: float = 0.0
    ties: str = "together"

    def __post_init__(self) -> None:
        if self.ties not in TIES:
            raise ValueError(f"Reading.ties: one of {TIES}, got {self.ties!r}")


DEFAULT_READING = Reading()

#: the other readings of each convention, which an asked question's answer must survive
CONVENTIONS: dict[str, tuple[Reading, ...]] = {
    "same_frame_order": (Reading(ties="listed"), Reading(ties="reversed")),
    "end_frame": (Reading(end_frame=OFFICIAL_END_FRAME),),
    "moving_threshold": (
        Reading(moving_speed=MOVING_SPEED * (1.0 - MOVING_TOLERANCE)),
        Reading(moving_speed=MOVING_SPEED * (1.0 + MOVING_TOLERANCE)),
    ),
    "direction": (
        Reading(direction_turn=-DIRECTION_TOLERANCE_DEG),
        Reading(direction_turn=DIRECTION_TOLERANCE_DEG),
    ),
}

#: the modules (spec names and aliases) whose results each convention can change
CONVENTION_MODULES: dict[str, frozenset[str]] = {
    "same_frame_order": frozenset({"filter_order", "filter_ancestor"}),
    "end_frame": frozenset({"filter_end", "end"}),
    "moving_threshold": frozenset({"filter_moving", "filter_stationary", "filter_resting"}),
    "direction": frozenset({"query_direction"}),
}


# ---------------------------------------------------------------- the video, as modules see it


_KIND_ORDER = {"start": 0, "in": 1, "out": 2, "collision": 3, "end": 4}


def _sort_key(e: Event) -> tuple:
    return (e.frame, _KIND_ORDER.get(e.kind, 5), tuple(sorted(e.objects)))


def _match_key(e: Event) -> tuple[str, frozenset[int]]:
    return (e.kind, frozenset(e.objects))


def _plain(events: Sequence[Event]) -> list[Event]:
    """Events with Python ints (facts may carry numpy integers), sorted by time."""
    plain = [Event(str(e.kind), int(e.frame), tuple(int(o) for o in e.objects)) for e in events]
    return sorted(plain, key=_sort_key)


class _Context:
    """What modules read about one video, computed once per SceneFacts (motion lazily)."""

    def __init__(self, facts: SceneFacts, reading: Reading = DEFAULT_READING) -> None:
        self.facts = facts
        self.reading = reading
        self.n_objects = len(facts.objects)
        self.n_shown = int(facts.n_shown_frames)
        run = facts.factual
        ordered = _plain(run.events)
        self.all_factual = tuple(ordered)
        self.events = tuple(e for e in ordered if e.frame < self.n_shown)
        self.unseen = tuple(e for e in ordered if e.frame >= self.n_shown)
        motion = run.motion
        if reading.end_frame is not None:
            self.end_frame = reading.end_frame
        elif motion is not None:
            self.end_frame = min(len(motion.visible), self.n_shown) - 1
        else:
            self.end_frame = self.n_shown - 1
        self.start_event = Event("start", 0, ())
        self.end_event = Event("end", self.end_frame, ())
        possible: list[Event] = []
        for i in range(self.n_objects):
            possible.append(Event("in", None, (i,)))  # type: ignore[arg-type]
            possible.append(Event("out", None, (i,)))  # type: ignore[arg-type]
        for i in range(self.n_objects):
            for j in range(i + 1, self.n_objects):
                possible.append(Event("collision", None, (i, j)))  # type: ignore[arg-type]
        self.all_events = tuple(possible)
        self._moving: np.ndarray | None = None
        self._visible = self._velocity = np.zeros(0)
        self._parents: dict[Event, tuple[Event, ...]] | None = None
        self._cf: dict[int, tuple[Event, ...]] = {}

    # motion
    def motion_arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(visible (T,N), moving (T,N), velocity (T,N,2)) of the factual run."""
        motion = self.facts.factual.motion
        if motion is None:
            raise _Fail("these facts have no motion, so nothing is moving or stationary")
        if self._moving is None:
            self._velocity = np.asarray(motion.velocity, dtype=float)
            self._visible = np.asarray(motion.visible, dtype=bool)
            speed = np.linalg.norm(self._velocity, axis=-1)
            self._moving = self._visible & (speed > self.reading.moving_speed)
        return self._visible, self._moving, self._velocity

    def check_frame(self, frame: int, n_frames: int) -> None:
        if not 0 <= frame < n_frames:
            raise _Fail(f"frame {frame} is outside the run's motion (frames 0..{n_frames - 1})")

    # causes
    def parents(self, event: Event) -> tuple[Event, ...]:
        if self._parents is None:
            by_object: dict[int, list[Event]] = {}
            for e in self.all_factual:
                for o in set(e.objects):
                    by_object.setdefault(o, []).append(e)
            parents: dict[Event, tuple[Event, ...]] = {}
            rank = {e: k for k, e in enumerate(self.in_time(self.all_factual))}
            for e in self.all_factual:
                found: list[Event] = []
                for o in sorted(set(e.objects)):
                    if self.reading.ties == "together":
                        earlier = [p for p in by_object[o] if p.frame < e.frame]
                        if earlier:
                            last = earlier[-1].frame
                            found.extend(p for p in earlier if p.frame == last and p not in found)
                    else:  # the object's event just before, same-frame events in a line
                        earlier = [p for p in by_object[o] if rank[p] < rank[e]]
                        if earlier:
                            latest = max(earlier, key=rank.__getitem__)
                            if latest not in found:
                                found.append(latest)
                parents[e] = tuple(found)
            self._parents = parents
        if event not in self._parents:
            raise _Fail(f"{_describe(event)} is not an event of the video")
        return self._parents[event]

    def in_time(self, events: Sequence[Event]) -> list[Event]:
        """Events in time order; within a frame as listed, or reversed (reading "reversed")."""
        ordered = sorted(events, key=_sort_key)
        if self.reading.ties != "reversed":
            return ordered
        pos = {e: k for k, e in enumerate(ordered)}
        return sorted(ordered, key=lambda e: (e.frame, -pos[e]))

    def ancestors(self, event: Event) -> set[Event]:
        seen: set[Event] = set()
        todo = list(self.parents(event))
        while todo:
            e = todo.pop()
            if e not in seen:
                seen.add(e)
                todo.extend(self.parents(e))
        return seen

    # counterfactual
    def counterfactual(self, obj: int) -> tuple[Event, ...]:
        if obj not in self._cf:
            run: Run | None = self.facts.counterfactual.get(obj)
            if run is None:
                raise _Fail(f"the facts have no counterfactual run without object {obj}")
            self._cf[obj] = tuple(_plain(run.events))
        return self._cf[obj]


def _describe(e: Event) -> str:
    objs = ", ".join(str(o) for o in e.objects)
    at = "" if e.frame is None else f" at frame {e.frame}"
    return f"the {e.kind} event of objects ({objs}){at}" if objs else f"the {e.kind} event{at}"


def _as_objects(value: Any) -> tuple[int, ...]:
    return (value,) if isinstance(value, int) else tuple(value)


def _need_frames(events: Sequence[Event], *more: Event) -> None:
    for e in (*events, *more):
        if e.frame is None:
            raise _Fail("an event from all_events has no frame, so it has no time order")


# ---------------------------------------------------------------- handlers


def _objects(ctx: _Context) -> tuple[int, ...]:
    return tuple(range(ctx.n_objects))


def _events(ctx: _Context) -> tuple[Event, ...]:
    return ctx.events


def _unseen_events(ctx: _Context) -> tuple[Event, ...]:
    return ctx.unseen


def _all_events(ctx: _Context) -> tuple[Event, ...]:
    return ctx.all_events


def _start(ctx: _Context) -> Event:
    return ctx.start_event


def _end(ctx: _Context) -> Event:
    return ctx.end_event


def _filter_attr(attr: str) -> Callable[..., tuple[int, ...]]:
    def fn(ctx: _Context, objs: tuple[int, ...], value: str) -> tuple[int, ...]:
        return tuple(o for o in objs if getattr(ctx.facts.objects[o], attr) == value)

    return fn


def _filter_moving(ctx: _Context, objs: tuple[int, ...], frame: int | None) -> tuple[int, ...]:
    visible, moving, _ = ctx.motion_arrays()
    if frame is None:
        shown = slice(0, ctx.n_shown)
        return tuple(o for o in objs if moving[shown, o].any())
    ctx.check_frame(frame, visible.shape[0])
    return tuple(o for o in objs if moving[frame, o])


def _filter_stationary(
    ctx: _Context, objs: tuple[int, ...], frame: int | None
) -> tuple[int, ...]:
    visible, moving, _ = ctx.motion_arrays()
    if frame is None:
        shown = slice(0, ctx.n_shown)
        return tuple(
            o for o in objs if visible[shown, o].any() and not moving[shown, o].any()
        )
    ctx.check_frame(frame, visible.shape[0])
    return tuple(o for o in objs if visible[frame, o] and not moving[frame, o])


def _filter_start(ctx: _Context, events: tuple[Event, ...]) -> Event:
    return ctx.start_event


def _filter_end(ctx: _Context, events: tuple[Event, ...]) -> Event:
    return ctx.end_event


def _filter_kind(kind: str) -> Callable[..., tuple[Event, ...]]:
    def fn(ctx: _Context, events: tuple[Event, ...], objs: Any) -> tuple[Event, ...]:
        wanted = set(_as_objects(objs))
        return tuple(e for e in events if e.kind == kind and wanted.intersection(e.objects))

    return fn


def _filter_order(ctx: _Context, events: tuple[Event, ...], order: str) -> Event:
    _need_frames(events)
    ordered = ctx.in_time(events)
    index = {"first": 0, "second": 1, "last": len(ordered) - 1}[order]
    if not 0 <= index < len(ordered):
        raise _Fail(f"no {order} event: the list has {len(ordered)}")
    chosen = ordered[index]
    if ctx.reading.ties == "together":
        for k in (index - 1, index + 1):
            if 0 <= k < len(ordered) and ordered[k].frame == chosen.frame:
                raise _Fail(f"the {order} event is ambiguous: two events at frame {chosen.frame}")
    return chosen


def _special_split(ctx: _Context, events: tuple[Event, ...], event: Event, before: bool):
    if event.kind == "start":
        return () if before else events
    if event.kind == "end":
        if ctx.reading.end_frame is not None:  # the end as a frame, like any event's
            return None
        return tuple(e for e in events if (e.frame < ctx.n_shown) == before)
    return None


def _filter_before(ctx: _Context, events: tuple[Event, ...], event: Event) -> tuple[Event, ...]:
    _need_frames(events, event)
    special = _special_split(ctx, events, event, before=True)
    if special is not None:
        return special
    return tuple(e for e in events if e.frame < event.frame)


def _filter_after(ctx: _Context, events: tuple[Event, ...], event: Event) -> tuple[Event, ...]:
    _need_frames(events, event)
    special = _special_split(ctx, events, event, before=False)
    if special is not None:
        return special
    return tuple(e for e in events if e.frame > event.frame)


def _filter_ancestor(ctx: _Context, events: tuple[Event, ...], event: Event) -> tuple[Event, ...]:
    causes = ctx.ancestors(event)
    return tuple(e for e in events if e in causes)


def _counterfact_events(ctx: _Context, obj: int) -> tuple[Event, ...]:
    return ctx.counterfactual(obj)


def _filter_counterfact(ctx: _Context, events: tuple[Event, ...], obj: int) -> tuple[Event, ...]:
    happen = {_match_key(e) for e in ctx.counterfactual(obj)}
    return tuple(e for e in events if _match_key(e) in happen)


def _query_attr(attr: str) -> Callable[..., str]:
    def fn(ctx: _Context, obj: int) -> str:
        return getattr(ctx.facts.objects[obj], attr)

    return fn


def _query_direction(ctx: _Context, obj: int, frame: int | None) -> str:
    if frame is None:
        raise _Fail("a direction needs a frame, not null")
    visible, moving, velocity = ctx.motion_arrays()
    ctx.check_frame(frame, visible.shape[0])
    if not visible[frame, obj]:
        raise _Fail(f"object {obj} is not visible at frame {frame}")
    if not moving[frame, obj]:
        raise _Fail(f"object {obj} is not moving at frame {frame}")
    vx, vy = (float(v) for v in velocity[frame, obj])
    # 0 right, 90 up (image y points down)
    angle = math.degrees(math.atan2(-vy, vx)) + ctx.reading.direction_turn
    for name, centre in zip(DIRECTIONS, (0.0, 90.0, 180.0, -90.0), strict=True):
        off = (angle - centre + 180.0) % 360.0 - 180.0
        if abs(off) <= DIRECTION_HALF_ANGLE:
            return name
    raise _Fail(f"object {obj} moves diagonally at frame {frame} ({angle:.0f} degrees)")


def _query_frame(ctx: _Context, event: Event) -> int:
    _need_frames((), event)
    return event.frame


def _query_object(ctx: _Context, event: Event) -> int:
    if event.kind not in ("in", "out"):
        raise _Fail(f"{_describe(event)} is not an in or out event")
    return event.objects[0]


def _query_collision_partner(ctx: _Context, event: Event, obj: int) -> int:
    if event.kind != "collision":
        raise _Fail(f"{_describe(event)} is not a collision")
    if obj not in event.objects:
        raise _Fail(f"object {obj} is not in {_describe(event)}")
    a, b = event.objects
    return b if obj == a else a


def _unique(ctx: _Context, items: tuple) -> Any:
    if len(items) != 1:
        raise _Fail(f"expects exactly one, got {len(items)}")
    return items[0]


def _count(ctx: _Context, items: tuple) -> int:
    return len(items)


def _exist(ctx: _Context, items: tuple) -> str:
    return "yes" if items else "no"


def _negate(ctx: _Context, answer: str) -> str:
    return "no" if answer == "yes" else "yes"


def _belong_to(ctx: _Context, entry: Any, events: tuple[Event, ...]) -> str:
    if isinstance(entry, Event):
        key = _match_key(entry)
        return "yes" if any(_match_key(e) == key for e in events) else "no"
    return "yes" if any(entry in e.objects for e in events) else "no"


def _k(*names: str) -> frozenset[str]:
    return frozenset(names)


_OBJ = _k("objects")
_EVS = _k("events")
_EV = _k("event")
_ONE = _k("object")
_FRAME = _k("frame")
_SOME_OBJ = _k("objects", "object")
_LIST = _k("objects", "events")
_UNIQUE_OUT = {"objects": "object", "events": "event"}

_CANONICAL: dict[str, Handler] = {
    # inputs
    "objects": Handler(_objects, 0, "All objects of the video.", (), "objects"),
    "events": Handler(_events, 0, "The video's events (frames < n_shown_frames).", (), "events"),
    "unseen_events": Handler(
        _unseen_events, 0, "The factual events after the video (frames >= n_shown_frames).", (),
        "events"),
    "all_events": Handler(
        _all_events, 0, "Every possible in, out and collision event, without frames.", (),
        "events"),
    "start": Handler(_start, 0, "The special start event (frame 0).", (), "event"),
    "end": Handler(_end, 0, "The special end event (the last shown frame).", (), "event"),
    # object filters
    "filter_color": Handler(
        _filter_attr("color"), 2, "The objects of the given colour.", (_OBJ, _k("color")),
        "objects"),
    "filter_material": Handler(
        _filter_attr("material"), 2, "The objects of the given material.",
        (_OBJ, _k("material")), "objects"),
    "filter_shape": Handler(
        _filter_attr("shape"), 2, "The objects of the given shape.", (_OBJ, _k("shape")),
        "objects"),
    # motion filters
    "filter_moving": Handler(
        _filter_moving, 2, "The objects moving at the frame (null: at some shown frame).",
        (_OBJ, _FRAME), "objects"),
    "filter_stationary": Handler(
        _filter_stationary, 2,
        "The visible objects not moving at the frame (null: at no shown frame).",
        (_OBJ, _FRAME), "objects"),
    "filter_resting": Handler(
        _filter_stationary, 2, "Same as filter_stationary (as in the released executor).",
        (_OBJ, _FRAME), "objects"),
    # event filters
    "filter_start": Handler(_filter_start, 1, "The special start event.", (_EVS,), "event"),
    "filter_end": Handler(_filter_end, 1, "The special end event.", (_EVS,), "event"),
    "filter_in": Handler(
        _filter_kind("in"), 2, "The events where any of the objects enters the view.",
        (_EVS, _SOME_OBJ), "events"),
    "filter_out": Handler(
        _filter_kind("out"), 2, "The events where any of the objects exits the view.",
        (_EVS, _SOME_OBJ), "events"),
    "filter_collision": Handler(
        _filter_kind("collision"), 2, "The collisions involving any of the objects.",
        (_EVS, _SOME_OBJ), "events"),
    "filter_order": Handler(
        _filter_order, 2, "The first, second or last event in time.", (_EVS, _k("order")),
        "event"),
    "filter_before": Handler(
        _filter_before, 2, "The events strictly before the event.", (_EVS, _EV), "events"),
    "filter_after": Handler(
        _filter_after, 2, "The events strictly after the event.", (_EVS, _EV), "events"),
    "filter_ancestor": Handler(
        _filter_ancestor, 2, "The events that are causal ancestors of the event.", (_EVS, _EV),
        "events"),
    # counterfactual
    "counterfact_events": Handler(
        _counterfact_events, 1, "The events of the run without the object (its whole run).",
        (_ONE,), "events"),
    "filter_counterfact": Handler(
        _filter_counterfact, 2, "The listed events that happen in the run without the object.",
        (_EVS, _ONE), "events"),
    # queries
    "query_color": Handler(_query_attr("color"), 1, "The object's colour.", (_ONE,), "color"),
    "query_material": Handler(
        _query_attr("material"), 1, "The object's material.", (_ONE,), "material"),
    "query_shape": Handler(_query_attr("shape"), 1, "The object's shape.", (_ONE,), "shape"),
    "query_direction": Handler(
        _query_direction, 2, "Where the object moves in the image at the frame.",
        (_ONE, _FRAME), "direction"),
    "query_frame": Handler(_query_frame, 1, "The event's frame.", (_EV,), "frame"),
    "query_object": Handler(
        _query_object, 1, "The object of an in or out event.", (_EV,), "object"),
    "query_collision_partner": Handler(
        _query_collision_partner, 2, "The other object of a collision.", (_EV, _ONE), "object"),
    # logic
    "unique": Handler(_unique, 1, "The only object or event of a list.", (_LIST,), _UNIQUE_OUT),
    "count": Handler(_count, 1, "How many objects or events.", (_LIST,), "int"),
    "exist": Handler(_exist, 1, "yes if the list is not empty.", (_LIST,), "bool"),
    "negate": Handler(_negate, 1, "yes <-> no.", (_k("bool"),), "bool"),
    "belong_to": Handler(
        _belong_to, 2, "yes if the event (kind and objects) or object is in the events.",
        (_k("event", "object"), _EVS), "bool"),
}

# the handler table: the released executor's names and the released question files' aliases
MODULES: dict[str, Handler] = {
    **_CANONICAL,
    **{alias: _CANONICAL[name] for alias, name in ALIASES.items()},
}

# the module names that the released question files use
RELEASE_MODULES: frozenset[str] = frozenset({
    "objects", "events", "unseen_events", "all_events", "start", "end",
    "filter_color", "filter_material", "filter_shape", "filter_moving", "filter_stationary",
    "filter_in", "filter_out", "filter_collision", "filter_order", "filter_before",
    "filter_after", "filter_ancestor", "get_frame", "get_object", "get_col_partner",
    "get_counterfact", "query_color", "query_material", "query_shape",
    "unique", "count", "exist", "negate", "belong_to",
})


# ---------------------------------------------------------------- the runner


def canonical(name: str) -> str:
    """The released executor's name of a module (`get_frame` -> `query_frame`); other names
    unchanged."""
    return ALIASES.get(name, name)


def program_modules(program: Sequence[str]) -> list[str]:
    """The module tokens of a program, in order (value tokens left out), as written."""
    return [t for t in program if t in MODULES]


def _value_token(token: str) -> Value | None:
    kind = VALUE_TOKENS.get(token)
    if kind is not None:
        return Value(kind, None if token == "null" else token)
    if token.isdigit() and token.isascii():
        return Value("frame", int(token))
    return None


@dataclass(frozen=True)
class _Plan:
    """A typed program, ready to run on any video: `steps` are (handler fn, nargs, where) for a
    module ("where": its name and position, for errors) or (None, 0, data) for a value token;
    `kind` is the result's kind."""

    steps: tuple[tuple[Callable[..., Any] | None, int, Any], ...]
    kind: str

    def execute(self, ctx: _Context) -> Value:
        stack: list[Any] = []
        push = stack.append
        for fn, nargs, item in self.steps:
            if fn is None:
                push(item)
                continue
            if nargs:
                args = stack[-nargs:]
                del stack[-nargs:]
            else:
                args = []
            try:
                push(fn(ctx, *args))
            except _Fail as err:
                raise ExecutionError(f"{item}: {err}") from None
        return Value(self.kind, stack[0])


def _compile(program: Sequence[str]) -> _Plan:
    """Type a program without a video into its plan; ProgramError if it is malformed."""
    if isinstance(program, str) or not isinstance(program, Sequence):
        raise ProgramError(f"a program is a list of tokens, not {type(program).__name__}")
    stack: list[str] = []  # the kinds
    steps: list[tuple[Callable[..., Any] | None, int, Any]] = []
    for pos, token in enumerate(program):
        if not isinstance(token, str):
            raise ProgramError(f"position {pos}: token {token!r} is not a string")
        if token in SKIP_TOKENS:
            continue
        if token in STOP_TOKENS:
            break
        handler = MODULES.get(token)
        if handler is None:
            value = _value_token(token)
            if value is None:
                raise ProgramError(f"position {pos}: unknown token {token!r}")
            stack.append(value.kind)
            steps.append((None, 0, value.data))
            continue
        where = f"{token} at position {pos}"
        if len(stack) < handler.nargs:
            raise ProgramError(
                f"{where}: needs {handler.nargs} argument(s), the stack has {len(stack)}")
        args = stack[len(stack) - handler.nargs:]
        del stack[len(stack) - handler.nargs:]
        for i, (arg, accepted) in enumerate(zip(args, handler.inputs, strict=True)):
            if arg not in accepted:
                want = " or ".join(sorted(accepted))
                raise ProgramError(f"{where}: argument {i + 1} must be {want}, got {arg}")
        stack.append(handler.output_kind(args))
        steps.append((handler.fn, handler.nargs, where))
    if len(stack) != 1:
        raise ProgramError(f"the program leaves {len(stack)} values, expected exactly one")
    return _Plan(tuple(steps), stack[0])


_plans: dict[tuple[str, ...], _Plan] = {}  # programs already typed (bounded below)


def _plan(program: Sequence[str]) -> _Plan:
    """The program's plan, typed once per distinct program; ProgramError if malformed."""
    if not isinstance(program, list | tuple):
        return _compile(program)
    key = tuple(program)
    try:
        plan = _plans.get(key)
    except TypeError:  # an unhashable token: typing names it
        return _compile(program)
    if plan is None:
        plan = _compile(program)  # only programs of string tokens get here without an error
        if len(_plans) > 100_000:
            _plans.clear()
        _plans[key] = plan
    return plan


def check_program(program: Sequence[str]) -> str:
    """The kind of a program's result, found without a video; ProgramError if malformed."""
    return _plan(program).kind


def _answer(value: Value) -> str:
    if value.kind not in ANSWER_KINDS or value.data is None:
        raise ProgramError(f"the program ends with {value.kind}, not an answer")
    return str(value.data)


class Executor:
    """Runs programs on one video's SceneFacts, computing what modules read once; `reading` sets
    the conventions (`Reading`; the default is tvr's)."""

    def __init__(self, facts: SceneFacts, reading: Reading = DEFAULT_READING) -> None:
        self.facts = facts
        self.reading = reading
        self._ctx = _Context(facts, reading)

    def run(self, program: Sequence[str]) -> Value:
        """The program's final value (any kind); ProgramError or ExecutionError.

        The program is typed first, so a malformed program is a ProgramError on every video.
        """
        return _plan(program).execute(self._ctx)

    def execute(self, program: Sequence[str]) -> str:
        """The answer of an open-ended program as the release writes it ("2", "yes", "red")."""
        return _answer(self.run(program))

    def answer_choice(
        self, choice_program: Sequence[str], question_program: Sequence[str]
    ) -> str:
        """"correct" or "wrong": the choice's program followed by the question's, yes/no."""
        value = self.run([*choice_program, *question_program])
        if value.kind != "bool":
            raise ProgramError(f"a choice and its question must end with yes/no, not {value.kind}")
        return "correct" if value.data == "yes" else "wrong"


_last: list[Executor] = []  # the executor of the latest facts (holds them, so `is` is safe)


def executor_for(facts: SceneFacts) -> Executor:
    """An Executor for these facts, reused while the same facts object comes back."""
    if not _last or _last[0].facts is not facts:
        _last[:] = [Executor(facts)]
    return _last[0]


def execute(program: Sequence[str], facts: SceneFacts) -> str:
    """The answer of an open-ended program on a video, as a string like the release's."""
    return executor_for(facts).execute(program)


def answer_choice(
    choice_program: Sequence[str], question_program: Sequence[str], facts: SceneFacts
) -> str:
    """"correct" or "wrong" for one multiple-choice option (choice program + question program)."""
    return executor_for(facts).answer_choice(choice_program, question_program)


def answer_or_error(
    program: Sequence[str], facts: SceneFacts, choice_program: Sequence[str] | None = None
) -> str:
    """Like execute (or answer_choice when a choice is given), but "error" instead of raising.

    For scoring a model's programs or predicted dynamics, as the released executor answers.
    """
    try:
        if choice_program is None:
            return execute(program, facts)
        return answer_choice(choice_program, program, facts)
    except ProgramError:
        return "error"
