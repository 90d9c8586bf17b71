import pytest

pytest.importorskip("torch")
pytest.importorskip("torchvision")
