"""Question builders: one small function per question family, each giving (text, program).

A builder draws its parameters (objects, events, moments) from one video's facts and returns a
`Candidate` (text, postfix program, and the programs that must agree with it for the question to
be unambiguous), or None when the video offers nothing to ask. Builders never compute answers:
`Runner` executes the programs with the program executor, and a question whose program fails or
whose variants disagree is dropped by the generator.

Object references name an object by a subset of (colour, material, shape) that no other object
of the video shares ("the gray cylinder", "the metal object"), with the filters in that order and
`unique` last, as in the paper's figures 9-11; an object never visible in the shown frames is
never named. Set phrases ("metal objects", "spheres") filter
without `unique`. Moments are the start or end of the video or a unique enter / exit / collision
event; a motion filter at a moment is asked only if its answer is the same `FRAME_SHIFT` frames
on the side(s) where the moment is well defined (after an entrance, before an exit, before the
end, after the start, both sides of a collision). Before / after questions are dropped when any
other shown event lies within `TIE_FRAMES` of the reference event, and order questions
(first / second / last) when the ordered event has a neighbour that close.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from tvr.clevrer.programs.executor import (
    CONVENTION_MODULES,
    CONVENTIONS,
    ExecutionError,
    Executor,
    Reading,
)
from tvr.clevrer.programs.facts import Event, SceneFacts
from tvr.clevrer.questions import templates as T
from tvr.clevrer.vocab import COLORS, MATERIALS, SHAPES

ATTRS: tuple[str, ...] = ("color", "material", "shape")
VALUES: dict[str, tuple[str, ...]] = {"color": COLORS, "material": MATERIALS, "shape": SHAPES}
ORDERS: tuple[str, ...] = ("first", "second", "last")

# frames a moment is moved by to test that a motion answer does not hinge on the exact frame
FRAME_SHIFT = 3
# events this close (frames) to a reference event make before / after / order ambiguous
TIE_FRAMES = 1
#: how often a builder that asks about entering or exiting proposes an exit; more than the
#: template share (`balance.EXIT_SHARE`) because a video can ask about fewer exits than entries,
#: so the balancer finds an exit to pick when its catch-up wants one
POOL_EXIT_SHARE = 0.5

Program = tuple[str, ...]


@dataclass(frozen=True)
class Candidate:
    """One question a builder proposes: its family, text, program and robustness variants."""

    family: str
    text: str
    program: Program
    variants: tuple[Program, ...] = ()


@dataclass(frozen=True)
class Choice:
    """One option of a multiple-choice question: its kind, text and program."""

    kind: str
    text: str
    program: Program
    key: tuple = ()


class Runner:
    """Executes programs on one video's facts, caching answers; None where the video cannot answer.

    A malformed program (`ProgramError`) is a builder bug and is raised, never dropped.
    `robust` and `robust_choice` give an answer only if it survives every convention the program
    can hang on (`tvr.clevrer.programs.executor.CONVENTIONS`: the order of same-frame events,
    the end frame 125 or 127, the moving threshold +-15%, direction sectors +-10 degrees), and
    count in `drops` the programs each convention turned away.
    """

    def __init__(self, facts: SceneFacts, drops: Counter | None = None) -> None:
        self.facts = facts
        self._executor = Executor(facts)
        self._answers: dict[Program, str | None] = {}
        self._choices: dict[tuple[Program, Program], str | None] = {}
        self._robust: dict[tuple[Program, ...], str | None] = {}
        self._readings: dict[Reading, Executor] = {}
        self.drops = drops if drops is not None else Counter()
        self.executions = 0

    def _reading_answer(self, reading: Reading, program: Program,
                        choice: Program | None) -> str | None:
        executor = self._readings.get(reading)
        if executor is None:
            executor = self._readings[reading] = Executor(self.facts, reading)
        self.executions += 1
        try:
            if choice is None:
                return executor.execute(program)
            return executor.answer_choice(choice, program)
        except ExecutionError:
            return None

    def _survives(self, answer: str | None, program: Program, choice: Program | None) -> bool:
        if answer is None:
            return False
        modules = {*program, *(choice or ())}
        ok = True
        for rule, readings in CONVENTIONS.items():
            if not modules & CONVENTION_MODULES[rule]:
                continue
            if any(self._reading_answer(r, program, choice) != answer for r in readings):
                self.drops[rule] += 1
                ok = False
        return ok

    def robust(self, program: Sequence[str]) -> str | None:
        """The program's answer if no convention changes it, else None."""
        key = (tuple(program),)
        if key not in self._robust:
            answer = self.answer(program)
            self._robust[key] = answer if self._survives(answer, key[0], None) else None
        return self._robust[key]

    def robust_choice(self, choice: Sequence[str], question: Sequence[str]) -> str | None:
        """"correct" / "wrong" for a choice if no convention changes it, else None."""
        key = (tuple(question), tuple(choice))
        if key not in self._robust:
            answer = self.choice(choice, question)
            self._robust[key] = answer if self._survives(answer, key[0], key[1]) else None
        return self._robust[key]

    def answer(self, program: Sequence[str]) -> str | None:
        """The program's answer as a string, or None if this video cannot answer it."""
        key = tuple(program)
        if key not in self._answers:
            self.executions += 1
            try:
                self._answers[key] = self._executor.execute(key)
            except ExecutionError:
                self._answers[key] = None
        return self._answers[key]

    def choice(self, choice: Sequence[str], question: Sequence[str]) -> str | None:
        """"correct" / "wrong" for a choice of a multiple-choice question, or None."""
        key = (tuple(choice), tuple(question))
        if key not in self._choices:
            self.executions += 1
            try:
                self._choices[key] = self._executor.answer_choice(key[0], key[1])
            except ExecutionError:
                self._choices[key] = None
        return self._choices[key]


