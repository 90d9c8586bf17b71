"""A video renders to the same bytes in separate processes, whatever their heap holds.

The scene has an object entering from the right (its shadow reaches the view first). Each
process fills fresh heap memory with a different byte (glibc's malloc perturbation) and uses a
different llvmpipe thread count, so a read of uninitialised memory or a thread race anywhere in
rendering or encoding shows as a difference. On an AVX-512 machine x264's AVX-512 macroblock-tree
code made the mp4 bytes differ here (see tvr.clevrer.render.mp4).
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("av")

from tvr.clevrer.render.mp4 import X86_ASM, x264_options

N_FRAMES = 12

_SCRIPT = """
import math, sys
from types import SimpleNamespace
import numpy as np
from tvr.clevrer.render import render_video
from tvr.clevrer.render.scene import OBJECT_RADIUS

out, n = sys.argv[1], int(sys.argv[2])
# (color, material, shape, start (x, y), velocity per frame (x, y)); the cylinder starts right
# of the view (about 70 px past its border) and enters it near the end
objects = [
    ("red", "rubber", "cube", (-1.0, -0.5), (0.0, 0.0)),
    ("blue", "metal", "sphere", (1.0, 1.0), (-0.03, -0.02)),
    ("yellow", "rubber", "cylinder", (5.2, 2.6), (-0.08, -0.04)),
]
loc = np.zeros((n, len(objects), 3))
quat = np.zeros((n, len(objects), 4))
quat[..., 3] = 1.0
for i, (_, _, shape, start, vel) in enumerate(objects):
    z = OBJECT_RADIUS / math.sqrt(2.0) if shape == "cube" else OBJECT_RADIUS
    for t in range(n):
        loc[t, i] = (start[0] + vel[0] * t, start[1] + vel[1] * t, z)
trace = SimpleNamespace(location=loc, orientation=quat, present=np.ones(len(objects), bool))
props = [{"color": c, "material": m, "shape": s} for c, m, s, *_ in objects]
render_video(props, trace, out, n_frames=n, masks=False, frames=True)
"""


def test_x264_simd_is_capped_on_x86_only():
    assert x264_options(machine="x86_64")["x264-params"] == f"asm={X86_ASM}"
    assert x264_options(machine="AMD64")["x264-params"] == f"asm={X86_ASM}"
    assert "x264-params" not in x264_options(machine="aarch64")
    assert x264_options(20, "fast", machine="arm64") == {"crf": "20", "preset": "fast"}


def test_entering_object_video_is_identical_across_processes(raster, tmp_path):
    # `raster` skips where no OpenGL context can be made
    procs = []
    for k, (fill, threads) in enumerate(((1, "1"), (2, "2"))):
        env = dict(os.environ)
        env.update(
            GLIBC_TUNABLES=f"glibc.malloc.perturb={fill}",
            MALLOC_PERTURB_=str(fill),
            LP_NUM_THREADS=threads,
            HF_HUB_OFFLINE="1",
        )
        out = tmp_path / f"run{k}"
        cmd = [sys.executable, "-c", _SCRIPT, str(out), str(N_FRAMES)]
        procs.append((out, subprocess.Popen(cmd, env=env, stderr=subprocess.PIPE, text=True)))
    for _, p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err[-2000:]
    (a, _), (b, _) = procs
    pngs = sorted(p.name for p in (a / "video_00000").iterdir())
    assert pngs == [f"{t:05d}.png" for t in range(N_FRAMES)]
    for name in pngs:  # the frames, losslessly
        assert (a / "video_00000" / name).read_bytes() == (b / "video_00000" / name).read_bytes()
    assert (a / "video_00000.mp4").read_bytes() == (b / "video_00000.mp4").read_bytes()
