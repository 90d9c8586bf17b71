"""The renderer-neutral scene that every backend draws: placed objects, camera, lights, floor.

The base scene is CLEVR's (github facebookresearch/clevr-dataset-gen,
image_generation/data/base_scene.blend, read with bpy 5.0.1), which TRANCE's release reuses:
a curved grey backdrop ("Ground", no material, so Cycles' default diffuse 0.8), a sun ("Area"),
no light from the world, and three area lights whose powers and places each benchmark sets
(they differ between CLEVR and TRANCE's release, as does the backdrop's place). A benchmark
builds `SceneDescription`s from its own states; `tvr.render.raster` and `tvr.render.cycles` draw
them with the same unit meshes (`tvr.render.meshes`) and the same pinhole camera, so objects land
on the same pixels in both.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tvr.render.camera import HFOV

#: linear reflectance of the ground: "Ground" has no material, so Cycles' default surface (diffuse,
#: 0.8 grey) shades it
GROUND_RGB = (0.8, 0.8, 0.8)
#: TRANCE's thin floor lines (its release's "Line_*", material colour 0.8); CLEVR has none
LINE_RGB = (0.8, 0.8, 0.8)
#: half width of a floor line (TRANCE's "Line_*": planes of 6 x 0.012)
LINE_HALF_WIDTH = 0.006
#: half size of the flat ground plane (scene units) of the raster backend; it fills every view
GROUND_HALF_SIZE = 60.0
#: world "World": Background strength 0 (no light from the sky)
WORLD_STRENGTH = 0.0
#: the sun, object "Area": strength (W/m^2), angular diameter and XYZ Euler rotation (degrees)
SUN_STRENGTH = 0.44999995827674866
SUN_ANGLE_DEG = 11.421186198001447
SUN_ROTATION_DEG = (13.523436462261332, 23.885487423783704, 5.562237121359815)
GLASS_IOR = 1.45
# CLEVR_COLOR_RGB lives in tvr.render.colors (no numpy there)


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
#: BACKDROP_DEPTH, then placed at a benchmark's backdrop location turned BACKDROP_ANGLE_DEG about
#: z; smoothed by a Subdivision Surface modifier of BACKDROP_SUBDIVISIONS levels
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
BACKDROP_ANGLE_DEG = 154.58295865437128
BACKDROP_SUBDIVISIONS = 2
#: where CLEVR's base_scene.blend places "Ground" (TRANCE's release moved it 3 units along -x)
CLEVR_BACKDROP_LOCATION = (-24.062761306762695, -17.99666976928711, 0.0)


def quaternion_matrix(q: tuple[float, float, float, float]) -> np.ndarray:
    """3x3 rotation of a quaternion given as (x, y, z, w) (pybullet's order); normalised first."""
    x, y, z, w = (float(c) for c in q)
    n = math.sqrt(x * x + y * y + z * z + w * w)
    if n == 0.0:
        raise ValueError("zero quaternion")
    x, y, z, w = x / n, y / n, z / n, w / n
    return np.array(
        [
            [1.0 - 2.0 * (y * y + z * z), 2.0 * (x * y - z * w), 2.0 * (x * z + y * w)],
            [2.0 * (x * y + z * w), 1.0 - 2.0 * (x * x + z * z), 2.0 * (y * z - x * w)],
            [2.0 * (x * z - y * w), 2.0 * (y * z + x * w), 1.0 - 2.0 * (x * x + y * y)],
        ]
    )


@dataclass(frozen=True)
class SceneObject:
    """One rendered object: which unit mesh, where, how big, what colour and material.

    The pose is `rotation` (radians about +z) unless `orientation`, a full (x, y, z, w)
    quaternion, is given.
    """

    index: int  # the object's index in its scene (the mask value)
    shape: str  # cube | sphere | cylinder (see meshes.unit_mesh)
    material: str  # rubber | metal | glass
    color: str
    rgb: tuple[float, float, float]  # linear reflectance 0..1
    location: tuple[float, float, float]  # centre of the object (scene units)
    scale: tuple[float, float, float]  # half extents along the object's axes
    rotation: float  # radians about +z
    radius: float  # footprint radius (scene units)
    orientation: tuple[float, float, float, float] | None = None  # quaternion (x, y, z, w)

    def matrix(self) -> np.ndarray:
        """4x4 model matrix mapping the unit mesh ([-1, 1]^3) to the scene."""
        m = np.eye(4)
        if self.orientation is None:
            c, s = math.cos(self.rotation), math.sin(self.rotation)
            rot = np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])
        else:
            rot = quaternion_matrix(self.orientation)
        m[:3, :3] = rot * np.asarray(self.scale)
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
    """Everything a backend needs to draw one image.

    The raster backend names the three area lights "key" (the one that casts the shadow map),
    "fill" and "back", and the sun "sun".
    """

    objects: tuple[SceneObject, ...]
    camera: tuple[float, float, float]
    lights: tuple[Light, ...]
    width: int
    height: int
    ground_rgb: tuple[float, float, float] = GROUND_RGB
    line_rgb: tuple[float, float, float] = LINE_RGB
    world_strength: float = WORLD_STRENGTH
    #: half size of the square the thin floor lines mark (None: no lines)
    lines_at: float | None = None
    line_half_width: float = LINE_HALF_WIDTH
    backdrop_location: tuple[float, float, float] = CLEVR_BACKDROP_LOCATION
    camera_target: tuple[float, float, float] = (0.0, 0.0, 0.0)
    hfov: float = HFOV

    def floor_lines(self) -> list[np.ndarray]:
        """The four thin quads (4x3 corners each, z = 0.01) marking the square; [] without lines."""
        if self.lines_at is None:
            return []
        a, w, z = self.lines_at, self.line_half_width, 0.01
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
