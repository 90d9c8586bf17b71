"""Fixtures of the web app tests: tiny real datasets made with `tvr generate`'s library function
(raster backend, preview preset; a few samples per split), and app/client factories."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from fastapi.testclient import TestClient

from tvr.trance.generate.config import DatasetConfig
from tvr.trance.generate.job import generate_dataset
from tvr.trance.web.app import create_app
from tvr.web.config import ServeConfig

SPLITS = {"train": 3, "test": 6}


@pytest.fixture(scope="session")
def datasets(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """setting -> dataset folder: Basic, Event and View, 3 train and 6 test samples each."""
    root = tmp_path_factory.mktemp("web-data")
    out = {}
    for seed, setting in enumerate(("basic", "event", "view")):
        config = DatasetConfig(
            setting=setting, split_sizes=dict(SPLITS), seed=seed, backend="raster", preset="preview"
        )
        generate_dataset(config, root / setting, progress=False)
        out[setting] = root / setting
    return out


@pytest.fixture
def make_client(datasets, tmp_path):
    """make_client(**ServeConfig options) -> a TestClient of a new app on this test's database."""

    def make(**kw) -> TestClient:
        kw.setdefault("db_url", f"sqlite:///{tmp_path / 'results.sqlite'}")
        kw.setdefault("practice", 1)
        config = ServeConfig(data=tuple(datasets.values()), **kw)
        return TestClient(create_app(config), base_url="http://localhost")

    return make
