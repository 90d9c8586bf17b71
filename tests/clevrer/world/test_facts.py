"""SceneFacts of a simulated video: attributes, events per run, image-plane motion."""

import numpy as np

from tvr.clevrer.programs.facts import SceneFacts
from tvr.clevrer.vocab import FRAME_HEIGHT, FRAME_WIDTH, SHOWN_FRAMES, SIMULATED_FRAMES
from tvr.clevrer.world.camera import CAMERA
from tvr.clevrer.world.events import run_events
from tvr.clevrer.world.facts import facts_from_video


def test_facts_of_a_video(videos):
    v = videos[0]
    facts = facts_from_video(v)
    assert isinstance(facts, SceneFacts)
    n = len(v.spec.objects)
    assert [(o.color, o.material, o.shape) for o in facts.objects] == [
        (o.color, o.material, o.shape) for o in v.spec.objects
    ]
    assert facts.n_shown_frames == SHOWN_FRAMES
    assert sorted(facts.counterfactual) == list(range(n))
    assert facts.factual.events == run_events(v.factual)
    for i, run in facts.counterfactual.items():
        assert run.events == run_events(v.counterfactual[i])
        assert not run.motion.visible[:, i].any()
        assert np.isnan(run.motion.xy[:, i]).all()


def test_motion_is_in_image_pixels(videos):
    v = videos[1]
    m = facts_from_video(v).factual.motion
    n = len(v.spec.objects)
    assert m.xy.shape == m.velocity.shape == (SIMULATED_FRAMES, n, 2)
    np.testing.assert_array_equal(m.visible, v.factual.inside_view)
    # a visible centre lies in the 480x320 frame; the projection is the camera's
    xy = m.xy[m.visible]
    assert (xy[:, 0] >= 0).all() and (xy[:, 0] < FRAME_WIDTH).all()
    assert (xy[:, 1] >= 0).all() and (xy[:, 1] < FRAME_HEIGHT).all()
    uv, _ = CAMERA.project(v.factual.location[50, 0])
    np.testing.assert_allclose(m.xy[50, 0], uv)
    # velocity: pixels per frame, central differences
    np.testing.assert_allclose(m.velocity[50], (m.xy[51] - m.xy[49]) / 2)
    np.testing.assert_allclose(m.velocity[0], m.xy[1] - m.xy[0])
    # an object moving in the world moves in the image, a resting one does not
    speed3d = np.linalg.norm(v.factual.velocity[..., :2], axis=-1)
    speed2d = np.linalg.norm(m.velocity, axis=-1)
    assert (speed2d[speed3d > 0.5] > 0.3).all()
    assert (speed2d[1:-1][(speed3d[:-2] < 1e-3) & (speed3d[2:] < 1e-3)[:]] < 0.05).all()
