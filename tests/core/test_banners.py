"""Third-party banners dropped, everything else kept (tvr.core.banners), and no pybullet banner on
a command that imports pybullet."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

# a child that writes to both descriptors from Python and from C (libc's printf, buffered when
# stdout is a pipe; a raw write to fd 2, as pybullet's banner), inside and outside the block
CHILD = textwrap.dedent(
    """
    import ctypes, os, sys, warnings
    from tvr.core.banners import dropped_lines

    libc = ctypes.CDLL(None)
    print("before", flush=True)
    with dropped_lines(r"^BANNER "):
        print("ours inside")
        print("ours on stderr inside", file=sys.stderr)
        libc.printf(b"BANNER from printf\\n")
        libc.printf(b"kept from printf\\n")
        os.write(2, b"BANNER on fd 2\\n")
        os.write(2, b"a C library's error on fd 2\\n")
        warnings.warn("a warning inside")
    print("after")
    print("after on stderr", file=sys.stderr)
    """
)


def test_dropped_lines_drops_the_banner_and_keeps_every_other_line():
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "BANNER" not in done.stdout + done.stderr
    assert done.stdout.splitlines() == ["before", "ours inside", "kept from printf", "after"]
    assert "ours on stderr inside" in done.stderr
    assert "a C library's error on fd 2" in done.stderr
    assert "a warning inside" in done.stderr
    assert done.stderr.rstrip().endswith("after on stderr")


def test_dropped_lines_restores_the_descriptors_when_the_block_raises():
    child = textwrap.dedent(
        """
        import os
        from tvr.core.banners import dropped_lines
        try:
            with dropped_lines("^BANNER"):
                os.write(1, b"BANNER\\nkept\\n")
                raise ValueError("boom")
        except ValueError:
            pass
        print("still printing")
        """
    )
    done = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["kept", "still printing"]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_no_pybullet_banner_from_a_command_that_imports_it(tmp_path, workers):
    """`tvr clevrer generate` imports pybullet (in its spawned workers too): its build-time line
    shows in neither stream, whether they are pipes (here) or a terminal."""
    pytest.importorskip("pybullet")
    done = subprocess.run(
        [sys.executable, "-m", "tvr", "clevrer", "generate", "--num", "2", "--shard-size", "1",
         "--backend", "none", "--no-dynamics", "--no-masks", "--workers", workers,
         "--out", str(tmp_path / "set")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "wrote 2 videos" in done.stdout
    assert "build time" not in done.stdout
    assert "build time" not in done.stderr
