"""Fast raster frames of a fixed camera and fixed lights (videos): the floor is shaded once.

Every frame of a video shares the camera, the lights and the floor; only the objects move. So
the floor is rendered once per view into two linear textures, lit and in the key light's full
shadow (the floor's colour is linear in the key light's shadow factor), and each frame starts
from the lit floor (a copy). Then the objects are drawn with the engine's shader (`raster.py`),
and the floor is shaded again only inside one rectangle per object that holds its shadow: the
object's box projected from the key light onto the floor, in a frame aligned with the light's
direction, grown by the shadow filter's reach. There a small shader runs the engine's shadow
filter (`raster._KEY_LIGHT`) and blends the two floor textures. Outside those rectangles the
floor has no shadow, so the copy is what the full render draws there. Colours are written to an
8-bit sRGB framebuffer (the GPU encodes), and the object-index pass writes bytes.

A frame matches `RasterRenderer.render_image` of the same scene within 1-2 sRGB levels (rounding
of the encodings; tests/clevrer/render check it). Limits: a flat floor without lines (lines
would disappear under the shadow rectangles), no glass (its shadow map and blended passes are
not drawn here).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from tvr.render import meshes
from tvr.render.presets import Preset
from tvr.render.raster import _KEY_LIGHT, SHADOW_SIZE, RasterRenderer, _gl
from tvr.render.scene import SceneDescription

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

# the floor inside a shadow rectangle: the engine's shadow filter between the two cached floors
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

#: most objects a frame may hold (the shadow rectangles' vertex buffer)
MAX_OBJECTS = 64
_CORNERS = np.array(
    [[x, y, z, 1.0] for x in (-1.0, 1.0) for y in (-1.0, 1.0) for z in (-1.0, 1.0)]
).T  # (4, 8): the corners of the unit meshes' box


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

        super().__init__(preset, gl_backend, shapes, shadow_extent, shadow_size)
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
        self._rect_vbo = ctx.buffer(reserve=MAX_OBJECTS * 6 * 3 * 4, dynamic=True)
        self._rect_vao = ctx.vertex_array(self._shadow_floor, [(self._rect_vbo, "3f", "in_pos")])
        # the glass shadow map is never drawn here: clear it once (nothing in it)
        self._shadow_fbo["glass"].use()
        self._shadow_fbo["glass"].clear(depth=1.0)
        self._view_key: tuple | None = None
        self._floors: dict[str, object] = {}
        self._targets: dict[tuple, object] = {}

    # --- targets -------------------------------------------------------------------------------
    def _target(self, kind: str, width: int, height: int):
        """Framebuffers: "frame" (sRGB, multisampled at the preset's MSAA) and "frame_bg" (the
        lit floor in that format), "resolved" (sRGB, one sample), "index" (one byte)."""
        key = (kind, width, height)
        fbo = self._targets.get(key)
        if fbo is None:
            ctx, size = self.ctx, (width, height)
            samples = min(self.preset.msaa, ctx.max_samples) if self.preset.msaa else 0
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
        # the lit floor in the frame's format, to start every frame from
        bg = self._target("frame_bg", w, h)
        bg.use()
        ctx.disable(moderngl.DEPTH_TEST)
        self._floors["lit"].use(2)
        self._copy["u_image"].value = 2
        self._copy_vao.render(moderngl.TRIANGLES, vertices=3)
        self._view_key = key

    # --- shadow rectangles ---------------------------------------------------------------------
    def _shadow_rects(self, desc: SceneDescription) -> np.ndarray:
        """(6 K, 3) vertices (two triangles per object, on the floor z = 0) of the rectangles that
        hold the objects' key-light shadows."""
        light = np.asarray(
            next(li.location for li in desc.lights if li.name == "key"), dtype=np.float64
        )
        mats = np.stack([o.matrix() for o in desc.objects])  # (K, 4, 4)
        p = np.einsum("kij,jn->kni", mats, _CORNERS)[..., :3]  # (K, 8, 3) box corners
        below = np.minimum(p[..., 2], light[2] - 1e-3)
        s = light[2] / (light[2] - below)
        shadow = light[:2] + (p[..., :2] - light[:2]) * s[..., None]  # (K, 8, 2) on the floor
        xy = np.concatenate([p[..., :2], shadow], axis=1)  # (K, 16, 2)
        # axes: from the light towards the object (the shadow's direction), and across it
        centre = p[..., :2].mean(axis=1)
        u = centre - light[:2]
        u /= np.maximum(np.linalg.norm(u, axis=1, keepdims=True), 1e-9)
        v = np.stack([-u[:, 1], u[:, 0]], axis=1)
        a = np.einsum("kni,ki->kn", xy, u)
        b = np.einsum("kni,ki->kn", xy, v)
        # how far the filter reaches around the far end of the shadow: its taps lie up to 5.8
        # texels out (6 x the largest disk offset, 0.962), plus the bilinear footprint and one
        # texel of safety; texels grow with the distance from the light and stretch on a floor
        # seen at a grazing angle from it
        far = xy[np.arange(len(xy)), np.argmax(a, axis=1)]
        d = np.sqrt(((far - light[:2]) ** 2).sum(axis=1) + light[2] ** 2)
        texel = 2.0 * self.shadow_extent / self.shadow_size
        stretch = (d / np.linalg.norm(light)) / np.maximum(light[2] / d, 0.05)
        reach = (6.0 * 0.962 + 2.0) * texel * stretch + 0.02
        a0, a1 = a.min(axis=1) - reach, a.max(axis=1) + reach
        b0, b1 = b.min(axis=1) - reach, b.max(axis=1) + reach
        corners = [(a0, b0), (a1, b0), (a1, b1), (a0, b0), (a1, b1), (a0, b1)]
        out = np.zeros((len(desc.objects), 6, 3), dtype=np.float32)
        for k, (ca, cb) in enumerate(corners):
            out[:, k, :2] = ca[:, None] * u + cb[:, None] * v
        return out.reshape(-1, 3)

    def _shadow_pass(self, desc: SceneDescription, light_vp: np.ndarray) -> None:
        """The opaque shadow map only (no glass here)."""
        import moderngl

        ctx, prog = self.ctx, self.depth
        prog["u_viewproj"].write(_gl(light_vp))
        ctx.enable(moderngl.DEPTH_TEST)
        ctx.disable(moderngl.CULL_FACE)
        ctx.polygon_offset = (2.0, 4.0)
        fbo = self._shadow_fbo["opaque"]
        fbo.use()
        fbo.clear(depth=1.0)
        for o in desc.objects:
            self._set_model(prog, o.matrix())
            self._vao("depth", o.shape).render()
        ctx.polygon_offset = (0.0, 0.0)

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
            img = self._render_rgb(desc) if image else None
            return img, self._render_index(desc)

    def _render_rgb(self, desc: SceneDescription) -> np.ndarray:
        import moderngl

        ctx = self.ctx
        w, h = desc.width, desc.height
        self._cache_floor(desc)
        self._prepare(desc)
        fbo = self._target("frame", w, h)
        fbo.use()
        fbo.clear(depth=1.0)
        ctx.copy_framebuffer(fbo, self._target("frame_bg", w, h))
        fbo.use()
        ctx.enable(moderngl.DEPTH_TEST | moderngl.CULL_FACE)
        ctx.disable(moderngl.BLEND)
        ctx.cull_face = "back"
        c = np.asarray(desc.camera)
        by_distance = sorted(
            desc.objects, key=lambda o: float(np.linalg.norm(np.asarray(o.location) - c))
        )
        for o in by_distance:
            self._draw(o)
        ctx.disable(moderngl.CULL_FACE)
        if desc.objects:
            prog = self._shadow_floor
            rects = self._shadow_rects(desc)
            self._rect_vbo.write(rects.tobytes())
            prog["u_viewproj"].write(self.shade["u_viewproj"].read())
            prog["u_shadow_mat"].write(self.shade["u_shadow_mat"].read())
            prog["u_shadow_radius"].value = self.shade["u_shadow_radius"].value
            for name, unit in (("u_shadow_opaque", 0), ("u_lit", 3), ("u_dark", 4)):
                if name in prog:
                    prog[name].value = unit
            if "u_any_glass" in prog:
                prog["u_any_glass"].value = 0
            self._floors["lit"].use(3)
            self._floors["dark"].use(4)
            self._rect_vao.render(moderngl.TRIANGLES, vertices=len(rects))
        if self.preset.msaa:
            resolved = self._target("resolved", w, h)
            ctx.copy_framebuffer(resolved, fbo)
            fbo = resolved
        data = np.frombuffer(fbo.read(components=3, dtype="f1"), dtype=np.uint8)
        return np.ascontiguousarray(data.reshape(h, w, 3)[::-1])

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
        codes = np.frombuffer(fbo.read(components=1, dtype="f1"), dtype=np.uint8)
        return codes.reshape(h, w)[::-1].astype(np.int16) - 1


__all__ = ["MAX_OBJECTS", "FrameRenderer"]
