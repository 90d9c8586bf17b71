"""Fast raster frames of a fixed camera and fixed lights (videos): the floor is shaded once.

Every frame of a video shares the camera, the lights and the floor; only the objects move. So
the floor is rendered once per view into two linear textures, lit and in the key light's full
shadow (the floor's colour is linear in the key light's shadow factor), and each frame starts
from the lit floor (a copy). Then the objects are drawn with the engine's shader (`raster.py`),
and the floor is shaded again only inside one convex polygon per object that holds every floor
point whose shadow filter can reach the object: around the object's silhouette in the key
light's shadow map (its support in 16 directions), grown by the filter's reach and mapped back
onto the floor. There a small shader runs the engine's shadow filter (`raster._KEY_LIGHT`) and
blends the two floor textures. Outside those polygons the floor has no shadow, so the copy is
what the full render draws there. Colours are written to an 8-bit sRGB framebuffer (the GPU
encodes). With one sample per pixel (no MSAA) the colour pass also writes each object's index
to a second, byte attachment: the same fragments as the separate index pass, so the same mask.

Per frame only the objects change: the shading uniforms are written once per view, the shadow
map is cleared only where the last frame's objects lay, and the meshes are drawn indexed (the
same triangles in the same order). On llvmpipe the time goes to rasterising and shading, so
pixels and triangles drawn are what these save.

A frame matches `RasterRenderer.render_image` of the same scene within 1-2 sRGB levels (rounding
of the encodings; tests/clevrer/render check it). Limits: a flat floor without lines (lines
would disappear under the shadow polygons), no glass (its shadow map and blended passes are
not drawn here).
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np

from tvr.render import meshes
from tvr.render.presets import Preset
from tvr.render.raster import (
    _KEY_LIGHT,
    _SHADE_FRAGMENT,
    _VERTEX,
    MATERIAL_ID,
    SHADOW_SIZE,
    SHAPES,
    RasterRenderer,
    _gl,
    _light_viewproj,
)
from tvr.render.scene import GROUND_HALF_SIZE, SceneDescription

GL_SRGB8_ALPHA8 = 0x8C43
GL_FRAMEBUFFER_SRGB = 0x8DB9

_QUAD_VERTEX = """
#version 330
void main() {
    // one triangle that covers the viewport
    vec2 p = vec2(float((gl_VertexID & 1) << 2) - 1.0, float((gl_VertexID & 2) << 1) - 1.0);
    gl_Position = vec4(p, 0.0, 1.0);
}
"""

_COPY_FRAGMENT = """
#version 330
uniform sampler2D u_image;
out vec4 f_color;
void main() { f_color = texelFetch(u_image, ivec2(gl_FragCoord.xy), 0); }
"""

_FLOOR_VERTEX = """
#version 330
uniform mat4 u_viewproj;
in vec3 in_pos;
out vec3 v_world;
void main() {
    v_world = in_pos;
    gl_Position = u_viewproj * vec4(in_pos, 1.0);
}
"""

# the floor inside a shadow region: the engine's shadow filter between the two cached floors
_SHADOW_FLOOR_FRAGMENT = (
    """
#version 330
in vec3 v_world;
uniform mat4 u_shadow_mat;
uniform sampler2DShadow u_shadow_opaque;
uniform sampler2DShadow u_shadow_glass;
uniform float u_shadow_radius;
uniform int u_any_glass;
uniform sampler2D u_lit;
uniform sampler2D u_dark;
out vec4 f_color;
"""
    + _KEY_LIGHT
    + """
void main() {
    ivec2 p = ivec2(gl_FragCoord.xy);
    vec3 lit = texelFetch(u_lit, p, 0).rgb;
    vec3 dark = texelFetch(u_dark, p, 0).rgb;
    f_color = vec4(dark + (lit - dark) * key_light(), 1.0);
}
"""
)

# the engine's shading with a second output, the object's index code: with one sample per pixel
# the colour pass gives the mask too (the engine's main() renamed and called)
_SHADE_IDS_FRAGMENT = (
    "#version 330\n#define main shade_main\n"
    + _SHADE_FRAGMENT
    + """
