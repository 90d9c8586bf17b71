"""The per-video ``annotation_XXXXX.json`` of the release: a typed form, its writer and reader.

The released layout (field names and order as in the release's README)::

    {scene_index, video_filename,
     object_property: [{object_id, color, material, shape}],
     motion_trajectory: [{frame_id, objects: [{object_id, location: [x, y, z],
                          orientation: [..], velocity: [x, y, z], angular_velocity: [x, y, z],
                          inside_camera_view}]}],
     collision: [{object_ids: [a, b], frame_id, location: [x, y, z]}]}

`annotation_from_video` makes it from a simulated video (the shown frames of the factual run).

The reader checks what tvr relies on and names the file and field of the first fault: objects
are numbered 0..N-1 in the order of ``object_property`` and no two share colour, material and
shape; frames are listed in order from 0 (``frame_id`` equals the position); every id refers to
an object of the video. ``orientation`` is kept as read, 3 numbers (Euler angles, radians, XYZ,
as Blender stores a rotation; what tvr writes) or 4 (a quaternion). Numbers keep their JSON type,
so a file read and written again has the same content.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from tvr.clevrer.data import layout
from tvr.clevrer.data.fields import Field, Fields, dump_json, load_json
from tvr.clevrer.data.rounding import rounded
from tvr.clevrer.vocab import COLORS, MATERIALS, SHAPES, SHOWN_FRAMES
from tvr.core.jsonl import write_text

if TYPE_CHECKING:
    from tvr.clevrer.world.video import VideoSim


@dataclass(frozen=True)
class ObjectProperty:
    """One object's static attributes; `object_id` is its position in ``object_property``."""

    object_id: int
    color: str
    material: str
    shape: str


@dataclass(frozen=True)
class ObjectMotion:
    """One object's state at one frame (world coordinates, metres, radians)."""

    object_id: int
    location: tuple[float, ...]
    orientation: tuple[float, ...]
    velocity: tuple[float, ...]
    angular_velocity: tuple[float, ...]
    inside_camera_view: bool


@dataclass(frozen=True)
class FrameMotion:
    """The states of the objects at one frame."""

    frame_id: int
    objects: tuple[ObjectMotion, ...]


@dataclass(frozen=True)
class Collision:
    """A collision between two objects at a frame, where it happened (world coordinates)."""

    object_ids: tuple[int, int]
    frame_id: int
    location: tuple[float, ...]


@dataclass(frozen=True)
class Annotation:
    """One video's annotation file."""

    scene_index: int
    video_filename: str
    object_property: tuple[ObjectProperty, ...]
    motion_trajectory: tuple[FrameMotion, ...]
    collision: tuple[Collision, ...]

    def to_json(self) -> dict[str, Any]:
        """The released layout, as plain JSON values."""
        return {
            "scene_index": self.scene_index,
            "video_filename": self.video_filename,
            "object_property": [
                {"object_id": o.object_id, "color": o.color, "material": o.material,
                 "shape": o.shape}
                for o in self.object_property
            ],
            "motion_trajectory": [
                {"frame_id": f.frame_id, "objects": [_motion_json(m) for m in f.objects]}
                for f in self.motion_trajectory
            ],
            "collision": [
                {"object_ids": list(c.object_ids), "frame_id": c.frame_id,
                 "location": list(c.location)}
                for c in self.collision
            ],
        }  # fmt: skip

    @classmethod
    def from_json(cls, data: Any, path: str | Path = "<annotation>") -> Annotation:
        """Check `data` (a parsed annotation file) and build the typed form; faults raise
        InputError naming `path` and the field."""
        return _parse(Fields(path), data)


def _motion_json(m: ObjectMotion) -> dict[str, Any]:
    return {
        "object_id": m.object_id,
        "location": list(m.location),
        "orientation": list(m.orientation),
        "velocity": list(m.velocity),
        "angular_velocity": list(m.angular_velocity),
        "inside_camera_view": m.inside_camera_view,
    }


def write_annotation(path: str | Path, annotation: Annotation) -> None:
    """Write `annotation` to `path` atomically, compact JSON as released."""
    write_text(Path(path), dump_json(annotation.to_json()))


def read_annotation(path: str | Path) -> Annotation:
    """Read and check one ``annotation_XXXXX.json``."""
    return Annotation.from_json(load_json(path), path)