def frame_token(frame: int) -> str:
    """A literal frame number as a program token."""
    return str(int(frame))


def noun(attrs: dict[str, str]) -> str:
    """The singular noun phrase of an attribute set: "gray metal cube", "metal object"."""
    words = [attrs[a] for a in ("color", "material") if a in attrs]
    words.append(attrs.get("shape", "object"))
    return " ".join(words)


def plural(attrs: dict[str, str]) -> str:
    """The plural noun phrase of an attribute set: "gray cubes", "metal objects", "objects"."""
    words = [attrs[a] for a in ("color", "material") if a in attrs]
    words.append(T.PLURAL_SHAPES[attrs["shape"]] if "shape" in attrs else "objects")
    return " ".join(words)


def filter_program(attrs: dict[str, str]) -> list[str]:
    """`objects` filtered by the attributes, colour, material, shape in that order."""
    tokens = ["objects"]
    for a in ATTRS:
        if a in attrs:
            tokens += [attrs[a], f"filter_{a}"]
    return tokens


@dataclass(frozen=True)
class Ref:
    """A phrase and the program that pushes what it names (object, objects, event or frame)."""

    text: str
    program: list[str]
    frame: int | None = None
    objects: tuple[int, ...] = ()
    kind: str = ""


@dataclass
class VideoView:
    """One video's facts arranged for the builders: references, unique events, moments."""

    facts: SceneFacts
    runner: Runner
    props: list[dict[str, str]] = field(init=False)
    descriptions: list[list[tuple[str, ...]]] = field(init=False)
    shown: list[Event] = field(init=False)
    ins: dict[int, list[Event]] = field(init=False)
    outs: dict[int, list[Event]] = field(init=False)
    pairs: dict[tuple[int, int], list[Event]] = field(init=False)
    seen: frozenset[int] = field(init=False)
    first_seen: dict[int, int] = field(init=False)

    def __post_init__(self) -> None:
        f = self.facts
        motion = f.factual.motion
        if motion is None:
            self.first_seen = {i: 0 for i in range(len(f.objects))}
        else:
            shown = np.asarray(motion.visible[: f.n_shown_frames], dtype=bool)
            self.first_seen = {
                int(i): int(np.argmax(shown[:, i])) for i in np.flatnonzero(shown.any(axis=0))
            }
        self.seen = frozenset(self.first_seen)
        self.props = [{"color": o.color, "material": o.material, "shape": o.shape} for o in f.objects]
        subsets = [
            tuple(a for a, bit in zip(ATTRS, (m & 1, m & 2, m & 4), strict=True) if bit)
            for m in range(1, 8)
        ]
        self.descriptions = []
        for i, p in enumerate(self.props):
            unique = [
                s
                for s in subsets
                if not any(
                    j != i and all(q[a] == p[a] for a in s) for j, q in enumerate(self.props)
                )
            ]
            self.descriptions.append(unique)
        self.shown = sorted(
            (e for e in f.factual.events if e.frame < f.n_shown_frames), key=lambda e: e.frame
        )
        self.ins, self.outs, self.pairs = {}, {}, {}
        for e in self.shown:
            if e.kind == "in":
                self.ins.setdefault(e.objects[0], []).append(e)
            elif e.kind == "out":
                self.outs.setdefault(e.objects[0], []).append(e)
            elif e.kind == "collision":
                self.pairs.setdefault(pair(*e.objects), []).append(e)

    @property
    def n(self) -> int:
        return len(self.props)

    # ---- objects -------------------------------------------------------------------------
    def obj(self, i: int, rng: np.random.Generator, full: bool = False) -> Ref | None:
        """A unique reference to object i: a minimal description most often, sometimes longer.

        None for an object never visible in the shown frames (the viewer cannot know it).
        """
        options = self.descriptions[i]
        if not options or i not in self.seen:
            return None
        if full:
            chosen: tuple[str, ...] = ATTRS
        else:
            smallest = min(len(s) for s in options)
            pool = [s for s in options if len(s) == smallest] if rng.random() < 0.7 else options
            chosen = pool[int(rng.integers(len(pool)))]
        attrs = {a: self.props[i][a] for a in chosen}
        return Ref(noun(attrs), [*filter_program(attrs), "unique"], objects=(i,), kind="object")

    def objset(self, rng: np.random.Generator, exclude: Sequence[str] = ()) -> tuple[dict, Ref]:
        """A set phrase (plural) with 0-2 attributes, values mostly from the video's objects."""
        free = [a for a in ATTRS if a not in exclude]
        size = min(draw(rng, (0.3, 0.5, 0.2)), len(free))
        names = [free[k] for k in sorted(rng.permutation(len(free))[:size])]
        if self.n and rng.random() < 0.8:
            src = self.props[int(rng.integers(self.n))]
            attrs = {a: src[a] for a in names}
        else:
            attrs = {a: VALUES[a][int(rng.integers(len(VALUES[a])))] for a in names}
        return attrs, Ref(plural(attrs), filter_program(attrs), kind="objects")

    # ---- events and moments --------------------------------------------------------------
    def event(self, rng: np.random.Generator, kinds: Sequence[str] = ("in", "out", "collision"),
              table: dict[str, tuple[str, ...]] = T.EVENT) -> Ref | None:
        """A unique shown event: its clause and the program that pushes it."""
        options: list[tuple[str, tuple[int, ...]]] = []
        if "in" in kinds:
            options += [("in", (o,)) for o, evs in self.ins.items() if len(evs) == 1]
        if "out" in kinds:
            options += [("out", (o,)) for o, evs in self.outs.items() if len(evs) == 1]
        if "collision" in kinds:
            options += [("collision", p) for p, evs in self.pairs.items() if len(evs) == 1]
        if not options:
            return None
        kind, objs = options[int(rng.integers(len(options)))]
        return self.event_ref(kind, objs, rng, table)

    def event_ref(self, kind: str, objs: tuple[int, ...], rng: np.random.Generator,
                  table: dict[str, tuple[str, ...]] = T.EVENT) -> Ref | None:
        """The clause and program of the (unique) shown event of `kind` on `objs`."""
        refs = [self.obj(o, rng) for o in objs]
        if any(r is None for r in refs):
            return None
        if kind == "collision":
            a, b = (refs[0], refs[1]) if rng.random() < 0.5 else (refs[1], refs[0])
            text = pick(rng, table["collision"]).format(obj=a.text, obj2=b.text)
            program = ["events", *a.program, "filter_collision", *b.program, "filter_collision"]
            frame = self.pairs[pair(*objs)][0].frame
        else:
            a = refs[0]
            text = pick(rng, table[kind]).format(obj=a.text)
            program = ["events", *a.program, f"filter_{kind}"]
            frame = (self.ins if kind == "in" else self.outs)[objs[0]][0].frame
        return Ref(text, [*program, "unique"], frame=frame, objects=objs, kind=kind)

    def moment(self, rng: np.random.Generator) -> Ref | None:
        """A moment ("the video ends", "the cube enters the scene") and its frame program."""
        kind = ("start", "end", "end", "event")[int(rng.integers(4))]
        if kind in ("start", "end"):
            program = ["events", f"filter_{kind}", "query_frame"]
            frame = self.runner.answer(program)
            if frame is None:
                return None
            return Ref(T.WHEN[kind][0], program, frame=int(frame), kind=kind)
        ev = self.event(rng, table=T.WHEN)
        if ev is None:
            return None
        return Ref(ev.text, [*ev.program, "query_frame"], frame=ev.frame, objects=ev.objects,
                   kind=ev.kind)

    def shifted(self, moment: Ref) -> list[list[str]]:
        """Literal frames near the moment on the side(s) where it is well defined."""
        assert moment.frame is not None
        last = self.facts.n_shown_frames - 1
        sides = {"start": (1,), "in": (1,), "end": (-1,), "out": (-1,), "collision": (-1, 1)}
        out = []
        for s in sides[moment.kind]:
            f = min(max(moment.frame + s * FRAME_SHIFT, 0), last)
            if f != moment.frame:
                out.append([frame_token(f)])
        return out

    def crowded(self, frame: int, exclude: Event | None = None) -> bool:
        """Whether another shown event lies within TIE_FRAMES of the frame."""
        return any(
            abs(e.frame - frame) <= TIE_FRAMES and e is not exclude
            for e in self.shown
        )

    def matching(self, attrs: dict[str, str]) -> list[int]:
        """Objects with all the attributes."""
        return [i for i, p in enumerate(self.props) if all(p[a] == v for a, v in attrs.items())]


