"""SceneFacts of a simulated video: object attributes, events and image-plane motion per run.

Motion is in pixels of the 480x320 frame: `xy` is the object's centre projected with the
CLEVRER camera, `velocity` its finite difference in pixels per frame (central differences,
one-sided at the first and last frame), `visible` the run's in-view flag. A removed object's
`xy` and `velocity` are NaN and it is never visible.
"""

from __future__ import annotations

import numpy as np

from tvr.clevrer.programs.facts import Motion, ObjectProps, Run, SceneFacts
from tvr.clevrer.vocab import SHOWN_FRAMES
from tvr.clevrer.world.camera import CAMERA, project
from tvr.clevrer.world.events import run_events
from tvr.clevrer.world.physics import RunTrace
from tvr.clevrer.world.video import VideoSim
from tvr.render.camera import PinholeCamera


def motion_from_trace(trace: RunTrace, camera: PinholeCamera = CAMERA) -> Motion:
    """Image-plane motion (T, N) of a run."""
    xy = project(trace.location, camera)
    velocity = np.gradient(xy, axis=0)
    return Motion(xy=xy, velocity=velocity, visible=trace.inside_view.copy(),
                  floor=np.asarray(trace.location[..., :2], dtype=np.float64))


def run_facts(trace: RunTrace, camera: PinholeCamera = CAMERA) -> Run:
    """Events and motion of one run."""
    return Run(events=run_events(trace), motion=motion_from_trace(trace, camera))


def facts_from_video(video: VideoSim, camera: PinholeCamera = CAMERA) -> SceneFacts:
    """Everything the executor needs about a simulated video."""
    objects = tuple(ObjectProps(o.color, o.material, o.shape) for o in video.spec.objects)
    return SceneFacts(
        objects=objects,
        factual=run_facts(video.factual, camera),
        counterfactual={i: run_facts(t, camera) for i, t in sorted(video.counterfactual.items())},
        n_shown_frames=SHOWN_FRAMES,
    )
