"""TRANCE's scenes for the renderers: samples to `tvr.render.scene.SceneDescription`s.

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
from typing import Any

from tvr.render.scene import (
    GROUND_RGB,
    SUN_DIRECTION,
    SUN_STRENGTH,
    WORLD_STRENGTH,
    Light,
    SceneDescription,
    SceneObject,
)
from tvr.trance.data.sample import Sample, image_name
from tvr.trance.world import vocab
from tvr.trance.world.camera import CAMERA_BASE, IMAGE_HEIGHT, IMAGE_WIDTH, LIGHT_BASE

# The look of the public release: values read with bpy from github hughplay/TVR,
# trance/resource/base_scene.blend (objects "Lamp_Key", "Lamp_Fill", "Lamp_Back", "Ground",
# "Line_*") and trance/resource/materials/*.blend. The rest of the base scene (sun, world, the
# backdrop's shape, the ground's colour) is CLEVR's, shared in `tvr.render.scene`. tvr builds the
# scene itself; the .blend files are never loaded.

#: the thin lines that mark the visible square: "Line_*" use "Material", whose colour
#: (diffuse_color) is 0.8. Its node tree holds a black Diffuse BSDF, but the release's images show
#: the lines 2-4 levels lighter than the floor, not dark: the release (Blender 2.79) rendered the
#: material without its nodes, from that colour
LINE_RGB = (0.8, 0.8, 0.8)
#: where the lines run (half width: `tvr.render.scene.LINE_HALF_WIDTH`, planes of 6 x 0.012)
LINE_AT = vocab.VISIBLE_MAX * vocab.GRID_UNIT
#: area lights: energy (W), edge of the square (m) and colour of "Lamp_Key", "Lamp_Fill",
#: "Lamp_Back" (each tracks the origin, as ours do)
LIGHT_POWER = {"key": 98.17477416992188, "fill": 39.2699089050293, "back": 117.80972290039062}
LIGHT_SIZE = {"key": 0.5, "fill": 0.5, "back": 1.0}
LIGHT_COLOR = {
    "key": (1.0, 0.9323092103004456, 0.8166635632514954),
    "fill": (0.7616661787033081, 0.8177196383476257, 1.0),
    "back": (1.0, 1.0, 1.0),
}
#: the release's "Ground" (CLEVR's curved backdrop) stands 3 units further along -x than CLEVR's
BACKDROP_LOCATION = (-27.06279945373535, -17.996700286865234, 0.0)


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
    return SceneDescription(
        placed,
        _xyz(camera),
        scene_lights(lights),
        IMAGE_WIDTH,
        IMAGE_HEIGHT,
        ground_rgb=GROUND_RGB,
        line_rgb=LINE_RGB,
        world_strength=WORLD_STRENGTH,
        lines_at=LINE_AT,
        backdrop_location=BACKDROP_LOCATION,
    )


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
