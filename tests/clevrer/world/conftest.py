"""Shared simulated videos for the world tests (a few, simulated once per session)."""

from __future__ import annotations

import pytest

from tvr.clevrer.world.video import VideoSim, simulate_video


@pytest.fixture(scope="session")
def videos() -> list[VideoSim]:
    """Three videos of seed 0 (about 0.2 s each)."""
    return [simulate_video(0, i) for i in range(3)]


@pytest.fixture(scope="session")
def more_videos(videos) -> list[VideoSim]:
    """Nine more (about 1.7 s) for properties that fail rarely. Video 17 is one where solving
    Bullet's islands in separate batches (physics.SOLVER_BATCH = 2) leaks bits from a removed
    object into the others' motion before it touches them."""
    return videos + [simulate_video(0, i) for i in (*range(3, 11), 17)]
