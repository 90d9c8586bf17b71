"""Fixtures of the VisualTrans verification pages' tests: a tiny build, clients of the verify
server and of its admin server (one store, BUILD/verify/verify.sqlite)."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")
pytest.importorskip("PIL")

from fastapi.testclient import TestClient

from tests.visualtrans.web.build import make_build
from tvr.visualtrans.web.verify_export import store_url
from tvr.web.config import ServeConfig
from tvr.web.factory import create_app


@pytest.fixture
def build(tmp_path):
    return make_build(tmp_path / "build")[0]


@pytest.fixture
def make_config(build):
    """make_config(admin=False, **options) -> the ServeConfig `tvr serve --benchmark visualtrans
    --verify --data BUILD` makes (with --viewer --admin for the admin server)."""

    def make(admin: bool = False, verifiers: int = 2, **options) -> ServeConfig:
        (build / "verify").mkdir(exist_ok=True)  # the admin server opens the verify server's store
        return ServeConfig(data=(build,), db_url=store_url(build), viewer=admin, admin=admin,
                           extra={"verify": True, "verifiers": verifiers}, **options)  # fmt: skip

    return make


@pytest.fixture
def make_client(make_config):
    def make(**options) -> TestClient:
        return TestClient(create_app(make_config(**options), "visualtrans"),
                          base_url="http://localhost")  # fmt: skip

    return make
