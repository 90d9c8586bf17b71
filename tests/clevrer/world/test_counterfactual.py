"""Counterfactual runs: the scene re-simulated without each object; identical to the factual run
until the removed object's first contact, different after it."""

import numpy as np

from tvr.clevrer.world.physics import simulate

ARRAYS = ("location", "orientation", "velocity", "angular_velocity")


def others(run, removed):
    return [i for i in range(run.location.shape[1]) if i != removed]


def test_identical_until_the_first_contact_then_different(more_videos):
    changed = 0
    for v in more_videos:
        factual = v.factual
        for i, cf in v.counterfactual.items():
            assert cf.removed == i and not cf.present[i] and cf.present.sum() == len(cf.present) - 1
            assert not cf.inside_view[:, i].any() and np.isnan(cf.location[:, i]).all()
            assert all(i not in c.objects for c in cf.collisions)
            rest = others(factual, i)
            first = int(factual.first_contact[i])
            until = factual.location.shape[0] if first < 0 else first + 1
            # frames 0..first are states before the steps of i's first contact: bit-identical
            for name in ARRAYS:
                np.testing.assert_array_equal(
                    getattr(cf, name)[:until, rest], getattr(factual, name)[:until, rest]
                )
            assert [c for c in cf.collisions if c.frame < until] == [
                c for c in factual.collisions if c.frame < until
            ]
            if first >= 0 and not np.array_equal(cf.location[:, rest], factual.location[:, rest]):
                changed += 1
    # removing an object that hits others changes their motion (the test can fail)
    assert changed >= 10


def test_copied_counterfactuals_equal_runs_from_scratch(videos):
    # an object that touches nothing gets the factual run as its counterfactual, unsimulated:
    # a run that never creates it gives exactly the same arrays; objects that do touch are
    # simulated from scratch, and the run is reproducible
    checked = set()
    for v in videos:
        for i, cf in v.counterfactual.items():
            kind = v.factual.first_contact[i] < 0
            if kind in checked:
                continue
            scratch = simulate(v.spec, v.config, removed=i)
            for name in (*ARRAYS, "inside_view", "present"):
                np.testing.assert_array_equal(getattr(scratch, name), getattr(cf, name))
            assert scratch.collisions == cf.collisions
            checked.add(kind)
    assert checked == {True, False}


def test_removing_an_object_removes_its_events_and_their_consequences(videos):
    for v in videos:
        for i, cf in v.counterfactual.items():
            own = [c for c in v.factual.collisions if i in c.objects]
            if own:
                assert len(cf.collisions) != len(v.factual.collisions) or (
                    set(cf.collisions) != set(v.factual.collisions)
                )
