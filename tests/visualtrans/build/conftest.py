"""A tiny rendered testbed (two scenes, four episodes each, 64 x 48, two frames a move),
made once per test session."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def tiny_testbed(tmp_path_factory) -> Path:
    pytest.importorskip("pydantic")
    pytest.importorskip("av")
    pytest.importorskip("moderngl")
    import tvr.visualtrans.testbed.world as world

    out = tmp_path_factory.mktemp("vt-testbed")
    old = world.FRAMES_PER_MOVE
    world.FRAMES_PER_MOVE = 2
    try:
        world.make_testbed(out, 4, 0, ("build_unstack_lego", "pick_place_food"), (64, 48))
    finally:
        world.FRAMES_PER_MOVE = old
    return out


@pytest.fixture
def testbed_copy(tiny_testbed, tmp_path) -> Path:
    dst = tmp_path / "tb"
    shutil.copytree(tiny_testbed, dst)
    return dst
