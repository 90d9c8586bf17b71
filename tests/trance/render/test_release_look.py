"""The Cycles scene carries the public release's look: lights, world, materials, floor, cube.

Expected numbers are the ones read with bpy from github hughplay/TVR trance/resource/*.blend,
typed here (not imported from the code), and compared with what the bpy scene we build holds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tvr.trance.render import meshes
from tvr.trance.render.scene import sample_views

# base_scene.blend: energy (W), size (m), colour of each area lamp
RELEASE_LAMPS = {
    "key": (98.17477, 0.5, (1.0, 0.93231, 0.81666)),
    "fill": (39.26991, 0.5, (0.76167, 0.81772, 1.0)),
    "back": (117.80972, 1.0, (1.0, 1.0, 1.0)),
}


@pytest.fixture(scope="module")
def cycles_scene(sample):
    pytest.importorskip("bpy")
    from tvr.trance.render import make_renderer

    renderer = make_renderer("cycles", "preview")
    renderer.set_scene(sample_views(sample)[0][1])
    renderer.bpy.context.view_layer.update()  # object matrices
    yield renderer
    renderer.close()


def _nodes(mat, kind):
    return [n for n in mat.node_tree.nodes if n.bl_idname == kind]


def _material(renderer, material):
    for ob in renderer.scene.objects:
        if ob.material_slots and ob.material_slots[0].material is not None:
            mat = ob.material_slots[0].material
            if mat.name.startswith(material + "-"):
                return mat
    raise AssertionError(f"no {material} object in the scene")


def test_area_lights_are_the_releases(cycles_scene):
    for name, (energy, size, color) in RELEASE_LAMPS.items():
        light = cycles_scene.scene.objects[name].data
        assert light.type == "AREA" and light.shape == "SQUARE"
        assert light.energy == pytest.approx(energy, rel=1e-5)
        assert light.size == pytest.approx(size)
        assert tuple(light.color) == pytest.approx(color, abs=1e-4)


def test_sun_and_world_are_the_releases(cycles_scene):
    sun = cycles_scene.scene.objects["sun"]
    assert sun.data.type == "SUN"
    assert sun.data.energy == pytest.approx(0.45, abs=1e-6)
    assert math.degrees(sun.data.angle) == pytest.approx(11.42, abs=0.01)
    rot = [math.degrees(a) for a in sun.matrix_world.to_euler("XYZ")]
    assert rot == pytest.approx([13.52, 23.89, 5.56], abs=0.01)
    background = cycles_scene.scene.world.node_tree.nodes["Background"]
    cycles_scene._apply_color_settings()  # the strength the colour pass renders with
    assert background.inputs["Strength"].default_value == 0.0
    c = cycles_scene.scene.cycles
    assert c.caustics_reflective and c.caustics_refractive


def test_glass_is_sharp_and_clear_to_diffuse_rays(cycles_scene):
    mat = _material(cycles_scene, "glass")
    (glass,) = _nodes(mat, "ShaderNodeBsdfGlass")
    assert glass.inputs["Roughness"].default_value == 0.0
    assert glass.inputs["IOR"].default_value == pytest.approx(1.45)
    assert len(_nodes(mat, "ShaderNodeBsdfTransparent")) == 1
    assert not _nodes(mat, "ShaderNodeBsdfPrincipled")
    factors = {
        link.from_socket.name
        for link in mat.node_tree.links
        if link.from_node.bl_idname == "ShaderNodeLightPath"
    }
    assert factors == {"Is Diffuse Ray", "Is Shadow Ray"}


def test_rubber_is_diffuse_velvet_and_beckmann_gloss(cycles_scene):
    mat = _material(cycles_scene, "rubber")
    (velvet,) = _nodes(mat, "ShaderNodeBsdfSheen")
    assert velvet.distribution == "ASHIKHMIN"
    assert velvet.inputs["Roughness"].default_value == pytest.approx(0.6)
    (gloss,) = _nodes(mat, "ShaderNodeBsdfAnisotropic")
    assert gloss.distribution == "BECKMANN"
    assert gloss.inputs["Roughness"].default_value == pytest.approx(math.sqrt(0.35), abs=1e-6)
    iors = sorted(n.inputs["IOR"].default_value for n in _nodes(mat, "ShaderNodeFresnel"))
    assert iors == pytest.approx([1.2, 1.4])
    assert len(_nodes(mat, "ShaderNodeBsdfDiffuse")) == 1


def test_metal_mixes_two_anisotropic_ggx_lobes(cycles_scene):
    mat = _material(cycles_scene, "metal")
    lobes = _nodes(mat, "ShaderNodeBsdfAnisotropic")
    assert {n.distribution for n in lobes} == {"GGX"}
    rough = sorted(n.inputs["Roughness"].default_value for n in lobes)
    assert rough == pytest.approx([0.1, 0.4472], abs=1e-4)
    assert [n.inputs["Anisotropy"].default_value for n in lobes] == pytest.approx([0.25, 0.25])
    (mix,) = _nodes(mat, "ShaderNodeMixShader")
    assert mix.inputs[0].default_value == pytest.approx(0.6)
    # the 0.6 weight goes to the sharp lobe (the mix's second input)
    second = next(link.from_node for link in mat.node_tree.links if link.to_socket == mix.inputs[2])
    assert second.inputs["Roughness"].default_value == pytest.approx(0.1)


def test_floor_is_the_curved_backdrop_with_thin_lines(cycles_scene):
    ground = cycles_scene.scene.objects["ground"]
    verts = np.array([tuple(ground.matrix_world @ v.co) for v in ground.data.vertices])
    # base_scene.blend "Ground" (before its Subdivision Surface): bounds in world coordinates
    assert verts.min(0) == pytest.approx([-30.749, -28.107, 0.0], abs=2e-3)
    assert verts.max(0) == pytest.approx([18.456, 34.773, 23.215], abs=2e-3)
    (sub,) = ground.modifiers
    assert sub.type == "SUBSURF" and sub.render_levels == 2
    (diffuse,) = _nodes(ground.material_slots[0].material, "ShaderNodeBsdfDiffuse")
    assert tuple(diffuse.inputs["Color"].default_value)[:3] == pytest.approx((0.8, 0.8, 0.8))
    lines = cycles_scene.scene.objects["floor_lines"]
    pts = np.array([tuple(v.co) for v in lines.data.vertices])
    assert set(np.round(pts[:, 2], 6)) == {0.01}
    widths = sorted(
        {round(float(w), 6) for w in np.ptp(pts.reshape(-1, 4, 3), axis=1)[:, :2].min(1)}
    )
    assert widths == [0.012]


def test_cube_flat_faces_end_where_the_releases_do():
    m = meshes.unit_mesh("cube")
    flat = m.vertices[m.normals[:, 0] > 1 - 1e-6]
    assert np.abs(flat[:, 1]).max() == pytest.approx(0.7684, abs=1e-3)
    assert np.abs(flat[:, 2]).max() == pytest.approx(0.7684, abs=1e-3)
