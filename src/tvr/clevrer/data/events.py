"""The events of an annotation file: in/out of the view from `inside_camera_view`, collisions."""

from __future__ import annotations

import numpy as np

from tvr.clevrer.data.annotations import Annotation
from tvr.clevrer.programs.facts import Event
from tvr.clevrer.world.events import event_key, view_events


def inside_view(annotation: Annotation) -> np.ndarray:
    """(frames, objects) `inside_camera_view` of an annotation (False where an object is absent)."""
    inside = np.zeros((len(annotation.motion_trajectory), len(annotation.object_property)), bool)
    for t, frame in enumerate(annotation.motion_trajectory):
        for m in frame.objects:
            inside[t, m.object_id] = m.inside_camera_view
    return inside


def annotation_events(annotation: Annotation) -> list[Event]:
    """In/out/collision events of one annotated video, in the world's event order: in/out as the
    simulator's runs define them (`tvr.clevrer.world.events.view_events`), collisions the file's."""
    frames = [f.frame_id for f in annotation.motion_trajectory]
    events = [
        Event(e.kind, frames[e.frame], e.objects) for e in view_events(inside_view(annotation))
    ]
    events += [Event("collision", c.frame_id, tuple(c.object_ids)) for c in annotation.collision]
    return sorted(events, key=event_key)
