"""Videos: the rejection rules, entering objects coming into view, best-effort fallback."""

import dataclasses

import numpy as np

from tvr.clevrer.vocab import SHOWN_FRAMES
from tvr.clevrer.world.config import WorldConfig
from tvr.clevrer.world.physics import simulate
from tvr.clevrer.world.scene import ObjectSpec, SceneSpec
from tvr.clevrer.world.video import RULES, broken_rules, simulate_video


def test_kept_videos_meet_every_rule(videos):
    for v in videos:
        assert v.broken_rules == ()
        assert broken_rules(v.spec, v.factual, v.config) == ()
        cfg = v.config
        shown = [c for c in v.factual.collisions if c.frame < SHOWN_FRAMES]
        assert len(shown) >= cfg.min_collisions_shown
        pairs = [c.objects for c in v.factual.collisions]
        assert len(pairs) == len(set(pairs))  # the paper: no repeated collisions of a pair
        assert (v.factual.inside_view[:SHOWN_FRAMES].sum(axis=0) >= cfg.min_visible_frames).all()


def test_entering_objects_start_outside_the_view_and_come_in(videos):
    n = 0
    for v in videos:
        for i, o in enumerate(v.spec.objects):
            view = v.factual.inside_view[:, i]
            if o.role == "entering":
                assert not view[: o.launch_frame + 1].any()
                first_in = int(np.argmax(view))
                assert view.any() and o.launch_frame < first_in < SHOWN_FRAMES
                n += 1
            else:
                assert view[0]
    assert n >= 3


def test_a_dull_scene_breaks_the_rules():
    cfg = WorldConfig()
    spec = SceneSpec(
        (ObjectSpec("red", "rubber", "cube", (0.0, 0.0), 0.0, (0.0, 0.0), 0, "resting"),)
    )
    broken = broken_rules(spec, simulate(spec, cfg), cfg)
    assert set(broken) == {
        "min_collisions_shown",
        "min_event_span_frames",
        "max_quiet_start_frames",
    }
    assert set(broken) <= set(RULES)


def test_out_of_attempts_keeps_the_best_scene_and_says_which_rules_it_breaks():
    cfg = dataclasses.replace(WorldConfig(), min_collisions_shown=50, max_attempts=2)
    v = simulate_video(0, 0, cfg)
    assert "min_collisions_shown" in v.broken_rules
    assert v.attempts in (1, 2)
