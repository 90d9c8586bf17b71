"""TRANCE's unit meshes: CLEVR's three shapes of the shared layer (`tvr.render.meshes`)."""

from tvr.render.meshes import (
    CUBE_BEVEL,
    CYLINDER_SEGMENTS,
    SPHERE_RINGS,
    SPHERE_SEGMENTS,
    Mesh,
    cylinder,
    rounded_cube,
    unit_mesh,
    uv_sphere,
)

__all__ = [
    "CUBE_BEVEL",
    "CYLINDER_SEGMENTS",
    "SPHERE_RINGS",
    "SPHERE_SEGMENTS",
    "Mesh",
    "cylinder",
    "rounded_cube",
    "unit_mesh",
    "uv_sphere",
]