def pair(a: int, b: int) -> tuple[int, int]:
    """An unordered object pair as a sorted tuple."""
    return (a, b) if a < b else (b, a)


def draw(rng: np.random.Generator, weights: Sequence[float]) -> int:
    """An index drawn with probability proportional to its weight (one uniform draw)."""
    total = float(sum(weights))
    r = rng.random() * total
    acc = 0.0
    for k, w in enumerate(weights):
        acc += w
        if r < acc and w > 0:
            return k
    return max(k for k, w in enumerate(weights) if w > 0)


def pick(rng: np.random.Generator, texts: Sequence[str]) -> str:
    """One paraphrase at random."""
    return texts[int(rng.integers(len(texts)))] if len(texts) > 1 else texts[0]


def _ref_event(view: VideoView, ref: Ref) -> Event | None:
    """The shown event a unique event reference names (for tie checks)."""
    if ref.kind == "collision":
        return view.pairs[pair(*ref.objects)][0]
    if ref.kind in ("in", "out"):
        return (view.ins if ref.kind == "in" else view.outs)[ref.objects[0]][0]
    return None


def _with_moment(program_head: list[str], moment: Ref, tail: list[str],
                 view: VideoView) -> tuple[Program, tuple[Program, ...]]:
    """A program with the moment's frame program and its shifted-frame variants."""
    main = (*program_head, *moment.program, *tail)
    variants = tuple((*program_head, *s, *tail) for s in view.shifted(moment))
    return main, variants


