"""A simulated video written as its annotation and as ground-truth dynamics, read back."""

import json

import numpy as np
import pytest

from tvr.clevrer.data.annotations import annotation_from_video, read_annotation, write_annotation
from tvr.clevrer.data.dynamics import dynamics_from_video, write_dynamics
from tvr.clevrer.programs.dynamics import read_dynamics
from tvr.clevrer.vocab import SHOWN_FRAMES, SIMULATED_FRAMES
from tvr.clevrer.world.facts import facts_from_video
from tvr.clevrer.world.video import simulate_video


@pytest.fixture(scope="module")
def video():
    return simulate_video(seed=0, index=3)


def test_annotation_of_a_video_round_trips(tmp_path, video):
    ann = annotation_from_video(video)
    assert ann.scene_index == 3 and ann.video_filename == "video_00003.mp4"
    assert len(ann.motion_trajectory) == SHOWN_FRAMES
    n = len(video.spec.objects)
    assert all(len(f.objects) == n for f in ann.motion_trajectory)
    shown = [c for c in video.factual.collisions if c.frame < SHOWN_FRAMES]
    assert [(c.frame_id, c.object_ids) for c in ann.collision] == [
        (c.frame, c.objects) for c in shown
    ]
    state = ann.motion_trajectory[40].objects[1]
    np.testing.assert_allclose(state.location, video.factual.location[40, 1], atol=1e-6)
    assert state.inside_camera_view == bool(video.factual.inside_view[40, 1])
    assert len(state.orientation) == 3
    path = tmp_path / "annotation_00003.json"
    write_annotation(path, ann)
    assert read_annotation(path) == ann
    data = json.loads(path.read_text())
    assert list(data) == ["scene_index", "video_filename", "object_property",
                          "motion_trajectory", "collision"]  # fmt: skip


def test_ground_truth_dynamics_read_back_to_the_worlds_facts(tmp_path, video):
    facts = facts_from_video(video)
    path = tmp_path / "sim_00003.json"
    write_dynamics(path, dynamics_from_video(video))
    back = read_dynamics(path)
    assert back.objects == facts.objects
    assert set(back.counterfactual) == set(facts.counterfactual) == set(range(len(facts.objects)))
    for mine, theirs in [(back.factual, facts.factual)] + [
        (back.counterfactual[k], facts.counterfactual[k]) for k in facts.counterfactual
    ]:
        assert set(mine.events) == set(theirs.events)
        assert mine.motion.visible.shape[0] == SIMULATED_FRAMES
        np.testing.assert_array_equal(mine.motion.visible, theirs.motion.visible)
        seen = theirs.motion.visible
        np.testing.assert_allclose(mine.motion.xy[seen], theirs.motion.xy[seen], atol=0.01)
