"""Model tests need torch and torchvision (the train extra); skipped without them."""

import pytest

pytest.importorskip("torch")
pytest.importorskip("torchvision")
