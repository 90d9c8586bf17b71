"""Benchmarks register their web pages; the shared factory serves a benchmark's pages by name."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from fastapi import APIRouter
from fastapi.testclient import TestClient

from tvr.core.errors import UserError
from tvr.core.plugins import load_benchmarks
from tvr.web import pages as web_pages
from tvr.web.config import ServeConfig
from tvr.web.factory import create_app
from tvr.web.pages import Pages, pages_factory, register_pages


def test_a_registered_benchmark_is_served_by_name_and_an_unknown_one_is_a_user_error(
    tmp_path: Path, monkeypatch
):
    load_benchmarks()  # the installed benchmarks register now, not into the patched registry
    monkeypatch.setattr(web_pages, "_PAGES", dict(web_pages._PAGES))
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "error.html").write_text("{{ message }}")
    router = APIRouter()

    @router.get("/hello")
    def hello() -> dict:
        return {"hello": "toy"}

    opened: list[ServeConfig] = []

    def toy_pages(config: ServeConfig) -> Pages:
        opened.append(config)
        return Pages(title="toy", routers=[router], templates=tmp_path / "templates")

    register_pages("toy", toy_pages)
    config = ServeConfig(data=(tmp_path,), db_url=f"sqlite:///{tmp_path}/t.sqlite")
    client = TestClient(create_app(config, "toy"), base_url="http://localhost")
    assert client.get("/hello").json() == {"hello": "toy"}
    assert [c.data for c in opened] == [(tmp_path,)]
    with pytest.raises(UserError, match=r"no web pages for benchmark 'nope'; registered: .*toy"):
        create_app(config, "nope")


def test_trance_registers_its_pages_through_its_entry_point():
    from tvr.trance.web.app import trance_pages

    factory = pages_factory("trance")
    assert factory.__module__ == "tvr.trance.plugin"
    assert callable(factory) and trance_pages.__module__ == "tvr.trance.web.app"
