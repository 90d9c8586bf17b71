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

# The look of the public release: values read with bpy from github hughplay/TVR,
# trance/resource/base_scene.blend (objects "Lamp_Key", "Lamp_Fill", "Lamp_Back", "Area" (the
# sun), "Ground", "Line_*", world "World") and trance/resource/materials/*.blend (node groups
# "Rubber", "Metal", "Glass"). tvr builds the scene itself; the .blend files are never loaded.

#: linear reflectance of the ground: "Ground" has no material, so Cycles' default surface
#: (diffuse, 0.8 grey) shades it
GROUND_RGB = (0.8, 0.8, 0.8)
#: the thin lines that mark the visible square: "Line_*" use "Material", whose colour
#: (diffuse_color) is 0.8. Its node tree holds a black Diffuse BSDF, but the release's images show
#: the lines 2-4 levels lighter than the floor, not dark: the release (Blender 2.79) rendered the
#: material without its nodes, from that colour
LINE_RGB = (0.8, 0.8, 0.8)
#: half width of a floor line ("Line_*": planes of 6 x 0.012) and where the lines run
LINE_HALF_WIDTH = 0.006
LINE_AT = vocab.VISIBLE_MAX * vocab.GRID_UNIT
#: half size of the flat ground plane (scene units) of the raster backend; it fills every view
GROUND_HALF_SIZE = 60.0
#: world "World": Background strength 0 (no light from the sky)
WORLD_STRENGTH = 0.0
#: area lights: energy (W), edge of the square (m) and colour of "Lamp_Key", "Lamp_Fill",
#: "Lamp_Back" (each tracks the origin, as ours do)
LIGHT_POWER = {"key": 98.17477416992188, "fill": 39.2699089050293, "back": 117.80972290039062}
LIGHT_SIZE = {"key": 0.5, "fill": 0.5, "back": 1.0}
LIGHT_COLOR = {
    "key": (1.0, 0.9323092103004456, 0.8166635632514954),
    "fill": (0.7616661787033081, 0.8177196383476257, 1.0),
    "back": (1.0, 1.0, 1.0),
}
#: the sun, object "Area": strength (W/m^2), angular diameter and XYZ Euler rotation (degrees)
SUN_STRENGTH = 0.44999995827674866
SUN_ANGLE_DEG = 11.421186198001447
SUN_ROTATION_DEG = (13.523436462261332, 23.885487423783704, 5.562237121359815)


def _sun_direction() -> tuple[float, float, float]:
    """Unit vector towards the sun: the +z axis of SUN_ROTATION_DEG (XYZ Euler)."""
    ax, ay, az = (math.radians(a) for a in SUN_ROTATION_DEG)
    # third column of Rz(az) @ Ry(ay) @ Rx(ax)
    cx, sx, cy, sy, cz, sz = (
        math.cos(ax),
        math.sin(ax),
        math.cos(ay),
        math.sin(ay),
        math.cos(az),
        math.sin(az),
    )
    return (cz * sy * cx + sz * sx, sz * sy * cx - cz * sx, cy * cx)


#: direction the sun's light comes from (unit vector towards the sun)
SUN_DIRECTION = _sun_direction()
#: the curved backdrop "Ground" (Cycles only): its (x, z) profile, extruded along -y over
#: BACKDROP_DEPTH, then placed at BACKDROP_LOCATION turned BACKDROP_ANGLE_DEG about z; smoothed by
#: a Subdivision Surface modifier of BACKDROP_SUBDIVISIONS levels
BACKDROP_PROFILE = (
    (-23.5557, 0.0),
    (-21.644, 0.0),
    (-19.8427, 0.0001),
    (-18.1474, 0.0004),
    (-16.5536, 0.0012),
    (-15.0571, 0.003),
    (-13.6537, 0.0062),
    (-12.3392, 0.0114),
    (-11.1096, 0.0195),
    (-9.961, 0.0312),
    (-8.8894, 0.0476),
    (-7.8912, 0.0697),
    (-6.9626, 0.0987),
    (-6.0999, 0.1359),
    (-5.2998, 0.1828),
    (-4.5587, 0.2408),
    (-3.8733, 0.3118),
    (-3.2402, 0.3973),
    (-2.6565, 0.4994),
    (-2.1189, 0.62),
    (-1.6244, 0.7612),
    (-1.1701, 0.9252),
    (-0.7532, 1.1145),
    (-0.3709, 1.3313),
    (-0.0205, 1.5784),
    (0.3005, 1.8584),
    (0.5946, 2.174),
    (0.8643, 2.5283),
    (1.1119, 2.9242),
    (1.3396, 3.3649),
    (1.5495, 3.8536),
    (1.7438, 4.3936),
    (1.9244, 4.9886),
    (2.0933, 5.642),
    (2.2522, 6.3576),
    (2.4028, 7.1392),
    (2.5469, 7.9907),
    (2.686, 8.9163),
    (2.8214, 9.92),
    (2.9548, 11.0061),
    (3.0872, 12.1791),
    (3.22, 13.4435),
    (3.3543, 14.8038),
    (3.491, 16.2648),
    (3.6313, 17.8315),
    (3.7759, 19.5086),
    (3.9256, 21.3014),
    (4.0812, 23.2149),
)
BACKDROP_DEPTH = 56.484859466552734
BACKDROP_LOCATION = (-27.06279945373535, -17.996700286865234, 0.0)
BACKDROP_ANGLE_DEG = 154.58295865437128
BACKDROP_SUBDIVISIONS = 2
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
    color: tuple[float, float, float] = (1.0, 1.0, 1.0)  # linear RGB of the emitted light


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
        """The four thin quads (4x3 corners each, z = 0.01 as in the release) marking the visible square."""
        a, w, z = LINE_AT, LINE_HALF_WIDTH, 0.01
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
        Light(
            name,
            "area",
            _xyz(lights.get(name, base)),
            LIGHT_POWER[name],
            LIGHT_SIZE[name],
            LIGHT_COLOR[name],
        )
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