def _parse(f: Fields, data: Any) -> Annotation:
    keys = ("scene_index", "video_filename", "object_property", "motion_trajectory", "collision")
    f.mapping(data, "", keys)
    scene_index = f.integer(data["scene_index"], "scene_index", minimum=0)
    video_filename = f.string(data["video_filename"], "video_filename")

    props: list[ObjectProperty] = []
    seen: dict[tuple[str, str, str], int] = {}
    for i, raw in enumerate(f.sequence(data["object_property"], "object_property")):
        where = f"object_property[{i}]"
        f.mapping(raw, where, ("object_id", "color", "material", "shape"))
        oid = f.integer(raw["object_id"], f"{where}.object_id")
        if oid != i:
            raise f.fail(f"{where}.object_id", f"expected {i} (objects are numbered 0..N-1 in "
                         "the order listed)")  # fmt: skip
        prop = ObjectProperty(
            oid,
            f.string(raw["color"], f"{where}.color", COLORS),
            f.string(raw["material"], f"{where}.material", MATERIALS),
            f.string(raw["shape"], f"{where}.shape", SHAPES),
        )
        key = (prop.color, prop.material, prop.shape)
        if key in seen:
            raise f.fail(where, f"same colour, material and shape as object {seen[key]}")
        seen[key] = oid
        props.append(prop)
    n_objects = len(props)

    frames: list[FrameMotion] = []
    for t, raw in enumerate(f.sequence(data["motion_trajectory"], "motion_trajectory")):
        where = f"motion_trajectory[{t}]"
        f.mapping(raw, where, ("frame_id", "objects"))
        frame_id = f.integer(raw["frame_id"], f"{where}.frame_id")
        if frame_id != t:
            raise f.fail(f"{where}.frame_id", f"expected {t} (frames are listed in order from 0)")
        states: list[ObjectMotion] = []
        listed: set[int] = set()
        for k, obj in enumerate(f.sequence(raw["objects"], (where, ".objects"))):
            at = (where, f".objects[{k}]")
            f.mapping(obj, at, _STATE_KEYS)
            oid = _object_id(f, obj["object_id"], (*at, ".object_id"), n_objects)
            if oid in listed:
                raise f.fail((*at, ".object_id"), f"object {oid} is listed twice in this frame")
            listed.add(oid)
            states.append(
                ObjectMotion(
                    oid,
                    f.numbers(obj["location"], (*at, ".location"), (3,)),
                    f.numbers(obj["orientation"], (*at, ".orientation"), (3, 4)),
                    f.numbers(obj["velocity"], (*at, ".velocity"), (3,)),
                    f.numbers(obj["angular_velocity"], (*at, ".angular_velocity"), (3,)),
                    f.boolean(obj["inside_camera_view"], (*at, ".inside_camera_view")),
                )
            )
        frames.append(FrameMotion(frame_id, tuple(states)))

    collisions: list[Collision] = []
    for i, raw in enumerate(f.sequence(data["collision"], "collision")):
        where = f"collision[{i}]"
        f.mapping(raw, where, ("object_ids", "frame_id", "location"))
        ids = f.sequence(raw["object_ids"], f"{where}.object_ids")
        if len(ids) != 2:
            raise f.fail(f"{where}.object_ids", f"expected 2 object ids, got {len(ids)}")
        a = _object_id(f, ids[0], f"{where}.object_ids[0]", n_objects)
        b = _object_id(f, ids[1], f"{where}.object_ids[1]", n_objects)
        if a == b:
            raise f.fail(f"{where}.object_ids", f"an object cannot collide with itself ({a})")
        collisions.append(
            Collision(
                (a, b),
                f.integer(raw["frame_id"], f"{where}.frame_id", minimum=0),
                f.numbers(raw["location"], f"{where}.location", (3,)),
            )
        )
    return Annotation(scene_index, video_filename, tuple(props), tuple(frames), tuple(collisions))


_STATE_KEYS = ("object_id", "location", "orientation", "velocity", "angular_velocity",
               "inside_camera_view")  # fmt: skip


def _object_id(f: Fields, value: Any, field: Field, n_objects: int) -> int:
    oid = f.integer(value, field)
    if not 0 <= oid < n_objects:
        raise f.fail(field, f"no object {oid} in object_property ({n_objects} objects)")
    return oid


def annotation_from_video(
    video: VideoSim, n_frames: int = SHOWN_FRAMES, decimals: int = 6
) -> Annotation:
    """The annotation of a simulated video: its objects, the factual run's states over the first
    `n_frames` frames (the shown video) and its collisions in those frames.

    World coordinates as simulated (units, radians); velocities per second; orientation as Euler
    angles (XYZ) from the simulator's quaternions; numbers rounded to `decimals`.
    """
    run = video.factual
    props = tuple(
        ObjectProperty(i, o.color, o.material, o.shape) for i, o in enumerate(video.spec.objects)
    )
    n_frames = min(n_frames, run.location.shape[0])
    present = [i for i in range(len(props)) if run.present[i]]
    # whole arrays rounded at once, then plain lists: [frame][object][axis]
    location = rounded(run.location[:n_frames], decimals)
    euler = rounded(quaternion_to_euler_xyz(run.orientation[:n_frames]), decimals)
    velocity = rounded(run.velocity[:n_frames], decimals)
    angular = rounded(run.angular_velocity[:n_frames], decimals)
    view = run.inside_view[:n_frames].tolist()
    frames = tuple(
        FrameMotion(
            t,
            tuple(
                ObjectMotion(
                    i,
                    tuple(location[t][i]),
                    tuple(euler[t][i]),
                    tuple(velocity[t][i]),
                    tuple(angular[t][i]),
                    bool(view[t][i]),
                )
                for i in present
            ),
        )
        for t in range(n_frames)
    )
    collisions = tuple(
        Collision((int(c.objects[0]), int(c.objects[1])), int(c.frame),
                  tuple(rounded(c.location, decimals)))
        for c in run.collisions
        if c.frame < n_frames
    )  # fmt: skip
    return Annotation(
        scene_index=video.index,
        video_filename=layout.video_filename(video.index),
        object_property=props,
        motion_trajectory=frames,
        collision=collisions,
    )


def quaternion_to_euler_xyz(q: np.ndarray) -> np.ndarray:
    """Euler angles (radians; X, then Y, then Z about the fixed axes, Blender's 'XYZ' mode) of
    unit quaternions `q` (..., 4) in x, y, z, w order."""
    x, y, z, w = (q[..., i] for i in range(4))
    roll = np.arctan2(2.0 * (w * x + y * z), 1.0 - 2.0 * (x * x + y * y))
    pitch = np.arcsin(np.clip(2.0 * (w * y - z * x), -1.0, 1.0))
    yaw = np.arctan2(2.0 * (w * z + x * y), 1.0 - 2.0 * (y * y + z * z))
    return np.stack([roll, pitch, yaw], axis=-1)
