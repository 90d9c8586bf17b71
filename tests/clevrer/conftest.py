"""A small generated CLEVRER set (3 videos, raster) shared by the tests of commands that read one."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def rendered_set(tmp_path_factory) -> Path:
    pytest.importorskip("pybullet")
    pytest.importorskip("av")
    from tvr.clevrer.generate.config import GenerateConfig
    from tvr.clevrer.generate.job import generate

    out = tmp_path_factory.mktemp("clevrer-rendered") / "set"
    generate(GenerateConfig(num=3, seed=1, shard_size=2).validate(), out, progress=False)
    return out


@pytest.fixture(scope="session")
def symbolic_set(tmp_path_factory) -> Path:
    """8 symbolic videos (no rendering): questions with programs and ground-truth dynamics, for
    the models' tests (train 0-3, validation 4-5, test 6-7)."""
    pytest.importorskip("pybullet")
    from tvr.clevrer.generate.config import GenerateConfig
    from tvr.clevrer.generate.job import generate

    out = tmp_path_factory.mktemp("clevrer-symbolic") / "set"
    config = GenerateConfig(num=8, seed=3, shard_size=8, backend="none", masks=False)
    generate(config.validate(), out, progress=False)
    return out