def _kinds(attrs: dict[str, str]) -> str:
    """Which attributes a set phrase names ("objects": any; "material"; "color+shape"): a
    material covers half the objects, a colour an eighth, so the answer follows the kind."""
    return "+".join(a for a in ATTRS if a in attrs) or "any"


def _shared(attrs: dict[str, str], ref: Ref) -> str:
    """"/shared" when a set phrase names an attribute that the event or moment it is asked at
    also names ("cylinders ... when the cylinder enters"): the words then tell more about the
    answer, so such questions are balanced as a family of their own."""
    named = set(ref.text.split())
    return "/shared" if any(v in named for v in attrs.values()) else ""


# ---- descriptive: count ------------------------------------------------------------------
def count_collisions(view: VideoView, rng: np.random.Generator) -> Candidate | None:
    return Candidate("count/collisions", T.COUNT["collisions"][0],
                     ("events", "objects", "filter_collision", "count"))


def _before_after(view: VideoView, rng: np.random.Generator) -> Ref | None:
    """A unique shown event with no other event within TIE_FRAMES (a clear before / after)."""
    ev = view.event(rng)
    if ev is None or view.crowded(ev.frame, _ref_event(view, ev)):
        return None
    return ev


def count_collisions_time(view: VideoView, rng: np.random.Generator) -> Candidate | None:
    which = "after" if rng.random() < 0.5 else "before"
    ev = _before_after(view, rng)
    if ev is None:
        return None
    text = T.COUNT[f"collisions_{which}"][0].format(event=ev.text)
    program = ("events", *ev.program, f"filter_{which}", "objects", "filter_collision", "count")
    return Candidate(f"count/collisions_{which}/{ev.kind}", text, program)


