"""CLEVRER's frames as scenes to render: CLEVR's look, objects placed from one run's arrays.

The look is CLEVR's base scene (github facebookresearch/clevr-dataset-gen,
image_generation/data/base_scene.blend, read with bpy 5.0.1): the grey curved backdrop at CLEVR's
place, its three area lights at their base positions (no per-video jitter: one fixed scene for
the whole dataset, as the camera is), the sun, no light from the world, and CLEVR's colours
(image_generation/data/properties.json) used as linear reflectance, as CLEVR's generator does.
The camera is the world's (`tvr.clevrer.world.camera.CAMERA`), so an object's pixels and the
annotations' `inside_camera_view` come from one projection. Geometry follows CLEVR: a sphere of
radius r, a cylinder of radius r and half height r, a rounded cube of half side r / sqrt(2).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from tvr.clevrer.vocab import COLORS, MATERIALS, SHAPES
from tvr.clevrer.world.camera import CAMERA
from tvr.clevrer.world.config import WorldConfig
from tvr.render import meshes
from tvr.render.camera import PinholeCamera
from tvr.render.colors import CLEVR_COLOR_RGB
from tvr.render.scene import (
    CLEVR_BACKDROP_LOCATION,
    SUN_DIRECTION,
    SUN_STRENGTH,
    Light,
    SceneDescription,
    SceneObject,
)

#: CLEVR's colours (shared with TRANCE: tvr.render.scene)
COLOR_RGB = CLEVR_COLOR_RGB
#: CLEVR's area lights "Lamp_Key", "Lamp_Fill", "Lamp_Back": location, energy (W), edge of the
#: square (m) and colour; each tracks the origin
LIGHTS: dict[str, tuple[tuple[float, float, float], float, float, tuple[float, float, float]]] = {
    "key": (
        (6.446710109710693, -2.905174732208252, 4.258398056030273),
        78.5398178100586,
        0.5,
        (1.0, 0.9323092103004456, 0.8166635632514954),
    ),
    "fill": (
        (-4.671124458312988, -4.01359748840332, 3.0112245082855225),
        23.56194496154785,
        0.5,
        (0.7616661787033081, 0.8177196383476257, 1.0),
    ),
    "back": (
        (-1.168501377105713, 2.646024465560913, 5.815736770629883),
        39.2699089050293,
        1.0,
        (1.0, 1.0, 1.0),
    ),
}
#: the object size of CLEVRER's world (one size for every object)
OBJECT_RADIUS = WorldConfig().object_radius


def scene_lights() -> tuple[Light, ...]:
    """CLEVR's three area lights and its sun."""
    out = [
        Light(name, "area", loc, power, size, color)
        for name, (loc, power, size, color) in LIGHTS.items()
    ]
    out.append(Light("sun", "sun", SUN_DIRECTION, SUN_STRENGTH))
    return tuple(out)


def half_extents(shape: str, radius: float = OBJECT_RADIUS) -> tuple[float, float, float]:
    """Half extents of the unit mesh's scaling for a shape of footprint radius `radius`."""
    half = radius / math.sqrt(2.0) if shape == "cube" else radius
    return (half, half, half)


def _props(obj: Any) -> tuple[str, str, str]:
    """(color, material, shape) of an ObjectProps/ObjectSpec-like object or a dict."""
    if isinstance(obj, dict):
        color, material, shape = obj["color"], obj["material"], obj["shape"]
    else:
        color, material, shape = obj.color, obj.material, obj.shape
    if color not in COLORS or material not in MATERIALS or shape not in SHAPES:
        raise ValueError(f"unknown colour, material or shape: {(color, material, shape)}")
    return color, material, shape


class FrameScenes:
    """Makes the `SceneDescription` of each frame of one run (objects fixed, poses per frame).

    Args:
        objects: per object id, something with color/material/shape (ObjectProps, ObjectSpec,
            or a dict with those keys).
        location: (T, N, 3) object centres; orientation: (T, N, 4) quaternions (x, y, z, w).
        present: (N,) objects to draw (default: all); rows of absent objects are never read.
        camera: the pinhole camera (default: the world's).
        radius: the objects' footprint radius.
    """

    def __init__(
        self,
        objects: Sequence[Any],
        location: np.ndarray,
        orientation: np.ndarray,
        present: np.ndarray | None = None,
        camera: PinholeCamera = CAMERA,
        radius: float = OBJECT_RADIUS,
    ):
        self.location = np.asarray(location, dtype=np.float64)
        self.orientation = np.asarray(orientation, dtype=np.float64)
        n = len(objects)
        if self.location.ndim != 3 or self.location.shape[1:] != (n, 3):
            raise ValueError(f"location: expected (T, {n}, 3), got {self.location.shape}")
        if self.orientation.shape != (*self.location.shape[:2], 4):
            raise ValueError(
                f"orientation: expected {(*self.location.shape[:2], 4)}, "
                f"got {self.orientation.shape}"
            )
        self.present = np.ones(n, bool) if present is None else np.asarray(present, bool)
        self.camera = camera
        self.props = [_props(o) for o in objects]
        self.radius = radius
        self.lights = scene_lights()
        self.n_frames = self.location.shape[0]

    def frame(self, t: int) -> SceneDescription:
        """The scene of frame `t`."""
        placed = []
        for i, (color, material, shape) in enumerate(self.props):
            if not self.present[i]:
                continue
            loc = self.location[t, i]
            quat = self.orientation[t, i]
            if not (np.isfinite(loc).all() and np.isfinite(quat).all()):
                raise ValueError(f"frame {t}: object {i} is present but its pose is not finite")
            placed.append(
                SceneObject(
                    index=i,
                    shape=shape,
                    material=material,
                    color=color,
                    rgb=tuple(c / 255.0 for c in COLOR_RGB[color]),  # type: ignore[arg-type]
                    location=(float(loc[0]), float(loc[1]), float(loc[2])),
                    scale=half_extents(shape, self.radius),
                    rotation=0.0,
                    radius=self.radius,
                    orientation=(float(quat[0]), float(quat[1]), float(quat[2]), float(quat[3])),
                )
            )
        cam = self.camera
        return SceneDescription(
            tuple(placed),
            tuple(float(c) for c in cam.location),  # type: ignore[arg-type]
            self.lights,
            cam.width,
            cam.height,
            backdrop_location=CLEVR_BACKDROP_LOCATION,
            camera_target=tuple(float(c) for c in cam.target),  # type: ignore[arg-type]
            hfov=cam.hfov,
        )


def unit_meshes() -> dict[str, meshes.Mesh]:
    """CLEVRER's unit meshes, coarser than TRANCE's (objects span 25-60 pixels in a 480x320
    frame): a 24 x 12 sphere and a 24-sided cylinder stay within 0.4 px of the true silhouette
    and cost llvmpipe half the time of 48 segments. Both backends draw these, so masks agree."""
    return {
        "cube": meshes.rounded_cube(band_steps=2),
        "sphere": meshes.uv_sphere(24, 12),
        "cylinder": meshes.cylinder(24),
    }