#undef main
uniform float u_code;
out vec4 f_index;
void main() {
    shade_main();
    f_index = vec4(u_code, 0.0, 0.0, 1.0);
}
"""
)

#: most objects a frame may hold (the shadow regions' vertex buffer)
MAX_OBJECTS = 64
_CORNERS = np.array(
    [[x, y, z, 1.0] for x in (-1.0, 1.0) for y in (-1.0, 1.0) for z in (-1.0, 1.0)]
).T  # (4, 8): the corners of the unit meshes' box
#: world to shadow map: the engine's bias from clip space (-1..1) to texture space (0..1)
_SHADOW_BIAS = np.array([[0.5, 0, 0, 0.5], [0, 0.5, 0, 0.5], [0, 0, 0.5, 0.5], [0, 0, 0, 1.0]])
#: the shadow filter's tap offsets (`raster._KEY_LIGHT`'s DISK, in units of u_shadow_radius)
_DISK = np.array(re.findall(r"vec2\((-?[\d.]+), (-?[\d.]+)\)", _KEY_LIGHT), dtype=np.float64)
#: sides of the polygon that bounds an object's shadow-map silhouette: its support in R
#: directions
_SIDES = 16
_DIRECTIONS = np.stack(
    [
        np.cos(2 * np.pi * np.arange(_SIDES) / _SIDES),
        np.sin(2 * np.pi * np.arange(_SIDES) / _SIDES),
    ],
    axis=1,
)
#: (R, 2, 2): the inverse of [d_i; d_i+1], which gives where support lines i and i+1 cross
_CROSSINGS = np.linalg.inv(np.stack([_DIRECTIONS, np.roll(_DIRECTIONS, -1, axis=0)], axis=1))
#: the polygon of an object whose silhouette does not map back onto the floor: the whole floor
_GROUND_FAN = 1.5 * GROUND_HALF_SIZE * _DIRECTIONS


class FrameRenderer(RasterRenderer):
    """Renders frames of fixed-view scenes: (H, W, 3) uint8 image and (H, W) int16 index mask.

    Args: those of `RasterRenderer`, and `shadow_filter`: "nearest" (one texel per filter tap:
    on llvmpipe about 40% cheaper than bilinear, and less shadow acne at this renderer's larger
    shadow extent) or "linear" (the engine's default: bilinear shadow-map compares).
    `shadow_extent` should cover where objects go (default 10 scene units).
    """

    def __init__(
        self,
        preset: Preset,
        gl_backend: str | None = None,
        shapes: Mapping[str, meshes.Mesh] | None = None,
        shadow_extent: float = 10.0,
        shadow_size: int = SHADOW_SIZE,
        shadow_filter: str = "nearest",
    ):
        import moderngl

        if shapes is None:
            shapes = {shape: meshes.unit_mesh(shape) for shape in SHAPES}
        super().__init__(preset, gl_backend, shapes, shadow_extent, shadow_size)
        self._meshes = dict(shapes)
        self._mesh_buffers: dict[str, tuple[object, object]] = {}
        if shadow_filter not in ("linear", "nearest"):
            raise ValueError(f"shadow_filter: expected linear or nearest, got {shadow_filter!r}")
        ctx = self.ctx
        if shadow_filter == "nearest":
            for tex in self._shadow_tex.values():
                tex.filter = (moderngl.NEAREST, moderngl.NEAREST)
        ctx.enable_direct(GL_FRAMEBUFFER_SRGB)  # writes to sRGB attachments are encoded
        self._copy = ctx.program(vertex_shader=_QUAD_VERTEX, fragment_shader=_COPY_FRAGMENT)
        self._copy_vao = ctx.vertex_array(self._copy, [])
        self._shadow_floor = ctx.program(
            vertex_shader=_FLOOR_VERTEX, fragment_shader=_SHADOW_FLOOR_FRAGMENT
        )
        self._region_vbo = ctx.buffer(reserve=MAX_OBJECTS * _SIDES * 3 * 3 * 4, dynamic=True)
        self._region_vao = ctx.vertex_array(
            self._shadow_floor, [(self._region_vbo, "3f", "in_pos")]
        )
        self._linear_filter = shadow_filter == "linear"
        # each shape's mesh vertices (homogeneous; padded with its first vertex to one length)
        self._shape_slot = {shape: k for k, shape in enumerate(self._meshes)}
        n = max(len(m.vertices) for m in self._meshes.values())
        self._support_vertices = np.ones((len(self._meshes), n, 4))
        for k, mesh in enumerate(self._meshes.values()):
            v = np.asarray(mesh.vertices, dtype=np.float64)
            self._support_vertices[k, :, :3] = np.concatenate([v, np.repeat(v[:1], n - len(v), 0)])
        # one pass gives colour and mask where the colour has one sample per pixel (no MSAA)
        self._shade_ids = None
        if not preset.msaa:
            self._shade_ids = ctx.program(
                vertex_shader=_VERTEX,
                fragment_shader=_SHADE_IDS_FRAGMENT,
                fragment_outputs={"f_color": 0, "f_index": 1},
            )
        # the glass shadow map is never drawn here: clear it once (nothing in it)
        self._shadow_fbo["glass"].use()
        self._shadow_fbo["glass"].clear(depth=1.0)
        self._view_key: tuple | None = None  # the view of the cached floor
        self._uniform_key: tuple | None = None  # the view the shading uniforms were written for
        self._light_vp = np.eye(4)
        self._shadow_mat = np.eye(4)  # floor (x, y, z, 1) -> shadow map (u w, v w, depth w, w)
        self._floor_from_uv = np.eye(3)  # shadow map (u, v, 1) -> floor (x h, y h, h)
        self._tap_reach = 0.0  # shadow-map (u, v) units
        self._shadow_dirty: list[tuple[int, int, int, int]] | None = None
        self._floors: dict[str, object] = {}
        self._targets: dict[tuple, object] = {}

    # --- resources -----------------------------------------------------------------------------
    def _vao(self, program_name: str, key: str, data: np.ndarray | None = None):
        """The engine's vertex arrays, with the shapes' meshes indexed: the same triangles in the
        same order, a shared vertex shaded once instead of once per triangle."""
        mesh = self._meshes.get(key)
        if mesh is None:
            return super()._vao(program_name, key, data)
        vao = self._vaos.get((program_name, key))
        if vao is None:
            buffers = self._mesh_buffers.get(key)
            if buffers is None:
                vertices = np.concatenate([mesh.vertices, mesh.normals], axis=1)
                buffers = (
                    self.ctx.buffer(vertices.astype(np.float32).tobytes()),
                    self.ctx.buffer(np.ascontiguousarray(mesh.faces, dtype=np.int32).tobytes()),
                )
                self._mesh_buffers[key] = buffers
            vbo, ibo = buffers
            prog = getattr(self, program_name)
            attrs = ["in_pos"] + (["in_normal"] if "in_normal" in prog else [])
            fmt = "3f 3f" if len(attrs) == 2 else "3f 12x"
            vao = self.ctx.vertex_array(
                prog, [(vbo, fmt, *attrs)], index_buffer=ibo, index_element_size=4
            )
            self._vaos[(program_name, key)] = vao
        return vao

    # --- targets -------------------------------------------------------------------------------
    def _target(self, kind: str, width: int, height: int):
        """Framebuffers: "frame" (sRGB, multisampled at the preset's MSAA) and "frame_bg" (the
        lit floor in that format), "resolved" (sRGB, one sample), "index" (one byte), and with
        no MSAA "frame_ids" (the frame's colour and a byte index attachment, one depth buffer)
        and "ids" (that index attachment and the depth buffer, to clear them)."""
        key = (kind, width, height)
        fbo = self._targets.get(key)
        if fbo is None:
            ctx, size = self.ctx, (width, height)
            samples = min(self.preset.msaa, ctx.max_samples) if self.preset.msaa else 0
            if kind in ("frame_ids", "ids"):
                frame = self._target("frame", width, height)
                index = self._targets.get(("ids_texture", width, height))
                if index is None:
                    index = ctx.texture(size, 1, dtype="f1")
                    self._targets[("ids_texture", width, height)] = index
                colors = [frame.color_attachments[0], index] if kind == "frame_ids" else [index]
                fbo = ctx.framebuffer(
                    color_attachments=colors, depth_attachment=frame.depth_attachment
                )
                self._targets[key] = fbo
                return fbo
            if kind in ("frame", "frame_bg"):
                color = ctx.texture(size, 4, samples=samples, internal_format=GL_SRGB8_ALPHA8)
                depth = ctx.depth_renderbuffer(size, samples=samples) if kind == "frame" else None
            elif kind == "resolved":
                color, depth = ctx.texture(size, 4, internal_format=GL_SRGB8_ALPHA8), None
            else:
                color, depth = ctx.texture(size, 1, dtype="f1"), ctx.depth_renderbuffer(size)
            fbo = ctx.framebuffer(color_attachments=[color], depth_attachment=depth)
            self._targets[key] = fbo
        return fbo

    # --- the cached floor ----------------------------------------------------------------------
    @staticmethod
    def _view_of(desc: SceneDescription) -> tuple:
        return (
            desc.camera, desc.camera_target, desc.hfov, desc.width, desc.height, desc.lights,
            desc.ground_rgb, desc.world_strength,
        )  # fmt: skip

    def _cache_floor(self, desc: SceneDescription) -> None:
        """Render the floor without objects, lit and in full key-light shadow (once per view)."""
        import moderngl

        key = self._view_of(desc)
        if key == self._view_key:
            return
        if desc.floor_lines():
            raise ValueError("FrameRenderer draws no floor lines; use RasterRenderer")
        ctx = self.ctx
        w, h = desc.width, desc.height
        empty = SceneDescription(
            (), desc.camera, desc.lights, w, h, desc.ground_rgb, desc.line_rgb,
            desc.world_strength, None, desc.line_half_width, desc.backdrop_location,
            desc.camera_target, desc.hfov,
        )  # fmt: skip
        self._prepare(empty)  # shadow maps cleared to "nothing in the way"
        ground, _ = self._floor_vao("floor", empty)
        self._set_model(self.floor, np.eye(4))
        self.floor["u_rgb"].value = desc.ground_rgb
        for name, shadow_depth in (("lit", 1.0), ("dark", 0.0)):
            # depth 0 everywhere: every shadow compare fails, the key light is fully shadowed
            self._shadow_fbo["opaque"].use()
            self._shadow_fbo["opaque"].clear(depth=shadow_depth)
            tex = self._floors.get(name)
            if tex is None or tex.size != (w, h):
                tex = ctx.texture((w, h), 4, dtype="f4")
                self._floors[name] = tex
                self._floors[name + "_fbo"] = ctx.framebuffer(
                    color_attachments=[tex], depth_attachment=ctx.depth_renderbuffer((w, h))
                )
            fbo = self._floors[name + "_fbo"]
            fbo.use()
            fbo.clear(0.0, 0.0, 0.0, 1.0, depth=1.0)
            ctx.enable(moderngl.DEPTH_TEST)
            ctx.disable(moderngl.BLEND | moderngl.CULL_FACE)
            ground.render()
        self._shadow_dirty = None  # the whole shadow map holds depth 0 now
        # the lit floor in the frame's format, to start every frame from
        bg = self._target("frame_bg", w, h)
        bg.use()
        ctx.disable(moderngl.DEPTH_TEST)
        self._floors["lit"].use(2)
        self._copy["u_image"].value = 2
        self._copy_vao.render(moderngl.TRIANGLES, vertices=3)
        self._view_key = key

    # --- per view: the shading uniforms --------------------------------------------------------
    def _prepare(self, desc: SceneDescription, mats: np.ndarray | None = None) -> None:
        """The engine's `_prepare` (the opaque shadow map, every shading uniform), with the
        uniforms written once per view: between frames only the objects change."""
        key = self._view_of(desc)
        if key != self._uniform_key:
            super()._prepare(desc)  # every shading uniform, and the shadow map of desc
            light = next(li.location for li in desc.lights if li.name == "key")
            self._light_vp = _light_viewproj(light, self.shadow_extent)
            self._shadow_mat = _SHADOW_BIAS @ self._light_vp
            self._floor_from_uv = np.linalg.inv(self._shadow_mat[np.ix_([0, 1, 3], [0, 1, 3])])
            self._tap_reach = (
                self.shade["u_shadow_radius"].value * np.linalg.norm(_DISK, axis=1).max()
            )
            self._copy_uniforms()
            self._uniform_key = key
            return
        self._shadow_pass(desc, self._light_vp, mats)
        self._shadow_tex["opaque"].use(0)
        self._shadow_tex["glass"].use(1)
        any_glass = int(any(o.material == "glass" for o in desc.objects))
        self.shade["u_any_glass"].value = any_glass  # the engine's render_image may set both
        self.shade["u_pass"].value = 0

    def _copy_uniforms(self) -> None:
        """The view's uniforms from the engine's shading program to this renderer's programs."""
        import moderngl

        per_draw = {"u_model", "u_normal_mat", "u_rgb", "u_material", "u_code"}
        for prog in (self._shade_ids, self._shadow_floor):
            if prog is None:
                continue
            for name in prog:
                if name in per_draw or not isinstance(prog[name], moderngl.Uniform):
                    continue
                source = self.shade.get(name, None)
                if source is not None:
                    prog[name].write(source.read())
        prog = self._shadow_floor
        for name, unit in (("u_shadow_opaque", 0), ("u_lit", 3), ("u_dark", 4)):
            if name in prog:
                prog[name].value = unit
        if "u_any_glass" in prog:
            prog["u_any_glass"].value = 0

    # --- the key light's shadow map ------------------------------------------------------------
    def _shadow_pass(
        self, desc: SceneDescription, light_vp: np.ndarray, mats: np.ndarray | None = None
    ) -> None:
        """The opaque shadow map only (no glass here). Only the texels the last frame's objects
        covered are cleared: the rest still holds the clear depth."""
        import moderngl

        if mats is None:
            mats = _model_matrices(desc)
        ctx, prog = self.ctx, self.depth
        prog["u_viewproj"].write(_gl(light_vp))
        ctx.enable(moderngl.DEPTH_TEST)
        ctx.disable(moderngl.CULL_FACE)
        ctx.polygon_offset = (2.0, 4.0)
        fbo = self._shadow_fbo["opaque"]
        fbo.use()
        if self._shadow_dirty is None:
            fbo.clear(depth=1.0)
        else:
            for rect in self._shadow_dirty:
                fbo.clear(depth=1.0, viewport=rect)
        u_model = prog["u_model"]
        for o, model in zip(desc.objects, _gl_matrices(mats), strict=True):
            u_model.write(model)
            self._vao("depth", o.shape).render()
        ctx.polygon_offset = (0.0, 0.0)
        self._shadow_dirty = self._shadow_texels(mats, light_vp)

    def _shadow_texels(
        self, mats: np.ndarray, light_vp: np.ndarray
    ) -> list[tuple[int, int, int, int]] | None:
        """(x, y, width, height) texel rectangles of the shadow map that hold the objects of
        `mats`: their boxes' projections, two texels wider on each side (rasterisation in
        float32); one rectangle where they overlap; None (all) if an object is behind the light."""
        if not len(mats):
            return []
        clip = np.einsum("ij,kjn->kni", light_vp, mats @ _CORNERS)  # (K, 8, 4)
        if (clip[..., 3] <= 1e-6).any():
            return None
        uv = (clip[..., :2] / clip[..., 3:] * 0.5 + 0.5) * self.shadow_size
        lo = np.clip(np.floor(uv.min(axis=1)) - 2, 0, self.shadow_size).astype(int)
        hi = np.clip(np.ceil(uv.max(axis=1)) + 2, 0, self.shadow_size).astype(int)
        boxes = [
            [*a, *b]
            for a, b in zip(lo.tolist(), hi.tolist(), strict=True)
            if b[0] > a[0] and b[1] > a[1]
        ]
        merged: list[list[int]] = []
        for box in sorted(boxes):
            for m in merged:  # join overlapping boxes (the union's bounding box)
                if box[0] <= m[2] and m[0] <= box[2] and box[1] <= m[3] and m[1] <= box[3]:
                    m[:] = [min(m[0], box[0]), min(m[1], box[1]), max(m[2], box[2]),
                            max(m[3], box[3])]  # fmt: skip
                    break
            else:
                merged.append(box)
        return [(x0, y0, x1 - x0, y1 - y0) for x0, y0, x1, y1 in merged]

    # --- where the floor needs the shadow filter ------------------------------------------------
    def _shadow_regions(self, desc: SceneDescription, mats: np.ndarray) -> np.ndarray:
        """(3 (R - 2) K, 3) float32 vertices on the floor z = 0: `_shadow_polygons` as fans of
        triangles from their first corner."""
        corners = self._shadow_polygons(desc, mats)
        first = np.broadcast_to(corners[:, :1], corners[:, 2:].shape)
        fan = np.stack([first, corners[:, 1:-1], corners[:, 2:]], axis=2)
        out = np.zeros((*fan.shape[:3], 3), dtype=np.float32)
        out[..., :2] = fan
        return out.reshape(-1, 3)

    def _shadow_polygons(self, desc: SceneDescription, mats: np.ndarray) -> np.ndarray:
        """(K, R, 2): per object, the corners on the floor (x, y) of a convex polygon that holds
        every floor point whose key-light filter can see the object.

        An object darkens a floor point only if one of the filter's taps falls on a shadow-map
        texel its silhouette covers. So, in the shadow map's (u, v): the R-sided polygon around
        the object's projected mesh vertices (its support in R directions), grown by the reach
        of the taps and the texels they read; mapped back onto the floor (the floor-to-map
        projection is a homography, so the polygon stays convex and keeps all it held). An
        object that does not map back (behind the light) gets the whole floor."""
        size = self.shadow_size
        # the farthest tap, plus the texel it reads (half its diagonal; bilinear reads reach a
        # texel further), plus one texel for float32 rounding on the GPU
        reach = self._tap_reach + ((1.5 if self._linear_filter else 0.71) + 1.0) / size
        shape_ids = np.array([self._shape_slot[o.shape] for o in desc.objects])
        verts = self._support_vertices[shape_ids]  # (K, V, 4), each shape's padded to V
        clip = verts @ (self._shadow_mat @ mats).transpose(0, 2, 1)  # (K, V, 4)
        w = clip[..., 3]
        uv = clip[..., :2] / np.where(w > 1e-9, w, 1.0)[..., None]
        support = (uv @ _DIRECTIONS.T).max(axis=1) + reach  # (K, R)
        # corners: where the support lines of consecutive directions cross
        corner_uv = np.einsum(
            "rij,krj->kri", _CROSSINGS, np.stack([support, np.roll(support, -1, 1)], -1)
        )
        floor_h = np.einsum(
            "ij,krj->kri",
            self._floor_from_uv,
            np.concatenate([corner_uv, np.ones((*corner_uv.shape[:2], 1))], -1),
        )
        ok = (w > 1e-9).all(axis=1) & (floor_h[..., 2] > 1e-9).all(axis=1)
        corners = floor_h[..., :2] / np.where(ok[:, None], floor_h[..., 2], 1.0)[..., None]
        corners[~ok] = _GROUND_FAN  # behind the light or beyond its horizon: the whole floor
        return corners

    # --- one frame -----------------------------------------------------------------------------
    def render_frame(self, desc: SceneDescription, image: bool = True):
        """(image (H, W, 3) uint8 or None, mask (H, W) int16: object index, -1 for the floor)."""
        if len(desc.objects) > MAX_OBJECTS:
            raise ValueError(f"at most {MAX_OBJECTS} objects per frame, got {len(desc.objects)}")
        if any(o.material == "glass" for o in desc.objects):
            raise ValueError("FrameRenderer draws no glass; use RasterRenderer")
        if max((o.index for o in desc.objects), default=0) > 253:
            raise ValueError("object indices must be below 254 for the byte mask")
        with self.ctx:  # current even if the process made other contexts since
            if not image:
                return None, self._render_index(desc)
            if self._shade_ids is None:  # MSAA: the mask needs its own one-sample pass
                img, _ = self._render_rgb(desc)
                return img, self._render_index(desc)
            img, ids = self._render_rgb(desc, ids=True)
            return img, ids

    def _render_rgb(
        self, desc: SceneDescription, ids: bool = False
    ) -> tuple[np.ndarray, np.ndarray | None]:
        """The colour image, and with `ids` (no MSAA only) the index mask of the same pass."""
        import moderngl

        ctx = self.ctx
        w, h = desc.width, desc.height
        with_ids = ids and self._shade_ids is not None
        self._cache_floor(desc)
        mats = _model_matrices(desc)
        self._prepare(desc, mats)
        fbo = self._target("frame", w, h)
        if with_ids:
            ids_fbo = self._target("ids", w, h)
            ids_fbo.use()
            ids_fbo.clear(0.0, 0.0, 0.0, 0.0, depth=1.0)
        else:
            fbo.use()
            fbo.clear(depth=1.0)
        ctx.copy_framebuffer(fbo, self._target("frame_bg", w, h))
        draw_fbo = self._target("frame_ids", w, h) if with_ids else fbo
        draw_fbo.use()
        ctx.enable(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        ctx.disable(moderngl.BLEND)
        ctx.cull_face = "back"
        self._draw_objects(desc, mats, "_shade_ids" if with_ids else "shade")
        ctx.disable(moderngl.CULL_FACE)
        if desc.objects:
            if with_ids:
                fbo.use()  # the shadows change the colour only
            regions = self._shadow_regions(desc, mats)
            self._region_vbo.write(regions.tobytes())
            self._floors["lit"].use(3)
            self._floors["dark"].use(4)
            self._region_vao.render(moderngl.TRIANGLES, vertices=len(regions))
        if self.preset.msaa:
            resolved = self._target("resolved", w, h)
            ctx.copy_framebuffer(resolved, fbo)
            fbo = resolved
        data = np.frombuffer(fbo.read(components=3, dtype="f1"), dtype=np.uint8)
        img = np.ascontiguousarray(data.reshape(h, w, 3)[::-1])
        if not with_ids:
            return img, None
        return img, _index_mask(self._target("ids", w, h), w, h)

    def _draw_objects(self, desc: SceneDescription, mats: np.ndarray, program: str) -> None:
        """The objects, nearest first (early depth tests skip what hides behind them), with the
        program called `program` ("shade": the engine's shading; "_shade_ids": that and the
        index code)."""
        if not desc.objects:
            return
        prog = getattr(self, program)
        dist = np.linalg.norm(mats[:, :3, 3] - np.asarray(desc.camera), axis=1)
        models, normals = _gl_matrices(mats), _gl_normal_matrices(mats)
        u_model, u_normal, u_rgb = prog["u_model"], prog["u_normal_mat"], prog["u_rgb"]
        u_material, u_code = prog["u_material"], prog.get("u_code", None)
        for k in np.argsort(dist, kind="stable").tolist():
            o = desc.objects[k]
            u_model.write(models[k])
            u_normal.write(normals[k])
            u_material.value = MATERIAL_ID[o.material]
            u_rgb.value = o.rgb
            if u_code is not None:
                # an 8-bit normalised channel stores round(255 * value): code k is stored exactly
                u_code.value = (o.index + 1) / 255.0
            self._vao(program, o.shape).render()

    def _render_index(self, desc: SceneDescription) -> np.ndarray:
        import moderngl

        ctx, prog = self.ctx, self.index
        w, h = desc.width, desc.height
        fbo = self._target("index", w, h)
        fbo.use()
        fbo.clear(0.0, 0.0, 0.0, 0.0, depth=1.0)
        ctx.enable(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        ctx.disable(moderngl.BLEND)
        ctx.cull_face = "back"
        prog["u_viewproj"].write(_gl(self.viewproj(desc)))
        for o in desc.objects:
            self._set_model(prog, o.matrix())
            # an 8-bit normalised channel stores round(255 * value): code k is stored exactly
            prog["u_code"].value = (o.index + 1) / 255.0
            self._vao("index", o.shape).render()
        ctx.disable(moderngl.CULL_FACE)
        return _index_mask(fbo, w, h)


def _model_matrices(desc: SceneDescription) -> np.ndarray:
    """(K, 4, 4) model matrices of the scene's objects."""
    if not desc.objects:
        return np.zeros((0, 4, 4))
    return np.stack([o.matrix() for o in desc.objects])


def _gl_matrices(mats: np.ndarray) -> list[bytes]:
    """Each (4, 4) matrix as OpenGL wants it (`raster._gl`: column major float32)."""
    data = np.ascontiguousarray(mats.transpose(0, 2, 1), dtype=np.float32)
    return [m.tobytes() for m in data]


def _gl_normal_matrices(mats: np.ndarray) -> list[bytes]:
    """The normal matrices the engine's `_set_model` writes, for (K, 4, 4) model matrices."""
    nm = np.linalg.inv(mats[:, :3, :3]).transpose(0, 2, 1)
    nm = nm / np.cbrt(np.abs(np.linalg.det(nm)))[:, None, None]
    return _gl_matrices(nm)


def _index_mask(fbo, width: int, height: int) -> np.ndarray:
    """The (H, W) int16 mask (object index, -1 for the floor) of a byte index attachment."""
    codes = np.frombuffer(fbo.read(components=1, dtype="f1"), dtype=np.uint8)
    return codes.reshape(height, width)[::-1].astype(np.int16) - 1


__all__ = ["MAX_OBJECTS", "FrameRenderer"]
