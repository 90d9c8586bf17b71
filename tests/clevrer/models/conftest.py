"""The models' tests run torch on one thread (the cores are shared), then restore its thread count."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def one_thread():
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
