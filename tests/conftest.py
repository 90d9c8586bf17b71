"""Test-wide fixtures: folder locks taken by library calls end with each test."""

from __future__ import annotations

import pytest

from tvr.core.output_lock import release_all


@pytest.fixture(autouse=True)
def _release_output_locks():
    """A test that writes job folders through the library (not the CLI, which releases its
    locks when a command ends) leaves no lock, and no open file, to the next test."""
    yield
    release_all()
