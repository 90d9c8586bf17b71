"""Path-traced images of a `SceneDescription` with Blender Cycles through `bpy` (CPU, or a GPU).

The scene is built in Python with no .blend assets: CLEVR's curved backdrop, optional floor
lines, the shared unit meshes of `meshes.py`, CLEVR's rubber and metal node graphs and TRANCE's
release's glass (values read from their .blend files, kept here as constants), the camera and the
lights of a `SceneDescription`. One `CyclesRenderer` keeps one bpy scene per process and swaps
only the objects between images, since importing bpy and building the scene is slow.

The object-index mask comes from a second render of the same scene with a material override:
every object emits its index + 1 as flat light (the ground emits 0), one sample per pixel taken at
the pixel centre (box filter of width 0.01), written to a float EXR and read back exactly.
"""

from __future__ import annotations

import contextlib
import math
import os
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from tvr.core.banners import dropped_lines
from tvr.render import meshes
from tvr.render.camera import HFOV, LENS_MM, SENSOR_MM
from tvr.render.presets import Preset
from tvr.render.scene import (
    BACKDROP_ANGLE_DEG,
    BACKDROP_DEPTH,
    BACKDROP_PROFILE,
    BACKDROP_SUBDIVISIONS,
    GLASS_IOR,
    SUN_ANGLE_DEG,
    SUN_ROTATION_DEG,
    SceneDescription,
)

# Material node values, read with bpy from CLEVR's image_generation/data/materials/{Rubber,MyMetal}
# .blend (github facebookresearch/clevr-dataset-gen) and TRANCE's release (github hughplay/TVR
# trance/resource/materials/{Rubber,Metal,Glass}.blend): node groups with their interface defaults,
# which both generators keep (they set only "Color"). Rubber and metal are the same in both.
#: "Rubber" group: IOR 1.2, Roughness 0.35; Fresnel (IOR + 0.2) mixes Diffuse BSDF (roughness 0)
#: with a Velvet BSDF (sigma 0.6); Fresnel (IOR) mixes that with a Beckmann Glossy BSDF of colour
#: 0.8 and roughness sqrt(Roughness)
RUBBER_IOR = 1.2
RUBBER_ROUGHNESS = 0.35
RUBBER_SHEEN_IOR_OFFSET = 0.2
RUBBER_VELVET_SIGMA = 0.6
RUBBER_GLOSS_RGB = (0.8, 0.8, 0.8)
#: "Metal" group: Mix Shader (factor 0.6) of two GGX Anisotropic BSDFs in the object's colour,
#: roughness 0.4472 (first input) and 0.1 (second input), anisotropy 0.25 each
METAL_MIX = 0.6
METAL_ROUGHNESS = (0.4472135901451111, 0.10000000149011612)
METAL_ANISOTROPY = 0.25
#: "Glass" group: Roughness 0 (the Glass BSDF gets sqrt of it: sharp), IOR 1.45; diffuse rays
#: see a Transparent BSDF of the colour, shadow rays the group's empty second Mix input
GLASS_ROUGHNESS = 0.0

_BPY: Any = None

#: what Cycles prints (to file descriptor 1, from C) when it probes for GPU libraries that the
#: machine lacks: "00:01.635  cycles | WARNING CUEW initialization failed: Error opening the
#: library", the same for HIPEW (AMD) and the other "*EW" loaders (issue 41, point 5)
CYCLES_GPU_PROBE = r"\b[A-Z]+EW initialization failed\b"


def _bpy() -> Any:
    """Import bpy once (slow; what it prints, less the GPU probe lines, still shows)."""
    global _BPY
    if _BPY is None:
        with dropped_lines(CYCLES_GPU_PROBE):
            import bpy

        _BPY = bpy
    return _BPY


@contextlib.contextmanager
def _quiet_stdout(quiet: bool):
    """Silence Blender's per-render log lines (written by C code to file descriptor 1)."""
    if not quiet:
        yield
        return
    sys.stdout.flush()
    saved = os.dup(1)
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, 1)
        yield
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(devnull)


