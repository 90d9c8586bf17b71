"""Events from the simulator (collisions agree with Bullet's contacts; in/out from the view) and
the paper's causal graph."""

import itertools
from collections import defaultdict

import numpy as np
import pybullet as pb

from tvr.clevrer.programs.facts import Event
from tvr.clevrer.vocab import EVENT_KINDS, SIMULATED_FRAMES
from tvr.clevrer.world import physics
from tvr.clevrer.world.events import causal_graph, run_events, view_events


class FullScan(physics.Simulation):
    """A run that reads the contacts after every step and logs every touching pair and the
    closest distance of every pair at every frame."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.touching = defaultdict(set)  # pair -> frames f whose steps (f to f + 1) touch
        self.apart = defaultdict(set)  # pair -> frames whose state has them beyond release

    def _near(self, loc, vel):
        return True

    def _contacts(self, f):
        super()._contacts(f)
        for pt in pb.getContactPoints(physicsClientId=self.c):
            if self.floor in (pt[1], pt[2]):
                continue
            if pt[8] <= physics.TOUCH_DISTANCE or pt[9] > 0:
                a, b = self.body_object[pt[1]], self.body_object[pt[2]]
                self.touching[(min(a, b), max(a, b))].add(f)

    def _record(self):
        super()._record()
        f = len(self.rows["location"]) - 1
        n = len(self.bodies)
        for a in range(n):
            for b in range(a + 1, n):
                if not pb.getClosestPoints(
                    self.bodies[a],
                    self.bodies[b],
                    self.config.collision_release_distance,
                    physicsClientId=self.c,
                ):
                    self.apart[(a, b)].add(f)


def test_collisions_agree_with_the_simulator_contacts(videos):
    n_checked = 0
    for v in videos:
        scan = FullScan(v.spec, v.config)
        full = scan.advance()
        # reading contacts after every step changes nothing, and the distance test that skips
        # reading them misses no collision
        assert full.collisions == v.factual.collisions
        np.testing.assert_array_equal(full.location, v.factual.location)
        debounce = v.config.collision_debounce_frames
        for pair, frames in scan.touching.items():
            events = [c.frame for c in full.collisions if c.objects == pair]
            # the pair's first touching steps give its first collision, in the next frame
            assert events and events[0] == min(frames) + 1
            for e in events:
                # each collision follows steps in which the pair touched ...
                assert e - 1 in frames
                n_checked += 1
            for e0, e1 in itertools.pairwise(events):
                # ... and a second one comes only after the pair was apart for a while
                apart = [f for f in range(e0, e1) if f in scan.apart[pair]]
                assert len(apart) >= debounce
        # the episodes, rebuilt from the touching steps and the distances of every frame
        expected = []
        for pair, frames in scan.touching.items():
            open_, count = False, 0
            for f in range(SIMULATED_FRAMES - 1):
                if f in frames:
                    if not open_:
                        expected.append((f + 1, pair))
                    open_, count = True, 0
                if open_:
                    count = count + 1 if f + 1 in scan.apart[pair] else 0
                    open_ = count < debounce
        assert sorted(expected) == [(c.frame, c.objects) for c in full.collisions]
        # no collision without a touching contact
        assert {c.objects for c in full.collisions} == set(scan.touching)
    assert n_checked >= 3


def test_view_events_from_the_view_flags():
    view = np.zeros((10, 3), dtype=bool)
    view[3:7, 0] = True  # enters at 3, leaves at 7
    view[:, 1] = True  # always in view: no event
    view[:5, 2] = True  # in view at frame 0, leaves at 5
    events = sorted(view_events(view), key=lambda e: (e.frame, e.objects))
    assert events == [Event("in", 3, (0,)), Event("out", 5, (2,)), Event("out", 7, (0,))]


def test_run_events_are_ordered_and_well_formed(videos):
    for v in videos:
        for run in [v.factual, *v.counterfactual.values()]:
            events = run_events(run)
            keys = [(e.frame, ["in", "collision", "out"].index(e.kind)) for e in events]
            assert keys == sorted(keys)
            for e in events:
                assert e.kind in EVENT_KINDS
                assert 0 < e.frame < SIMULATED_FRAMES
                assert len(e.objects) == (2 if e.kind == "collision" else 1)
                assert all(run.present[o] for o in e.objects)


def test_causal_graph_follows_the_paper():
    # sphere 0 enters, hits cube 1 (resting), which then hits cylinder 2; 0 leaves later
    events = (
        Event("in", 5, (0,)),
        Event("collision", 20, (0, 1)),
        Event("collision", 30, (1, 2)),
        Event("out", 40, (0,)),
    )
    g = causal_graph(events)
    assert g.parents == ((), (0,), (1,), (1,))
    # first events are caused by the objects themselves
    assert g.object_causes == ((0,), (1,), (2,), ())
    assert g.ancestors(2) == {0, 1}
    assert g.ancestors(3) == {0, 1}
    assert g.ancestors(0) == frozenset()
    # the paper's example: the first collision and the cube cause the second collision
    assert g.responsible_objects(2) == {0, 1, 2}
    assert g.responsible_objects(0) == {0}


def test_causal_graph_collision_has_both_previous_events_as_causes():
    events = (
        Event("in", 1, (0,)),
        Event("in", 2, (1,)),
        Event("collision", 9, (0, 1)),
        Event("collision", 9, (2, 3)),
    )
    g = causal_graph(events)
    assert g.parents[2] == (0, 1)
    assert g.parents[3] == () and g.object_causes[3] == (2, 3)
