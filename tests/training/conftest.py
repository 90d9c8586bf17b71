import pytest

pytest.importorskip("torch")
pytest.importorskip("torchvision")
pytest.importorskip("lightning")
