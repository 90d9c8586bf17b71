"""Unit triangle meshes of CLEVR's three shapes, shared by every renderer so silhouettes agree.

Each mesh fills the box [-1, 1]^3 and is centred on the origin; `scene.SceneObject.matrix` scales,
rotates and places it. Vertices carry smooth normals (float32 (n, 3) arrays), faces are
counter-clockwise seen from outside (int32 (m, 3)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

import numpy as np

#: bevel radius of the rounded cube, as a share of its half side: mesh "SmoothCube_v2" of CLEVR
#: (github facebookresearch/clevr-dataset-gen image_generation/data/shapes/SmoothCube_v2.blend) and
#: of TRANCE's release (hughplay/TVR trance/resource/shapes/) ends its flat faces at +-0.7684396 of
#: the half side (vertices within 1e-4 of the face plane, read with bpy)
CUBE_BEVEL = 1.0 - 0.7684396
SPHERE_SEGMENTS = 48
SPHERE_RINGS = 24
CYLINDER_SEGMENTS = 48


@dataclass(frozen=True)
class Mesh:
    """A triangle mesh: vertex positions, per-vertex normals and triangles."""

    vertices: np.ndarray
    normals: np.ndarray
    faces: np.ndarray

    def triangles(self) -> tuple[np.ndarray, np.ndarray]:
        """Positions and normals of the triangle corners, (3m, 3) each, for drawing unindexed."""
        idx = self.faces.reshape(-1)
        return self.vertices[idx], self.normals[idx]


def _dedupe(vertices: np.ndarray, normals: np.ndarray, faces: np.ndarray) -> Mesh:
    """Merge coincident vertices (same position and normal) so the mesh is watertight."""
    key = np.round(np.concatenate([vertices, normals], axis=1), 6)
    _, first, inverse = np.unique(key, axis=0, return_index=True, return_inverse=True)
    faces = inverse.reshape(-1)[faces]
    keep = ~(
        (faces[:, 0] == faces[:, 1]) | (faces[:, 1] == faces[:, 2]) | (faces[:, 0] == faces[:, 2])
    )
    return Mesh(
        vertices[first].astype(np.float32),
        normals[first].astype(np.float32),
        faces[keep].astype(np.int32),
    )


def _grid_faces(n_u: int, n_v: int, offset: int, flip: bool = False) -> np.ndarray:
    """Two triangles per cell of an n_u x n_v vertex grid stored row by row from `offset`."""
    i, j = np.meshgrid(np.arange(n_u - 1), np.arange(n_v - 1), indexing="ij")
    a = offset + i * n_v + j
    b, c, d = a + n_v, a + n_v + 1, a + 1
    tris = np.concatenate(
        [np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)]
    )
    return tris[:, ::-1] if flip else tris


@cache
def rounded_cube(bevel: float = CUBE_BEVEL, band_steps: int = 4) -> Mesh:
    """A cube of half side 1 whose edges and corners are rounded with radius `bevel`.

    Every point of a face grid is pulled onto the rounded box: clamp it to the inner box of half
    side 1 - bevel and push it `bevel` away from the clamped point, along the offset direction,
    which is also the exact normal there."""
    inner = 1.0 - bevel
    band = np.linspace(inner, 1.0, band_steps + 1)
    s = np.concatenate([-band[::-1], band])  # face coordinates, dense near the edges
    n = len(s)
    uu, vv = np.meshgrid(s, s, indexing="ij")
    verts, faces = [], []
    for axis in range(3):
        for sign in (-1.0, 1.0):
            p = np.empty((n, n, 3))
            p[..., axis] = sign
            p[..., (axis + 1) % 3] = uu
            p[..., (axis + 2) % 3] = vv
            p = p.reshape(-1, 3)
            c = np.clip(p, -inner, inner)
            d = p - c
            d /= np.linalg.norm(d, axis=1, keepdims=True)
            offset = sum(len(v) for v in verts)
            verts.append(c + bevel * d)
            faces.append(_grid_faces(n, n, offset, flip=sign < 0))
    v = np.concatenate(verts)
    nrm = (v - np.clip(v, -inner, inner)) / bevel
    return _dedupe(v, nrm, np.concatenate(faces))


@cache
def uv_sphere(segments: int = SPHERE_SEGMENTS, rings: int = SPHERE_RINGS) -> Mesh:
    """A sphere of radius 1 (poles on the z axis)."""
    theta = np.linspace(0.0, math.pi, rings + 1)  # from the north pole down
    phi = np.linspace(0.0, 2.0 * math.pi, segments + 1)
    t, p = np.meshgrid(theta, phi, indexing="ij")
    v = np.stack([np.sin(t) * np.cos(p), np.sin(t) * np.sin(p), np.cos(t)], -1).reshape(-1, 3)
    v[np.abs(v) < 1e-12] = 0.0
    faces = _grid_faces(rings + 1, segments + 1, 0)
    return _dedupe(v, v.copy(), faces)


@cache
def cylinder(segments: int = CYLINDER_SEGMENTS) -> Mesh:
    """A cylinder of radius 1 from z = -1 to z = 1 with flat caps and sharp rims."""
    phi = np.linspace(0.0, 2.0 * math.pi, segments + 1)
    ring = np.stack([np.cos(phi), np.sin(phi), np.zeros_like(phi)], -1)
    ring[np.abs(ring) < 1e-12] = 0.0
    side = np.concatenate([ring + np.array([0.0, 0.0, -1.0]), ring + np.array([0.0, 0.0, 1.0])])
    side_n = np.concatenate([ring, ring])
    m = segments + 1
    side_f = _grid_faces(2, m, 0, flip=True)
    verts, norms, faces = [side], [side_n], [side_f]
    offset = len(side)
    for z in (-1.0, 1.0):
        cap = np.concatenate([[[0.0, 0.0, z]], ring[:-1] + np.array([0.0, 0.0, z])])
        centre = offset
        k = np.arange(segments)
        a = offset + 1 + k
        b = offset + 1 + (k + 1) % segments
        tri = np.stack([np.full(segments, centre), a, b], -1)
        faces.append(tri if z > 0 else tri[:, ::-1])
        verts.append(cap)
        norms.append(np.tile([0.0, 0.0, z], (len(cap), 1)))
        offset += len(cap)
    return _dedupe(np.concatenate(verts), np.concatenate(norms), np.concatenate(faces))


def unit_mesh(shape: str) -> Mesh:
    """The unit mesh of a shape name: cube, sphere or cylinder."""
    if shape == "cube":
        return rounded_cube()
    if shape == "sphere":
        return uv_sphere()
    if shape == "cylinder":
        return cylinder()
    raise ValueError(f"unknown shape {shape!r}: expected cube, sphere or cylinder")
