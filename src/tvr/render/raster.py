"""Fast rasterized images of a `SceneDescription` with moderngl on headless EGL (llvmpipe or a GPU).

It draws the same `SceneDescription` as the Cycles backend, with the same meshes and the same
pinhole camera, so every object lands on the same pixels. Shading is an approximation of the
path tracer in linear light: Lambert diffuse from the three area lights and the sun; a soft
shadow map (percentage-closer filtering) from the key light, glass casting a full shadow as in
TRANCE's release; Blinn-Phong highlights; metal reflects a floor/backdrop environment tinted by its
colour; glass is drawn after the opaque objects, back to front, as a tinted multiply plus Fresnel
reflection and highlights.
Multisampling (the preset's `msaa`) smooths edges; the object-index mask is a separate pass at the
image size, one sample at each pixel centre, like the Cycles mask.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections.abc import Mapping

import numpy as np

from tvr.render import meshes
from tvr.render.presets import Preset
from tvr.render.scene import BACKDROP_ANGLE_DEG, GROUND_HALF_SIZE, SceneDescription

NEAR, FAR = 0.1, 200.0
#: texels of the key light's square shadow map (default)
SHADOW_SIZE = 1024
#: half size (scene units) of the square around the origin that the key light's shadow map covers
#: (default)
SHADOW_EXTENT = 6.0
#: horizontal direction in which the release's backdrop rises (its local +x turned about z)
BACKDROP_DIR = (
    math.cos(math.radians(BACKDROP_ANGLE_DEG)),
    math.sin(math.radians(BACKDROP_ANGLE_DEG)),
)
#: the shader's u_material of each material name
MATERIAL_ID = {"rubber": 0, "metal": 1, "glass": 2}
#: the shape names and their unit meshes drawn by default
SHAPES = ("cube", "sphere", "cylinder")

_VERTEX = """
#version 330
uniform mat4 u_model;
uniform mat3 u_normal_mat;
uniform mat4 u_viewproj;
in vec3 in_pos;
in vec3 in_normal;
out vec3 v_world;
out vec3 v_normal;
void main() {
    vec4 w = u_model * vec4(in_pos, 1.0);
    v_world = w.xyz;
    v_normal = u_normal_mat * in_normal;
    gl_Position = u_viewproj * w;
}
"""

_DEPTH_FRAGMENT = """
#version 330
void main() {}
"""

_INDEX_FRAGMENT = """
#version 330
uniform float u_code;
out vec4 f_color;
void main() { f_color = vec4(u_code, 0.0, 0.0, 1.0); }
"""

_SHADE_HEAD = """
in vec3 v_world;
in vec3 v_normal;
uniform vec3 u_cam;
uniform vec3 u_rgb;
uniform int u_material;      // 0 rubber, 1 metal, 2 glass
uniform int u_pass;          // 0 opaque, 1 glass transmission (multiply), 2 glass surface (add)
uniform vec3 u_light_pos[3];
uniform float u_light_power[3];
uniform vec3 u_light_color[3];
uniform vec3 u_sun_dir;
uniform float u_sun;
uniform float u_world;
uniform vec3 u_ground_radiance;
uniform mat4 u_shadow_mat;
uniform sampler2DShadow u_shadow_opaque;
uniform sampler2DShadow u_shadow_glass;
uniform float u_shadow_radius;
uniform vec2 u_backdrop_dir;
uniform int u_any_glass;
out vec4 f_color;

