"""Training tests need torch, torchvision and lightning (the train extra); skipped without them."""

import pytest

pytest.importorskip("torch")
pytest.importorskip("torchvision")
pytest.importorskip("lightning")
