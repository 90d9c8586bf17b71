"""The renderer-neutral scene description that every backend draws: objects, camera, lights, floor.

`build_scene` turns a state (10 object dicts) plus one camera and the sample's lights into a
`SceneDescription`; `sample_views` lists the four images of a sample (init.C, fin.L, fin.C, fin.R)
with their descriptions. Geometry follows CLEVR: scene coordinates are grid * 0.15, every object
rests on z = 0, a sphere of footprint radius r has radius r, a cylinder radius r and height 2r, a
rounded cube half side r / sqrt(2) (so its half diagonal is r), rotated about z. Objects in the
invisible area are left out. Colours are the vocabulary's RGB / 255, used as linear reflectance,
as CLEVR's generator does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from tvr.trance.data.sample import Sample, image_name
from tvr.trance.world import vocab
from tvr.trance.world.camera import CAMERA_BASE, IMAGE_HEIGHT, IMAGE_WIDTH, LIGHT_BASE, Camera

#: linear reflectance of the ground
GROUND_RGB = (0.42, 0.42, 0.42)
#: reflectance of the thin lines that mark the visible square on the floor
LINE_RGB = (0.62, 0.62, 0.62)
#: half width of a floor line and where the lines run (scene units)
LINE_HALF_WIDTH = 0.02
LINE_AT = vocab.VISIBLE_MAX * vocab.GRID_UNIT
#: half size of the ground plane (scene units); it fills every view
GROUND_HALF_SIZE = 60.0
#: uniform light of the world (sky) around the scene, as Cycles' background strength
WORLD_STRENGTH = 0.15
#: light powers (watts, Cycles' area lights) and sizes (m); the sun is in W/m^2
LIGHT_POWER = {"key": 320.0, "fill": 60.0, "back": 100.0}
LIGHT_SIZE = {"key": 1.0, "fill": 1.0, "back": 1.0}
SUN_STRENGTH = 0.25
#: direction the sun's light comes from (unit vector towards the sun)
SUN_DIRECTION = (0.3, 0.2, 0.93)
GLASS_IOR = 1.45


@dataclass(frozen=True)
class SceneObject:
    """One rendered object: which unit mesh, where, how big, what colour and material."""

    index: int  # the object's index 0..9 in the sample (the mask value)
    shape: str  # cube | sphere | cylinder (see meshes.unit_mesh)
    material: str  # rubber | metal | glass
    color: str
    rgb: tuple[float, float, float]  # linear reflectance 0..1
    location: tuple[float, float, float]  # centre of the object (scene units)
    scale: tuple[float, float, float]  # half extents along the object's axes
    rotation: float  # radians about +z
    radius: float  # footprint radius (scene units)

    def matrix(self) -> np.ndarray:
        """4x4 model matrix mapping the unit mesh ([-1, 1]^3) to the scene."""
        c, s = math.cos(self.rotation), math.sin(self.rotation)
        m = np.eye(4)
        m[:3, :3] = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]) * np.asarray(self.scale)
        m[:3, 3] = self.location
        return m


@dataclass(frozen=True)
class Light:
    """An area light aimed at the origin, or the sun (location = direction towards it)."""

    name: str
    kind: str  # "area" | "sun"
    location: tuple[float, float, float]
    power: float  # watts for an area light, W/m^2 for the sun
    size: float = 0.0  # edge of a square area light (scene units)


@dataclass(frozen=True)
class SceneDescription:
    """Everything a backend needs to draw one image."""

    objects: tuple[SceneObject, ...]
    camera: tuple[float, float, float]
    lights: tuple[Light, ...]
    width: int = IMAGE_WIDTH
    height: int = IMAGE_HEIGHT
    ground_rgb: tuple[float, float, float] = GROUND_RGB
    line_rgb: tuple[float, float, float] = LINE_RGB
    world_strength: float = WORLD_STRENGTH

    @property
    def camera_model(self) -> Camera:
        return Camera(self.camera, self.width, self.height)

    def floor_lines(self) -> list[np.ndarray]:
        """The four thin quads (4x3 corners each, z slightly above 0) marking the visible square."""
        a, w, z = LINE_AT, LINE_HALF_WIDTH, 0.002
        quads = []
        for sign in (-1.0, 1.0):
            c = sign * a
            quads.append(
                [[c - w, -a - w, z], [c + w, -a - w, z], [c + w, a + w, z], [c - w, a + w, z]]
            )
            quads.append(
                [[-a - w, c - w, z], [a + w, c - w, z], [a + w, c + w, z], [-a - w, c + w, z]]
            )
        return [np.asarray(q) for q in quads]


def is_visible_position(position: list[int] | tuple[int, int]) -> bool:
    """Whether a grid position lies in the visible area (|x|, |y| <= 20 grid units)."""
    x, y = position
    return (
        vocab.VISIBLE_MIN <= x <= vocab.VISIBLE_MAX and vocab.VISIBLE_MIN <= y <= vocab.VISIBLE_MAX
    )


def scene_object(index: int, obj: dict[str, Any]) -> SceneObject:
    """The 3-D placement of one object dict of a sample."""
    shape = obj["shape"]
    r = vocab.RADIUS_SCENE[vocab.SIZES.index(obj["size"])]
    half = r / math.sqrt(2.0) if shape == "cube" else r
    x, y = (float(p) * vocab.GRID_UNIT for p in obj["position"])
    rgb = tuple(c / 255.0 for c in vocab.COLOR_RGB[obj["color"]])
    if shape not in vocab.SHAPES or obj["material"] not in vocab.MATERIALS:
        raise ValueError(f"object {index}: unknown shape or material in {obj!r}")
    return SceneObject(
        index=index,
        shape=shape,
        material=obj["material"],
        color=obj["color"],
        rgb=rgb,  # type: ignore[arg-type]
        location=(x, y, half),
        scale=(half, half, half),
        rotation=math.radians(float(obj.get("rotation", 0.0))),
        radius=r,
    )


def _xyz(v: list[float] | tuple[float, ...]) -> tuple[float, float, float]:
    x, y, z = (float(c) for c in v)
    return (x, y, z)


def scene_lights(lights: dict[str, list[float]] | None) -> tuple[Light, ...]:
    """The area lights at the sample's (jittered) positions, plus the fixed sun."""
    lights = lights or {}
    out = [
        Light(name, "area", _xyz(lights.get(name, base)), LIGHT_POWER[name], LIGHT_SIZE[name])
        for name, base in LIGHT_BASE.items()
    ]
    out.append(Light("sun", "sun", SUN_DIRECTION, SUN_STRENGTH))
    return tuple(out)


def build_scene(
    objects: list[dict[str, Any]],
    camera: list[float] | tuple[float, float, float],
    lights: dict[str, list[float]] | None = None,
) -> SceneDescription:
    """The description of one image: the objects in the visible area seen from `camera`."""
    placed = tuple(
        scene_object(i, o) for i, o in enumerate(objects) if is_visible_position(o["position"])
    )
    return SceneDescription(placed, _xyz(camera), scene_lights(lights))


#: the images of one sample: (stage, view), in the order they are rendered
SAMPLE_IMAGES = vocab.IMAGE_SLOTS


def sample_views(sample: Sample | dict[str, Any]) -> list[tuple[str, SceneDescription]]:
    """(image file name, scene) for the four images of a sample: init.C, fin.L, fin.C, fin.R."""
    d = sample.to_dict() if isinstance(sample, Sample) else sample
    cameras = d.get("cameras") or {}
    out = []
    for stage, view in SAMPLE_IMAGES:
        objects = d["objects"] if stage == "init" else d["final"]
        cam = cameras.get(view, CAMERA_BASE[view])
        out.append(
            (image_name(str(d["id"]), stage, view), build_scene(objects, cam, d.get("lights")))
        )
    return out