const float PI = 3.14159265;
// a path tracer fills shadows with bounced light: keep part of the key light in them
const float SHADOW_FLOOR = 0.35;
// the backdrop is 20-50 units from the lights: it gets a fraction of the floor's light
const float BACKDROP_SHARE = 0.3;
// share of the light through glass that comes out: internal reflections are cut off by the
// bounce limit and the floor seen through it lies in its shadow (set against the release's
// sample image, see docs/rendering.md)
const float GLASS_TRANSMISSION = 0.45;
"""

# the key light's soft shadow (percentage-closer filtering of the shadow maps); needs v_world,
# u_shadow_mat, u_shadow_opaque, u_shadow_glass, u_shadow_radius and u_any_glass
_KEY_LIGHT = """const vec2 DISK[12] = vec2[](
    vec2(-0.326, -0.406), vec2(-0.840, -0.074), vec2(-0.696, 0.457), vec2(-0.203, 0.621),
    vec2(0.962, -0.195), vec2(0.473, -0.480), vec2(0.519, 0.767), vec2(0.185, -0.893),
    vec2(0.507, 0.064), vec2(0.896, 0.412), vec2(-0.322, -0.933), vec2(-0.792, -0.598));

float key_light() {
    vec4 s = u_shadow_mat * vec4(v_world, 1.0);
    vec3 q = s.xyz / s.w;
    if (any(lessThan(q.xy, vec2(0.0))) || any(greaterThan(q.xy, vec2(1.0)))) return 1.0;
    float lit_o = 0.0, lit_g = 0.0;
    int n = 12;
    for (int i = 0; i < 12; i++) {
        vec3 t = vec3(q.xy + DISK[i] * u_shadow_radius, q.z - 0.0005);
        lit_o += texture(u_shadow_opaque, t);
        if (u_any_glass != 0) lit_g += texture(u_shadow_glass, t);
        // far from any shadow edge the first taps agree: stop early
        if (i == 3 && u_any_glass == 0 && (lit_o == 0.0 || lit_o == 4.0)) { n = 4; break; }
    }
    // the release's glass blocks shadow rays: glass casts a full shadow, like opaque objects
    float glass = u_any_glass != 0 ? lit_g / float(n) : 1.0;
    return (lit_o / float(n)) * glass;
}

"""

_SHADE_MAIN = """vec3 environment(vec3 r) {
    if (r.z < 0.0) return u_ground_radiance;
    // above the horizon: the lit backdrop that rises on the far side, the dark world elsewhere
    float facing = dot(normalize(r.xy + vec2(1e-6)), u_backdrop_dir);
    float backdrop = smoothstep(-0.3, 0.5, facing) * (1.0 - 0.6 * r.z);
    return u_ground_radiance * BACKDROP_SHARE * backdrop + vec3(u_world) * (0.85 + 0.3 * r.z);
}