def count_collisions_of(view: VideoView, rng: np.random.Generator) -> Candidate | None:
    ref = view.obj(int(rng.integers(view.n)), rng) if view.n else None
    if ref is None:
        return None
    text = T.COUNT["collisions_of"][0].format(obj=ref.text)
    return Candidate("count/collisions_of", text,
                     ("events", *ref.program, "filter_collision", "count"))


def count_in_out(view: VideoView, rng: np.random.Generator) -> Candidate | None:
    kind = "out" if rng.random() < POOL_EXIT_SHARE else "in"
    family = "enter" if kind == "in" else "exit"
    attrs, objs = view.objset(rng)
    text = T.COUNT[family][0].format(objs=objs.text)
    return Candidate(f"count/{family}/{_kinds(attrs)}", text,
                     ("events", *objs.program, f"filter_{kind}", "count"))


def _motion(view: VideoView, rng: np.random.Generator, table: dict[str, tuple[str, ...]],
            subtype: str, tail: str) -> Candidate | None:
    state = "moving" if rng.random() < 0.5 else "stationary"
    moment = view.moment(rng)
    if moment is None:
        return None
    attrs, objs = view.objset(rng)
    text = pick(rng, table[state]).format(objs=objs.text, when=moment.text)
    program, variants = _with_moment(objs.program, moment, [f"filter_{state}", tail], view)
    family = f"{subtype}/{state}/{moment.kind}/{_kinds(attrs)}{_shared(attrs, moment)}"
    return Candidate(family, text, program, variants)


def count_motion(view: VideoView, rng: np.random.Generator) -> Candidate | None:
    return _motion(view, rng, T.COUNT, "count", "count")


# ---- descriptive: exist ------------------------------------------------------------------
def exist_motion(view: VideoView, rng: np.random.Generator) -> Candidate | None:
    return _motion(view, rng, T.EXIST, "exist", "exist")


def exist_collisions_time(view: VideoView, rng: np.random.Generator) -> Candidate | None:
    which = "after" if rng.random() < 0.5 else "before"
    ev = _before_after(view, rng)
    if ev is None:
        return None
    text = T.EXIST[f"collisions_{which}"][0].format(event=ev.text)
    program = ("events", *ev.program, f"filter_{which}", "objects", "filter_collision", "exist")
    return Candidate(f"exist/collisions_{which}/{ev.kind}", text, program)


def exist_in_out_time(view: VideoView, rng: np.random.Generator) -> Candidate | None:
    which = "after" if rng.random() < 0.5 else "before"
    kind = "out" if rng.random() < POOL_EXIT_SHARE else "in"
    family = f"{'enter' if kind == 'in' else 'exit'}_{which}"
    ev = _before_after(view, rng)
    if ev is None:
        return None
    attrs, objs = view.objset(rng)
    text = T.EXIST[family][0].format(objs=objs.text, event=ev.text)
    program = ("events", *ev.program, f"filter_{which}", *objs.program, f"filter_{kind}", "exist")
    return Candidate(f"exist/{family}/{ev.kind}/{_kinds(attrs)}{_shared(attrs, ev)}", text, program)


