"""Events of a run (in, out of the camera view; collisions) and the paper's causal graph.

"in" is the first frame an object's centre is inside the view after being outside, "out" the
first frame it is outside after being inside (an object in view at frame 0 has no "in" event);
collisions come from the simulator's contacts (`physics.py`). Events are ordered by frame, then
in < collision < out within a frame (an object enters before it can collide, and a collision
in the frame it leaves comes before the exit), then by object ids.

Causal graph (CLEVRER, section 3): the first event of an object is caused by the object itself;
each later event of an object is caused by that object's previous event; a collision has the
previous events of both its objects as causes.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np

from tvr.clevrer.programs.facts import Event

if TYPE_CHECKING:  # physics imports pybullet; reading events from files needs none
    from tvr.clevrer.world.physics import RunTrace

KIND_ORDER = {"in": 0, "collision": 1, "out": 2}


def event_key(event: Event) -> tuple[int, int, tuple[int, ...]]:
    """Sort key: frame, then in < collision < out, then object ids."""
    return (event.frame, KIND_ORDER[event.kind], event.objects)


def view_events(inside_view: np.ndarray) -> list[Event]:
    """"in" and "out" events from a (T, N) in-view array."""
    v = np.asarray(inside_view, dtype=bool)
    change = v[1:] != v[:-1]
    events = []
    for f, i in zip(*np.nonzero(change), strict=True):
        frame = int(f) + 1
        events.append(Event("in" if v[frame, i] else "out", frame, (int(i),)))
    return events


def run_events(trace: RunTrace) -> tuple[Event, ...]:
    """All events of a run over its simulated frames, in order."""
    events = view_events(trace.inside_view)
    events += [Event("collision", c.frame, c.objects) for c in trace.collisions]
    return tuple(sorted(events, key=event_key))


@dataclass(frozen=True)
class CausalGraph:
    """Events (ordered) with their causes.

    Args:
        events: the run's events in order.
        parents: for each event, the indices of the events that cause it.
        object_causes: for each event, the objects whose first event it is (they cause it).
    """

    events: tuple[Event, ...]
    parents: tuple[tuple[int, ...], ...]
    object_causes: tuple[tuple[int, ...], ...]

    @cached_property
    def _ancestors(self) -> tuple[frozenset[int], ...]:
        out: list[frozenset[int]] = []
        for ps in self.parents:  # parents always come earlier in the order
            acc: set[int] = set(ps)
            for p in ps:
                acc |= out[p]
            out.append(frozenset(acc))
        return tuple(out)

    def ancestors(self, i: int) -> frozenset[int]:
        """Indices of every event responsible for event i (its causes, their causes, ...)."""
        return self._ancestors[i]

    def responsible_objects(self, i: int) -> frozenset[int]:
        """Objects responsible for event i: those in it or in any event responsible for it."""
        objs: set[int] = set(self.events[i].objects)
        for a in self._ancestors[i]:
            objs.update(self.events[a].objects)
        return frozenset(objs)


def causal_graph(events: tuple[Event, ...] | list[Event]) -> CausalGraph:
    """The causal graph of events given in order (see `event_key`)."""
    events = tuple(events)
    latest: dict[int, int] = {}
    parents: list[tuple[int, ...]] = []
    object_causes: list[tuple[int, ...]] = []
    for k, e in enumerate(events):
        parents.append(tuple(sorted({latest[o] for o in e.objects if o in latest})))
        object_causes.append(tuple(o for o in e.objects if o not in latest))
        for o in e.objects:
            latest[o] = k
    return CausalGraph(events, tuple(parents), tuple(object_causes))