void main() {
    vec3 n = normalize(v_normal);
    float shadow = key_light();
    vec3 irradiance = vec3(u_sun * max(dot(n, u_sun_dir), 0.0) + PI * u_world * (0.55 + 0.45 * n.z));
#ifdef FLOOR
    for (int i = 0; i < 3; i++) {
        vec3 l = u_light_pos[i] - v_world;
        float d2 = dot(l, l);
        vec3 ld = l * inversesqrt(d2);
        float cos_l = max(dot(normalize(u_light_pos[i]), ld), 0.0);
        irradiance += u_light_color[i] * (u_light_power[i] / (PI * d2) * cos_l * (i == 0 ? SHADOW_FLOOR + (1.0 - SHADOW_FLOOR) * shadow : 1.0) * ld.z);
    }
    f_color = vec4(u_rgb / PI * irradiance, 1.0);
#else
    vec3 v = normalize(u_cam - v_world);
    if (dot(n, v) < 0.0 && u_material != 2) n = -n;
    // Blinn-Phong exponents of the release's lobes (about 2 / alpha^2 - 2, alpha = roughness^2;
    // sharp lobes capped where the area lights' size blurs them): metal 0.447 and 0.1 (GGX),
    // rubber sqrt(0.35) (Beckmann), glass 0
    float shininess = u_material == 1 ? 48.0 : (u_material == 2 ? 2000.0 : 14.0);
    float shininess2 = 1000.0;  // metal's sharp lobe
    vec3 highlight = vec3(0.0);
    vec3 highlight2 = vec3(0.0);
    for (int i = 0; i < 3; i++) {
        vec3 l = u_light_pos[i] - v_world;
        float d2 = dot(l, l);
        vec3 ld = l * inversesqrt(d2);
        float cos_l = max(dot(normalize(u_light_pos[i]), ld), 0.0);
        float e = u_light_power[i] / (PI * d2) * cos_l * (i == 0 ? SHADOW_FLOOR + (1.0 - SHADOW_FLOOR) * shadow : 1.0);
        float ndl = max(dot(n, ld), 0.0);
        irradiance += u_light_color[i] * (e * ndl);
        vec3 h = normalize(ld + v);
        float nh = max(dot(n, h), 0.0);
        highlight += u_light_color[i] * (e * ndl * (shininess + 8.0) / (8.0 * PI) * pow(nh, shininess));
        if (u_material == 1)
            highlight2 += u_light_color[i] * (e * ndl * (shininess2 + 8.0) / (8.0 * PI) * pow(nh, shininess2));
    }
    irradiance += PI * u_ground_radiance * 0.5 * (0.5 - 0.5 * n.z);
    vec3 diffuse = u_rgb / PI * irradiance;
    vec3 r = reflect(-v, n);
    float cos_v = max(dot(n, v), 0.0);
    float fresnel = 0.04 + 0.96 * pow(1.0 - cos_v, 5.0);
    vec3 color;
    if (u_material == 0) {
        color = diffuse + 0.12 * highlight + 0.03 * environment(r);
    } else if (u_material == 1) {
        // the release's Mix Shader (0.6) of a rough (0.4) and a sharp (0.6) lobe, in its colour
        color = u_rgb * (environment(r) + 0.4 * highlight + 0.6 * highlight2);
    } else if (u_pass == 1) {
        // in and out through the coloured Glass BSDF: the colour twice
        vec3 tint = GLASS_TRANSMISSION * u_rgb * u_rgb * (1.0 - fresnel);
        f_color = vec4(tint, 1.0);
        return;
    } else {
        color = fresnel * (environment(r) + highlight);
    }
    f_color = vec4(color, 1.0);
#endif
}
"""

_SHADE_FRAGMENT = _SHADE_HEAD + _KEY_LIGHT + _SHADE_MAIN


def view_matrix(
    location: tuple[float, float, float], target: tuple[float, float, float] | None = None
) -> np.ndarray:
    """World-to-camera matrix of a camera at `location` aimed at `target` (default: the origin),
    +z up (OpenGL: -z ahead)."""
    c = np.asarray(location, dtype=np.float64)
    d = -c if target is None or not any(target) else np.asarray(target, dtype=np.float64) - c
    forward = d / np.linalg.norm(d)
    right = np.cross(forward, (0.0, 0.0, 1.0))
    right /= np.linalg.norm(right)
    up = np.cross(right, forward)
    m = np.eye(4)
    m[0, :3], m[1, :3], m[2, :3] = right, up, -forward
    m[:3, 3] = -m[:3, :3] @ c
    return m


def projection_matrix(width: int, height: int, hfov: float) -> np.ndarray:
    """OpenGL projection that matches `Camera.project` (horizontal field of view, square pixels)."""
    f = 1.0 / math.tan(hfov / 2.0)
    p = np.zeros((4, 4))
    p[0, 0] = f
    p[1, 1] = f * width / height
    p[2, 2] = (FAR + NEAR) / (NEAR - FAR)
    p[2, 3] = 2.0 * FAR * NEAR / (NEAR - FAR)
    p[3, 2] = -1.0
    return p


def _light_viewproj(location: tuple[float, float, float], extent: float) -> np.ndarray:
    d = float(np.linalg.norm(location))
    half = math.atan(extent / d)
    p = projection_matrix(1, 1, 2.0 * half)
    p[2, 2] = (FAR + 1.0) / (1.0 - FAR)
    p[2, 3] = 2.0 * FAR * 1.0 / (1.0 - FAR)
    return p @ view_matrix(location)


def _gl(m: np.ndarray) -> bytes:
    """A matrix as OpenGL wants it (column major float32)."""
    return np.ascontiguousarray(m.T, dtype=np.float32).tobytes()


def _srgb_table(n: int = 1 << 14) -> np.ndarray:
    x = np.linspace(0.0, 1.0, n)
    y = np.where(x <= 0.0031308, 12.92 * x, 1.055 * np.power(x, 1.0 / 2.4) - 0.055)
    return np.rint(y * 255.0).astype(np.uint8)


_SRGB = _srgb_table()


def linear_to_srgb(x: np.ndarray) -> np.ndarray:
    """sRGB encoding (8 bits) of linear values clipped to 0..1, through a 16384-entry table."""
    idx = np.clip(x, 0.0, 1.0) * (len(_SRGB) - 1) + 0.5
    return _SRGB[idx.astype(np.int32)]


def _load_llvm_users_first() -> None:
    """Import triton (torch's compiler, when installed) before Mesa loads its LLVM: the other
    order crashes the process (a segmentation fault as soon as torchvision, Lightning or
    torch.compile imports triton after a context exists; seen with Mesa llvmpipe and triton 3)."""
    import importlib.util

    if importlib.util.find_spec("triton") is not None:
        with contextlib.suppress(Exception):
            import triton  # noqa: F401


def create_context(backend: str | None = None):
    """A headless moderngl context: EGL first (Mesa's llvmpipe or a GPU driver), then the default."""
    import moderngl

    _load_llvm_users_first()

    errors = []
    for b in [backend] if backend else ["egl", None]:
        try:
            return (
                moderngl.create_standalone_context(backend=b)
                if b
                else moderngl.create_standalone_context()
            )
        except Exception as err:  # report every backend's failure at once
            errors.append(f"{b or 'default'}: {err}")
    raise RuntimeError(
        "no headless OpenGL context (install Mesa's EGL: libegl1 libgl1-mesa-dri libegl-mesa0): "
        + "; ".join(errors)
    )


class RasterRenderer:
    """Renders `SceneDescription`s with OpenGL 3.3 through moderngl. One per process; reuse it.

    Args:
        preset: the quality preset (its `msaa`).
        gl_backend: moderngl's context backend ("egl"; None tries EGL, then the default).
        shapes: shape name -> unit mesh (default: `meshes.unit_mesh` of cube, sphere, cylinder).
        shadow_extent: half size (scene units) of the square the key light's shadow map covers.
        shadow_size: texels of the shadow map's side.
    """

    backend = "raster"

    def __init__(
        self,
        preset: Preset,
        gl_backend: str | None = None,
        shapes: Mapping[str, meshes.Mesh] | None = None,
        shadow_extent: float = SHADOW_EXTENT,
        shadow_size: int = SHADOW_SIZE,
    ):
        self.preset = preset
        self.shadow_extent = shadow_extent
        self.shadow_size = shadow_size
        self.ctx = create_context(gl_backend)
        self.device = self.ctx.info.get("GL_RENDERER", "?")
        ctx = self.ctx
        self.shade = ctx.program(
            vertex_shader=_VERTEX, fragment_shader="#version 330\n" + _SHADE_FRAGMENT
        )
        self.floor = ctx.program(
            vertex_shader=_VERTEX, fragment_shader="#version 330\n#define FLOOR\n" + _SHADE_FRAGMENT
        )
        self.depth = ctx.program(vertex_shader=_VERTEX, fragment_shader=_DEPTH_FRAGMENT)
        self.index = ctx.program(vertex_shader=_VERTEX, fragment_shader=_INDEX_FRAGMENT)
        self._vaos: dict[tuple[str, str], object] = {}
        self._buffers = {}
        if shapes is None:
            shapes = {shape: meshes.unit_mesh(shape) for shape in SHAPES}
        for shape, mesh in shapes.items():
            pos, nrm = mesh.triangles()
            self._buffers[shape] = np.concatenate([pos, nrm], axis=1).astype(np.float32)
        self._shadow_tex = {}
        self._shadow_fbo = {}
        for kind in ("opaque", "glass"):
            tex = ctx.depth_texture((shadow_size, shadow_size))
            tex.compare_func = "<="
            tex.repeat_x = tex.repeat_y = False
            self._shadow_tex[kind] = tex
            self._shadow_fbo[kind] = ctx.framebuffer(depth_attachment=tex)
        self._fbos: dict[tuple[str, int, int], object] = {}

    # --- resources -----------------------------------------------------------------------------
    def _vao(self, program_name: str, key: str, data: np.ndarray | None = None):
        vao = self._vaos.get((program_name, key))
        if vao is None:
            if key not in self._buffers:
                self._buffers[key] = data
            buf = self._buffers[key]
            vbo = self.ctx.buffer(buf.tobytes())
            prog = getattr(self, program_name)
            attrs = ["in_pos"] + (["in_normal"] if "in_normal" in prog else [])
            fmt = "3f 3f" if len(attrs) == 2 else "3f 12x"
            vao = self.ctx.vertex_array(prog, [(vbo, fmt, *attrs)])
            self._vaos[(program_name, key)] = vao
        return vao

    def _floor_vao(self, program_name: str, desc: SceneDescription):
        """(ground, lines or None) vertex arrays; the lines are those of the first scene drawn."""
        h = GROUND_HALF_SIZE
        if "ground" not in self._buffers:
            quad = np.array(
                [[-h, -h, 0], [h, -h, 0], [h, h, 0], [-h, -h, 0], [h, h, 0], [-h, h, 0]]
            )
            self._buffers["ground"] = np.concatenate(
                [quad, np.tile([0.0, 0.0, 1.0], (6, 1))], axis=1
            ).astype(np.float32)
            quads = desc.floor_lines()
            if quads:
                tris = np.concatenate([q[[0, 1, 2, 0, 2, 3]] for q in quads])
                self._buffers["lines"] = np.concatenate(
                    [tris, np.tile([0.0, 0.0, 1.0], (len(tris), 1))], axis=1
                ).astype(np.float32)
        lines = self._vao(program_name, "lines") if "lines" in self._buffers else None
        return self._vao(program_name, "ground"), lines

    def _fbo(self, kind: str, width: int, height: int):
        key = (kind, width, height)
        fbo = self._fbos.get(key)
        if fbo is None:
            if kind == "msaa":
                n = min(self.preset.msaa, self.ctx.max_samples)
                color = self.ctx.renderbuffer((width, height), 4, samples=n, dtype="f2")
                depth = self.ctx.depth_renderbuffer((width, height), samples=n)
            else:
                color = self.ctx.texture((width, height), 4 if kind == "color" else 1, dtype="f4")
                depth = self.ctx.depth_renderbuffer((width, height))
            fbo = self.ctx.framebuffer(color_attachments=[color], depth_attachment=depth)
            self._fbos[key] = fbo
        return fbo

    @staticmethod
    def viewproj(desc: SceneDescription) -> np.ndarray:
        """The camera's view-projection matrix of a scene."""
        w, h = desc.width, desc.height
        return projection_matrix(w, h, desc.hfov) @ view_matrix(desc.camera, desc.camera_target)

    @staticmethod
    def _set_model(prog, model: np.ndarray) -> None:
        prog["u_model"].write(_gl(model))
        if "u_normal_mat" in prog:
            nm = np.linalg.inv(model[:3, :3]).T
            nm /= np.cbrt(abs(np.linalg.det(nm)))
            prog["u_normal_mat"].write(_gl(nm))

    # --- passes --------------------------------------------------------------------------------
    def _shadow_pass(self, desc: SceneDescription, light_vp: np.ndarray) -> None:
        import moderngl

        ctx, prog = self.ctx, self.depth
        prog["u_viewproj"].write(_gl(light_vp))
        ctx.enable(moderngl.DEPTH_TEST)
        ctx.disable(moderngl.CULL_FACE)
        ctx.polygon_offset = (2.0, 4.0)
        for kind in ("opaque", "glass"):
            fbo = self._shadow_fbo[kind]
            fbo.use()
            fbo.clear(depth=1.0)
            for o in desc.objects:
                if (o.material == "glass") == (kind == "glass"):
                    self._set_model(prog, o.matrix())
                    self._vao("depth", o.shape).render()
        ctx.polygon_offset = (0.0, 0.0)

    def render_mask(self, desc: SceneDescription) -> np.ndarray:
        """The object-index mask (H, W) int16, -1 where no object shows (pixel-centre samples)."""
        with self.ctx:  # its own context current: another renderer of the process may have its own
            return self._render_mask(desc)

    def _render_mask(self, desc: SceneDescription) -> np.ndarray:
        import moderngl

        ctx, prog = self.ctx, self.index
        w, h = desc.width, desc.height
        fbo = self._fbo("index", w, h)
        fbo.use()
        fbo.clear(0.0, 0.0, 0.0, 0.0, depth=1.0)
        ctx.enable(moderngl.DEPTH_TEST)
        ctx.disable(moderngl.BLEND | moderngl.CULL_FACE)
        prog["u_viewproj"].write(_gl(self.viewproj(desc)))
        for o in desc.objects:
            self._set_model(prog, o.matrix())
            prog["u_code"].value = float(o.index + 1)
            self._vao("index", o.shape).render()
        data = np.frombuffer(fbo.read(components=1, dtype="f4"), dtype=np.float32)
        return (np.rint(data.reshape(h, w)[::-1]).astype(np.int16) - 1).copy()

    def _prepare(self, desc: SceneDescription) -> None:
        """The key light's shadow maps of the scene's objects, bound, and every shading uniform."""
        lights = {light.name: light for light in desc.lights}
        light_vp = _light_viewproj(lights["key"].location, self.shadow_extent)
        self._shadow_pass(desc, light_vp)
        self._shadow_tex["opaque"].use(0)
        self._shadow_tex["glass"].use(1)
        bias = np.array([[0.5, 0, 0, 0.5], [0, 0.5, 0, 0.5], [0, 0, 0.5, 0.5], [0, 0, 0, 1.0]])
        area = [lights[n] for n in ("key", "fill", "back")]
        sun = lights["sun"]
        sun_dir = np.asarray(sun.location, dtype=np.float64)
        matrices = {
            "u_shadow_mat": bias @ light_vp,
            "u_viewproj": self.viewproj(desc),
        }
        values = {
            "u_shadow_radius": 6.0 / self.shadow_size,
            "u_backdrop_dir": BACKDROP_DIR,
            "u_any_glass": int(any(o.material == "glass" for o in desc.objects)),
            "u_shadow_opaque": 0,
            "u_shadow_glass": 1,
            "u_sun_dir": tuple(sun_dir / np.linalg.norm(sun_dir)),
            "u_sun": sun.power,
            "u_world": desc.world_strength,
            "u_ground_radiance": tuple(self._ground_radiance(desc)),
            "u_cam": tuple(desc.camera),
            "u_pass": 0,
        }
        arrays = {
            "u_light_pos": np.array([a.location for a in area], dtype=np.float32),
            "u_light_power": np.array([a.power for a in area], dtype=np.float32),
            "u_light_color": np.array([a.color for a in area], dtype=np.float32),
        }
        for p in (self.shade, self.floor):
            for name, m in matrices.items():
                p[name].write(_gl(m))
            for name, a in arrays.items():
                p[name].write(a.tobytes())
            for name, v in values.items():
                if name in p:
                    p[name].value = v

    def render_image(self, desc: SceneDescription) -> np.ndarray:
        """The colour image (H, W, 3) uint8."""
        with self.ctx:  # its own context current (see render_mask)
            return self._render_image(desc)

    def _render_image(self, desc: SceneDescription) -> np.ndarray:
        import moderngl

        ctx, prog = self.ctx, self.shade
        w, h = desc.width, desc.height
        self._prepare(desc)
        fbo = self._fbo("msaa" if self.preset.msaa else "color", w, h)
        fbo.use()
        fbo.clear(0.0, 0.0, 0.0, 1.0, depth=1.0)
        ctx.enable(moderngl.DEPTH_TEST)
        ctx.disable(moderngl.BLEND | moderngl.CULL_FACE)
        # opaque objects front to back, then the floor: early depth tests skip hidden fragments
        c = np.asarray(desc.camera)
        by_distance = sorted(
            desc.objects, key=lambda o: float(np.linalg.norm(np.asarray(o.location) - c))
        )
        for o in by_distance:
            if o.material != "glass":
                self._draw(o)
        ground, lines = self._floor_vao("floor", desc)
        self._set_model(self.floor, np.eye(4))
        self.floor["u_rgb"].value = desc.ground_rgb
        ground.render()
        if lines is not None:
            self.floor["u_rgb"].value = desc.line_rgb
            ctx.depth_func = "<="
            lines.render()
            ctx.depth_func = "<"
        glass = [o for o in reversed(by_distance) if o.material == "glass"]
        if glass:
            ctx.enable(moderngl.BLEND | moderngl.CULL_FACE)
            ctx.cull_face = "back"
            for o in glass:
                ctx.blend_func = moderngl.DST_COLOR, moderngl.ZERO
                prog["u_pass"].value = 1
                ctx.depth_func = "<"
                self._draw(o)
                ctx.blend_func = moderngl.ONE, moderngl.ONE
                prog["u_pass"].value = 2
                ctx.depth_func = "<="
                self._draw(o)
            ctx.depth_func = "<"
            ctx.disable(moderngl.BLEND | moderngl.CULL_FACE)
        if self.preset.msaa:
            resolved = self._fbo("color", w, h)
            ctx.copy_framebuffer(resolved, fbo)
            fbo = resolved
        data = np.frombuffer(fbo.read(components=3, dtype="f4"), dtype=np.float32)
        return linear_to_srgb(data.reshape(h, w, 3)[::-1])

    def _draw(self, o) -> None:
        prog = self.shade
        self._set_model(prog, o.matrix())
        prog["u_material"].value = MATERIAL_ID[o.material]
        prog["u_rgb"].value = o.rgb
        self._vao("shade", o.shape).render()

    @staticmethod
    def _ground_radiance(desc: SceneDescription) -> np.ndarray:
        """Outgoing radiance of the unshadowed ground at the origin (for reflections and bounce)."""
        e = 0.0
        for light in desc.lights:
            loc = np.asarray(light.location, dtype=np.float64)
            if light.kind == "sun":
                e += light.power * max(loc[2] / np.linalg.norm(loc), 0.0)
            else:
                d2 = float(loc @ loc)
                e += light.power / (math.pi * d2) * loc[2] / math.sqrt(d2) * np.asarray(light.color)
        e += math.pi * desc.world_strength
        return np.asarray(desc.ground_rgb) / math.pi * e

    def render(
        self, desc: SceneDescription, image: bool = True
    ) -> tuple[np.ndarray | None, np.ndarray]:
        """(image or None, mask) of one scene."""
        img = self.render_image(desc) if image else None
        return img, self.render_mask(desc)

    def close(self) -> None:
        self.ctx.release()


def set_threads(n: int) -> None:
    """Ask Mesa's llvmpipe to use `n` threads (before the first context is made)."""
    os.environ["LP_NUM_THREADS"] = str(n)