def _use_nodes(datablock: Any) -> None:
    """Give a material or world its node tree (Blender 5 always has one; older ones need a flag)."""
    if datablock.node_tree is None:
        datablock.use_nodes = True


def _track_quat(location: tuple[float, float, float], target=(0.0, 0.0, 0.0)) -> Any:
    """Rotation that points an object's -Z axis from `location` at `target`, +Y up towards +Z."""
    from mathutils import Vector

    return (Vector(target) - Vector(location)).to_track_quat("-Z", "Y")


def _mix(nt: Any, factor: Any, first: Any, second: Any | None) -> Any:
    """Mix Shader node: `factor` (a socket or a number), `first` at 0, `second` at 1."""
    mix = nt.nodes.new("ShaderNodeMixShader")
    if isinstance(factor, float):
        mix.inputs[0].default_value = factor
    else:
        nt.links.new(factor, mix.inputs[0])
    nt.links.new(first, mix.inputs[1])
    if second is not None:
        nt.links.new(second, mix.inputs[2])
    return mix.outputs[0]


def _fresnel(nt: Any, ior: float) -> Any:
    node = nt.nodes.new("ShaderNodeFresnel")
    node.inputs["IOR"].default_value = ior
    return node.outputs[0]


def _rubber(nt: Any, rgba: tuple[float, ...]) -> Any:
    """The release's "Rubber": diffuse + velvet sheen at grazing angles, then Beckmann gloss."""
    diffuse = nt.nodes.new("ShaderNodeBsdfDiffuse")
    diffuse.inputs["Color"].default_value = rgba
    diffuse.inputs["Roughness"].default_value = 0.0
    velvet = nt.nodes.new("ShaderNodeBsdfSheen")
    velvet.distribution = "ASHIKHMIN"
    velvet.inputs["Color"].default_value = rgba
    velvet.inputs["Roughness"].default_value = RUBBER_VELVET_SIGMA
    gloss = nt.nodes.new("ShaderNodeBsdfAnisotropic")
    gloss.distribution = "BECKMANN"
    gloss.inputs["Color"].default_value = (*RUBBER_GLOSS_RGB, 1.0)
    gloss.inputs["Roughness"].default_value = math.sqrt(RUBBER_ROUGHNESS)
    gloss.inputs["Anisotropy"].default_value = 0.0
    body = _mix(
        nt,
        _fresnel(nt, RUBBER_IOR + RUBBER_SHEEN_IOR_OFFSET),
        diffuse.outputs[0],
        velvet.outputs[0],
    )
    return _mix(nt, _fresnel(nt, RUBBER_IOR), body, gloss.outputs[0])


def _metal(nt: Any, rgba: tuple[float, ...]) -> Any:
    """The release's "Metal": two anisotropic GGX lobes in the object's colour."""
    lobes = []
    for roughness in METAL_ROUGHNESS:
        lobe = nt.nodes.new("ShaderNodeBsdfAnisotropic")
        lobe.distribution = "GGX"
        lobe.inputs["Color"].default_value = rgba
        lobe.inputs["Roughness"].default_value = roughness
        lobe.inputs["Anisotropy"].default_value = METAL_ANISOTROPY
        lobes.append(lobe.outputs[0])
    return _mix(nt, METAL_MIX, lobes[0], lobes[1])


def _glass(nt: Any, rgba: tuple[float, ...]) -> Any:
    """The release's "Glass": sharp glass for camera and glossy rays, transparent to diffuse rays.

    Shadow rays get the group's unlinked second Mix input (no closure), as in the release.
    """
    glass = nt.nodes.new("ShaderNodeBsdfGlass")
    glass.distribution = "BECKMANN"
    glass.inputs["Color"].default_value = rgba
    glass.inputs["Roughness"].default_value = math.sqrt(GLASS_ROUGHNESS)
    glass.inputs["IOR"].default_value = GLASS_IOR
    clear = nt.nodes.new("ShaderNodeBsdfTransparent")
    clear.inputs["Color"].default_value = rgba
    path = nt.nodes.new("ShaderNodeLightPath")
    seen = _mix(nt, path.outputs["Is Diffuse Ray"], glass.outputs[0], clear.outputs[0])
    return _mix(nt, path.outputs["Is Shadow Ray"], seen, None)