def exist_collide_pair(view: VideoView, rng: np.random.Generator) -> Candidate | None:
    if view.n < 2:
        return None
    if view.pairs and rng.random() < 0.5:
        keys = sorted(view.pairs)
        a, b = keys[int(rng.integers(len(keys)))]
    else:
        a, b = (int(x) for x in rng.permutation(view.n)[:2])
    ra, rb = view.obj(a, rng), view.obj(b, rng)
    if ra is None or rb is None:
        return None
    if rng.random() < 0.5:
        ra, rb = rb, ra
    text = pick(rng, T.EXIST["collide_pair"]).format(obj=ra.text, obj2=rb.text)
    program = ("events", *ra.program, "filter_collision", *rb.program, "filter_collision", "exist")
    return Candidate("exist/collide_pair", text, program)


# ---- descriptive: query ------------------------------------------------------------------
def _query(view: VideoView, rng: np.random.Generator, attr: str, desc: str,
           program: Sequence[str], variants: Sequence[Program], family: str) -> Candidate:
    text = pick(rng, T.QUERY[attr]).format(desc=desc)
    tail = (f"query_{attr}",)
    return Candidate(f"query_{attr}/{family}", text, (*program, *tail),
                     tuple((*v, *tail) for v in variants))


def _order_ok(view: VideoView, events: list[Event], order: str) -> bool:
    """Whether the event at `order` in the (sorted) list has no neighbour within TIE_FRAMES."""
    if not events:
        return False
    idx = {"first": 0, "second": 1, "last": len(events) - 1}[order]
    if idx >= len(events):
        return False
    frame = events[idx].frame
    return all(abs(e.frame - frame) > TIE_FRAMES for k, e in enumerate(events) if k != idx)


def query_in_out(view: VideoView, rng: np.random.Generator, attr: str) -> Candidate | None:
    kind = "out" if rng.random() < POOL_EXIT_SHARE else "in"
    word = "enter" if kind == "in" else "exit"
    attrs, _ = view.objset(rng, exclude=(attr,))
    objd = noun(attrs)
    head = ["events", *filter_program(attrs), f"filter_{kind}"]
    if rng.random() < 0.5:
        desc = T.DESCRIPTION[word][0].format(objd=objd)
        return _query(view, rng, attr, desc, [*head, "unique", "query_object"], (), word)
    order = ORDERS[int(rng.integers(3))]
    members = set(view.matching(attrs))
    table = view.ins if kind == "in" else view.outs
    events = sorted((e for o, evs in table.items() if o in members for e in evs),
                    key=lambda e: e.frame)
    if len(events) < 2 or not _order_ok(view, events, order):
        return None
    desc = T.DESCRIPTION[f"{word}_order"][0].format(order=order, objd=objd)
    return _query(view, rng, attr, desc, [*head, order, "filter_order", "query_object"], (),
                  f"{word}_order/{order}")


def query_collide(view: VideoView, rng: np.random.Generator, attr: str) -> Candidate | None:
    touched = sorted({o for p in view.pairs for o in p})
    if not touched:
        return None
    i = touched[int(rng.integers(len(touched)))]
    ref = view.obj(i, rng)
    if ref is None:
        return None
    head = ["events", *ref.program, "filter_collision"]
    if rng.random() < 0.5:
        desc = pick(rng, T.DESCRIPTION["collide"]).format(obj=ref.text)
        program = [*head, "unique", *ref.program, "query_collision_partner"]
        return _query(view, rng, attr, desc, program, (), "collide")
    order = ORDERS[int(rng.integers(3))]
    events = sorted((e for p, evs in view.pairs.items() if i in p for e in evs),
                    key=lambda e: e.frame)
    if len(events) < 2 or not _order_ok(view, events, order):
        return None
    desc = T.DESCRIPTION["collide_order"][0].format(order=order, obj=ref.text)
    program = [*head, order, "filter_order", *ref.program, "query_collision_partner"]
    return _query(view, rng, attr, desc, program, (), f"collide_order/{order}")


