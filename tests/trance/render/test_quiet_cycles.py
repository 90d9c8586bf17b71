"""Cycles' GPU-library probe lines ("CUEW/HIPEW initialization failed") never reach the user
(issue 41, point 5): tvr's banner filter drops them, every other line stays."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pytest

from tvr.render.cycles import CYCLES_GPU_PROBE

# the lines as Blender 4/5's Cycles prints them (to file descriptor 1) on a machine without GPUs
PROBE_LINES = [
    "00:01.635  cycles           | WARNING CUEW initialization failed: Error opening the library",
    "00:01.636  cycles           | WARNING HIPEW initialization failed: Error opening HIP dynamic"
    " library",
]

# a child that starts Cycles the way `tvr generate --backend cycles` does (device "auto": the GPU
# probe runs), with lines of its own before, between and after
CHILD = textwrap.dedent(
    """
    import sys
    print("before", flush=True)
    from tvr.trance.render.images import make_renderer
    renderer = make_renderer("cycles", "preview")
    print("device", renderer.device, flush=True)
    print("after on stderr", file=sys.stderr, flush=True)
    renderer.close()
    """
)


def test_the_pattern_drops_the_probe_lines_only():
    drop = re.compile(CYCLES_GPU_PROBE)
    assert all(drop.search(line) for line in PROBE_LINES)
    for kept in (
        "00:01.700  cycles           | WARNING OptiX device has too little memory",
        "Error: Cannot open file /tmp/x.blend",
        "Fra:1 Mem:12.00M | Rendering 1 / 2 samples",
    ):
        assert not drop.search(kept), kept


def test_a_captured_cycles_start_shows_no_probe_line_and_keeps_the_rest():
    pytest.importorskip("bpy")
    done = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout + done.stderr
    assert "initialization failed" not in out, out
    lines = done.stdout.splitlines()
    assert lines[0] == "before"
    assert any(line.startswith("device ") for line in lines), lines
    assert "after on stderr" in done.stderr