class CyclesRenderer:
    """Renders `SceneDescription`s with Cycles. Build one per process and reuse it.

    Args:
        preset: the quality preset (samples, bounces, denoising, filter glossy).
        device: "auto" (a GPU if Cycles finds one), "cpu" or "gpu".
        threads: CPU threads (0: Blender's choice).
        quiet: silence Blender's per-render log.
        shapes: shape name -> unit mesh (default: `meshes.unit_mesh` of cube, sphere, cylinder).
        reuse_objects: when a scene has the same objects (index, shape, material, colour) as the
            one before, move them instead of making them again (frames of a video).
    """

    backend = "cycles"

    def __init__(
        self,
        preset: Preset,
        device: str = "auto",
        threads: int = 0,
        quiet: bool = True,
        shapes: Mapping[str, meshes.Mesh] | None = None,
        reuse_objects: bool = False,
    ):
        self.preset = preset
        self.quiet = quiet
        self._shapes = dict(shapes) if shapes is not None else None
        self._reuse = reuse_objects
        self._object_keys: list[tuple] = []
        bpy = _bpy()
        bpy.ops.wm.read_factory_settings(use_empty=True)
        self.bpy = bpy
        self.scene = bpy.context.scene
        self._tmp = tempfile.TemporaryDirectory(prefix="tvr-cycles-")
        self._objects: list[Any] = []
        self._materials: dict[tuple[str, str], Any] = {}
        self._meshes: dict[str, Any] = {}
        self.device = self._setup_device(device)
        self._setup_render(threads)
        self._setup_world()
        self._setup_floor()
        self._setup_camera()
        self._lights: dict[str, Any] = {}
        self._mask_material = self._make_mask_material()

    # --- setup ---------------------------------------------------------------------------------
    def _setup_device(self, device: str) -> str:
        cycles = self.scene.cycles
        cycles.device = "CPU"
        if device == "cpu":
            return "CPU"
        prefs = self.bpy.context.preferences.addons["cycles"].preferences
        # the first probe prints a line per GPU library the machine lacks: dropped
        with dropped_lines(CYCLES_GPU_PROBE):
            for kind in ("OPTIX", "CUDA", "HIP", "ONEAPI", "METAL"):
                try:
                    prefs.compute_device_type = kind
                    prefs.get_devices()
                except (TypeError, ValueError):
                    continue
                gpus = [d for d in prefs.devices if d.type == kind]
                if gpus:
                    for d in prefs.devices:
                        d.use = d.type == kind
                    cycles.device = "GPU"
                    return kind
        if device == "gpu":
            raise RuntimeError("no GPU device found for Cycles")
        prefs.compute_device_type = "NONE"
        return "CPU"

    def _setup_render(self, threads: int) -> None:
        r = self.scene.render
        r.engine = "CYCLES"
        r.resolution_percentage = 100
        r.use_persistent_data = False
        r.dither_intensity = 0.0
        r.film_transparent = False
        if threads > 0:
            r.threads_mode = "FIXED"
            r.threads = threads
        else:
            r.threads_mode = "AUTO"
        vs = self.scene.view_settings
        vs.view_transform = "Standard"
        vs.look = "None"
        vs.exposure = 0.0
        vs.gamma = 1.0
        self.scene.display_settings.display_device = "sRGB"
        self.scene.sequencer_colorspace_settings.name = "sRGB"
        c = self.scene.cycles
        c.seed = 0
        c.use_animated_seed = False
        c.use_adaptive_sampling = False
        # base_scene.blend: both caustics on (light reaches the floor under glass through them)
        c.caustics_reflective = True
        c.caustics_refractive = True
        c.min_light_bounces = 0
        c.min_transparent_bounces = 0

    def _apply_color_settings(self) -> None:
        p, c, r = self.preset, self.scene.cycles, self.scene.render
        c.samples = p.samples
        c.max_bounces = p.max_bounces
        c.diffuse_bounces = p.max_bounces
        c.glossy_bounces = p.max_bounces
        c.transmission_bounces = p.max_bounces
        c.volume_bounces = 0
        c.transparent_max_bounces = p.transparent_bounces
        c.blur_glossy = p.blur_glossy
        c.use_denoising = p.denoise
        if p.denoise:
            c.denoiser = "OPENIMAGEDENOISE"
            c.denoising_input_passes = "RGB"
            c.denoising_prefilter = "NONE"
        c.pixel_filter_type = "BLACKMAN_HARRIS"
        c.filter_width = 1.5
        self.scene.world.node_tree.nodes["Background"].inputs[
            1
        ].default_value = self._world_strength
        self.scene.view_layers[0].material_override = None
        s = r.image_settings
        s.file_format = "PNG"
        s.color_mode = "RGB"
        s.color_depth = "8"
        s.compression = 15

    def _apply_mask_settings(self) -> None:
        c, r = self.scene.cycles, self.scene.render
        c.samples = 1
        c.max_bounces = 0
        c.transparent_max_bounces = 0
        c.use_denoising = False
        c.pixel_filter_type = "BOX"
        c.filter_width = 0.01
        self.scene.world.node_tree.nodes["Background"].inputs[1].default_value = 0.0
        self.scene.view_layers[0].material_override = self._mask_material
        s = r.image_settings
        s.file_format = "OPEN_EXR"
        s.color_mode = "RGB"
        s.color_depth = "32"
        s.exr_codec = "NONE"

    def _setup_world(self) -> None:
        bpy = self.bpy
        world = bpy.data.worlds.new("World")
        _use_nodes(world)
        bg = world.node_tree.nodes["Background"]
        bg.inputs[0].default_value = (0.0509, 0.0509, 0.0509, 1.0)  # base_scene.blend "World"
        self._world_strength = 0.0
        self.scene.world = world

    def _diffuse(self, name: str) -> tuple[Any, Any]:
        """A material of one Diffuse BSDF (roughness 0), like Cycles' default surface."""
        mat = self.bpy.data.materials.new(name)
        _use_nodes(mat)
        nt = mat.node_tree
        for n in list(nt.nodes):
            if n.bl_idname != "ShaderNodeOutputMaterial":
                nt.nodes.remove(n)
        bsdf = nt.nodes.new("ShaderNodeBsdfDiffuse")
        bsdf.inputs["Roughness"].default_value = 0.0
        nt.links.new(bsdf.outputs[0], nt.nodes["Material Output"].inputs["Surface"])
        return mat, bsdf

    def _setup_floor(self) -> None:
        """The release's curved backdrop (a profile extruded along y, subdivided) and the lines."""
        bpy = self.bpy
        n = len(BACKDROP_PROFILE)
        verts = [(x, 0.0, z) for x, z in BACKDROP_PROFILE]
        verts += [(x, -BACKDROP_DEPTH, z) for x, z in BACKDROP_PROFILE]
        faces = [(i, i + 1, n + i + 1, n + i) for i in range(n - 1)]
        me = bpy.data.meshes.new("ground")
        me.from_pydata(verts, [], faces)
        self._ground_mat, self._ground_bsdf = self._diffuse("ground")
        me.materials.append(self._ground_mat)
        ob = bpy.data.objects.new("ground", me)
        ob.rotation_euler = (0.0, 0.0, math.radians(BACKDROP_ANGLE_DEG))
        sub = ob.modifiers.new("subdivision", "SUBSURF")
        sub.levels = sub.render_levels = BACKDROP_SUBDIVISIONS
        ob.pass_index = 0
        self.scene.collection.objects.link(ob)
        self._ground = ob
        self._lines_mesh = bpy.data.meshes.new("floor_lines")
        self._lines_mat, self._lines_bsdf = self._diffuse("floor_lines")
        self._lines_obj = None

    def _set_floor(self, desc: SceneDescription) -> None:
        self._ground.location = desc.backdrop_location
        self._ground_bsdf.inputs["Color"].default_value = (*desc.ground_rgb, 1.0)
        self._lines_bsdf.inputs["Color"].default_value = (*desc.line_rgb, 1.0)
        quads = desc.floor_lines()
        if self._lines_obj is None and quads:
            verts = [tuple(p) for q in quads for p in q]
            faces = [tuple(range(4 * i, 4 * i + 4)) for i in range(len(quads))]
            self._lines_mesh.from_pydata(verts, [], faces)
            self._lines_mesh.materials.append(self._lines_mat)
            self._lines_obj = self.bpy.data.objects.new("floor_lines", self._lines_mesh)
            self._lines_obj.pass_index = 0
            self.scene.collection.objects.link(self._lines_obj)

    def _setup_camera(self) -> None:
        bpy = self.bpy
        cam = bpy.data.cameras.new("camera")
        cam.lens = LENS_MM
        cam.sensor_width = SENSOR_MM
        cam.sensor_fit = "HORIZONTAL"
        cam.clip_start = 0.1
        cam.clip_end = 500.0
        ob = bpy.data.objects.new("camera", cam)
        self.scene.collection.objects.link(ob)
        self.scene.camera = ob
        self._camera = ob

    def _set_lights(self, desc: SceneDescription) -> None:
        bpy = self.bpy
        for light in desc.lights:
            ob = self._lights.get(light.name)
            if ob is None:
                data = bpy.data.lights.new(light.name, "SUN" if light.kind == "sun" else "AREA")
                ob = bpy.data.objects.new(light.name, data)
                self.scene.collection.objects.link(ob)
                self._lights[light.name] = ob
            ob.rotation_mode = "QUATERNION"
            if light.kind == "sun":
                ob.location = tuple(10.0 * c for c in light.location)
                ob.rotation_mode = "XYZ"
                ob.rotation_euler = tuple(math.radians(a) for a in SUN_ROTATION_DEG)
                ob.data.energy = light.power
                ob.data.angle = math.radians(SUN_ANGLE_DEG)
            else:
                ob.location = light.location
                ob.rotation_quaternion = _track_quat(light.location)
                ob.data.energy = light.power
                ob.data.shape = "SQUARE"
                ob.data.size = light.size
            ob.data.color = light.color
            if hasattr(ob, "visible_camera"):
                ob.visible_camera = False
        self._world_strength = desc.world_strength

    def _make_mask_material(self) -> Any:
        """Emission = (pass_index, 0, 0): the object's index + 1, 0 for the floor."""
        mat = self.bpy.data.materials.new("mask")
        _use_nodes(mat)
        nt = mat.node_tree
        for n in list(nt.nodes):
            nt.nodes.remove(n)
        info = nt.nodes.new("ShaderNodeObjectInfo")
        comb = nt.nodes.new("ShaderNodeCombineColor")
        emit = nt.nodes.new("ShaderNodeEmission")
        out = nt.nodes.new("ShaderNodeOutputMaterial")
        nt.links.new(info.outputs["Object Index"], comb.inputs[0])
        nt.links.new(comb.outputs[0], emit.inputs["Color"])
        emit.inputs["Strength"].default_value = 1.0
        nt.links.new(emit.outputs[0], out.inputs["Surface"])
        return mat

    # --- objects -------------------------------------------------------------------------------
    def _mesh(self, shape: str) -> Any:
        me = self._meshes.get(shape)
        if me is None:
            m = self._shapes[shape] if self._shapes is not None else meshes.unit_mesh(shape)
            me = self.bpy.data.meshes.new(shape)
            me.from_pydata(m.vertices.tolist(), [], m.faces.tolist())
            me.update()
            me.shade_smooth()
            me.normals_split_custom_set_from_vertices(m.normals.tolist())
            me.materials.append(None)
            self._meshes[shape] = me
        return me

    def _material(self, material: str, rgb: tuple[float, float, float], color: str) -> Any:
        key = (material, color)
        mat = self._materials.get(key)
        if mat is None:
            mat = self.bpy.data.materials.new(f"{material}-{color}")
            _use_nodes(mat)
            nt = mat.node_tree
            for n in list(nt.nodes):
                if n.bl_idname != "ShaderNodeOutputMaterial":
                    nt.nodes.remove(n)
            build = {"rubber": _rubber, "metal": _metal}.get(material, _glass)
            shader = build(nt, (*rgb, 1.0))
            nt.links.new(shader, nt.nodes["Material Output"].inputs["Surface"])
            self._materials[key] = mat
        return mat

    def _set_objects(self, desc: SceneDescription) -> None:
        from mathutils import Matrix

        objects = self.bpy.data.objects
        keys = [(o.index, o.shape, o.material, o.color) for o in desc.objects]
        if self._reuse and keys == self._object_keys:
            for ob, o in zip(self._objects, desc.objects, strict=True):
                ob.matrix_world = Matrix(o.matrix().tolist())
            return
        self._object_keys = keys
        for ob in self._objects:
            objects.remove(ob, do_unlink=True)
        self._objects = []
        for o in desc.objects:
            ob = objects.new(f"object{o.index}", self._mesh(o.shape))
            ob.matrix_world = Matrix(o.matrix().tolist())
            ob.pass_index = o.index + 1
            slot = ob.material_slots[0]
            slot.link = "OBJECT"
            slot.material = self._material(o.material, o.rgb, o.color)
            self.scene.collection.objects.link(ob)
            self._objects.append(ob)

    def set_scene(self, desc: SceneDescription) -> None:
        """Make the bpy scene show `desc` (objects, camera, lights, floor)."""
        r = self.scene.render
        r.resolution_x, r.resolution_y = desc.width, desc.height
        self._camera.location = desc.camera
        self._camera.rotation_mode = "QUATERNION"
        self._camera.rotation_quaternion = _track_quat(desc.camera, desc.camera_target)
        cam = self._camera.data
        cam.lens = LENS_MM if desc.hfov == HFOV else SENSOR_MM / 2.0 / math.tan(desc.hfov / 2.0)
        self._set_floor(desc)
        self._set_lights(desc)
        self._set_objects(desc)

    # --- rendering -----------------------------------------------------------------------------
    def _render_to(self, path: Path) -> None:
        self.scene.render.filepath = str(path)
        with _quiet_stdout(self.quiet):
            self.bpy.ops.render.render(write_still=True)

    def render_image(self, desc: SceneDescription) -> np.ndarray:
        """The colour image (H, W, 3) uint8 of the scene (call `set_scene` first)."""
        from PIL import Image

        self._apply_color_settings()
        path = Path(self._tmp.name) / "color.png"
        self._render_to(path)
        with Image.open(path) as im:
            return np.asarray(im.convert("RGB")).copy()

    def render_mask(self, desc: SceneDescription) -> np.ndarray:
        """The object-index mask (H, W) int16 of the scene, -1 where no object shows."""
        self._apply_mask_settings()
        path = Path(self._tmp.name) / "mask.exr"
        self._render_to(path)
        img = self.bpy.data.images.load(str(path), check_existing=False)
        try:
            w, h = img.size
            px = np.empty(w * h * img.channels, dtype=np.float32)
            img.pixels.foreach_get(px)
        finally:
            self.bpy.data.images.remove(img)
        os.unlink(path)
        code = np.rint(px.reshape(h, w, -1)[::-1, :, 0]).astype(np.int16)
        return code - 1

    def render(
        self, desc: SceneDescription, image: bool = True
    ) -> tuple[np.ndarray | None, np.ndarray]:
        """(image or None, mask) of one scene."""
        self.set_scene(desc)
        img = self.render_image(desc) if image else None
        return img, self.render_mask(desc)

    def close(self) -> None:
        self._tmp.cleanup()