def query_motion(view: VideoView, rng: np.random.Generator, attr: str) -> Candidate | None:
    state = "moving" if rng.random() < 0.5 else "stationary"
    moment = view.moment(rng)
    if moment is None:
        return None
    attrs, _ = view.objset(rng, exclude=(attr,))
    desc = T.DESCRIPTION[state][0].format(objd=noun(attrs), when=moment.text)
    program, variants = _with_moment(filter_program(attrs), moment, [f"filter_{state}", "unique"],
                                     view)
    return _query(view, rng, attr, desc, program, variants, f"{state}/{moment.kind}")


def _for_attr(builder: Callable, attr: str) -> Callable:
    def build(view: VideoView, rng: np.random.Generator) -> Candidate | None:
        return builder(view, rng, attr)

    build.__name__ = f"{builder.__name__}_{attr}"
    return build


Builder = Callable[[VideoView, np.random.Generator], "Candidate | None"]

#: descriptive families by sub-type; a family is drawn uniformly, then its parameters
DESCRIPTIVE: dict[str, tuple[Builder, ...]] = {
    "count": (count_collisions, count_collisions_time, count_collisions_of, count_in_out,
              count_motion),
    "exist": (exist_motion, exist_collisions_time, exist_in_out_time, exist_collide_pair),
    **{
        f"query_{attr}": tuple(_for_attr(b, attr) for b in (query_in_out, query_collide,
                                                           query_motion))
        for attr in ATTRS
    },
}


# ---- multiple choice: questions and their candidate choices -------------------------------
def collision_choice(view: VideoView, a: int, b: int, rng: np.random.Generator,
                     source: str = "all_events",
                     table: Sequence[str] = T.COLLISION_CHOICE) -> Choice | None:
    """A collision between objects a and b as a choice (any order of mention)."""
    ra, rb = view.obj(a, rng), view.obj(b, rng)
    if ra is None or rb is None:
        return None
    if rng.random() < 0.5:
        ra, rb = rb, ra
    text = pick(rng, table).format(obj=ra.text, obj2=rb.text)
    program = (source, *ra.program, "filter_collision", *rb.program, "filter_collision", "unique")
    return Choice("collision", text, program, ("collision", pair(a, b)))


def explanatory_target(view: VideoView, rng: np.random.Generator) -> Ref | None:
    """A shown collision or exit (unique of its kind) to ask the causes of."""
    return view.event(rng, ("out", "collision"), table=T.EXPLANATORY_TARGET)


def explanatory_choices(view: VideoView, target: Ref, rng: np.random.Generator) -> list[Choice]:
    """Every candidate choice for a target: earlier/later events and objects not in it."""
    out: list[Choice] = []
    target_event = _ref_event(view, target)
    for p, evs in view.pairs.items():
        if len(evs) == 1 and evs[0] is not target_event:
            c = collision_choice(view, *p, rng, source="events", table=T.EXPLANATORY_CHOICE["collision"])
            if c is not None:
                out.append(c)
    for o, evs in view.ins.items():
        if len(evs) == 1 and evs[0] is not target_event:
            ref = view.obj(o, rng)
            if ref is not None:
                text = T.EXPLANATORY_CHOICE["in"][0].format(obj=ref.text)
                out.append(Choice("in", text, ("events", *ref.program, "filter_in", "unique"),
                                  ("in", o)))
    for o in range(view.n):
        if o in target.objects:
            continue
        ref = view.obj(o, rng, full=rng.random() < 0.5)
        if ref is not None:
            text = T.EXPLANATORY_CHOICE["object"][0].format(obj=ref.text)
            out.append(Choice("object", text, tuple(ref.program), ("object", o)))
    return out


def pair_choices(view: VideoView, rng: np.random.Generator,
                 exclude: Sequence[int] = ()) -> list[Choice]:
    """Every pair of objects (not involving `exclude`) as a hypothetical collision choice."""
    out = []
    for a in range(view.n):
        for b in range(a + 1, view.n):
            if a in exclude or b in exclude:
                continue
            c = collision_choice(view, a, b, rng)
            if c is not None:
                out.append(c)
    return out
