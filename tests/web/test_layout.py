"""The one look of every app, without any benchmark: a toy benchmark whose base.html extends the
shared layout gets the shared stylesheet (served by the factory, before its own static files),
the header, the footer and the shared error page."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse
from fastapi.testclient import TestClient

from tests.web.layout import (
    assert_error_page,
    assert_every_page_has_the_layout,
    assert_stylesheet_served,
)
from tvr.web.config import ServeConfig
from tvr.web.errors import PageError
from tvr.web.factory import SHARED_STATIC, SHARED_TEMPLATES, create_app
from tvr.web.pages import Pages
from tvr.web.responses import render

TEMPLATES = {
    "base.html": '{% extends "layout.html" %}{% block title %}Toy{% endblock %}'
    '{% block styles %}<link rel="stylesheet" href="/static/style.css">{% endblock %}'
    '{% block benchmark %}Toy game{% endblock %}{% block nav %}<a href="/">Play</a>{% endblock %}',
    "play.html": '{% extends "base.html" %}{% block title %}Level {{ level }}{% endblock %}'
    '{% block content %}<p id="level">{{ level }}</p>{% endblock %}',
}


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    (tmp_path / "templates").mkdir()
    for name, text in TEMPLATES.items():
        (tmp_path / "templates" / name).write_text(text)
    static = tmp_path / "static"
    (static / "tvr").mkdir(parents=True)
    (static / "style.css").write_text("#level { color: red; }")
    (static / "tvr" / "tvr.css").write_text("/* the toy's own, never served */")
    router = APIRouter()

    @router.get("/", response_class=HTMLResponse)
    def play(request: Request, level: int = 1) -> HTMLResponse:
        if level > 3:
            raise PageError(f"no level {level}", 404)
        return render(request, "play.html", level=level)

    pages = Pages(title="toy", routers=[router], templates=tmp_path / "templates", static=static)
    config = ServeConfig(data=(tmp_path,), db_url=f"sqlite:///{tmp_path}/t.sqlite")
    return TestClient(create_app(config, lambda _config: pages), base_url="http://localhost")


def test_a_page_has_the_shared_header_nav_footer_and_stylesheet_first(client):
    assert assert_every_page_has_the_layout(client, {"/": ("/", "/?level=2")}) == 2
    page = client.get("/?level=2").text
    assert "<title>Level 2 · tvr</title>" in page
    assert '<span class="page-title">Level 2</span>' in page  # the header: tvr, toy, the page
    assert '<a class="brand" href="/"><b>tvr</b> · Toy game</a>' in page
    assert '<nav><a href="/">Play</a></nav>' in page
    assert page.index("/static/tvr/tvr.css") < page.index("/static/style.css")
    assert "tvr 0.1.0 · Toy game" in page  # the footer


def test_the_shared_stylesheet_is_served_before_the_benchmarks_static_files(client):
    css = assert_stylesheet_served(client)
    assert css == (SHARED_STATIC / "tvr.css").read_text()  # not the toy's static/tvr/tvr.css
    assert ":root" in css and "header.top" in css and "footer.bottom" in css
    assert assert_stylesheet_served(client, "/static/style.css") == "#level { color: red; }"
    assert client.get("/static/tvr/nothing.css").status_code == 404


def test_a_page_error_is_the_shared_error_page(client):
    assert_error_page(client, "/?level=9", 404, "no level 9")
    assert "<title>Not found · tvr</title>" in client.get("/?level=9").text


def test_the_shared_templates_are_the_layout_the_sign_in_and_the_error_page():
    names = sorted(p.name for p in SHARED_TEMPLATES.glob("*.html"))
    assert names == ["error.html", "layout.html", "signin.html"]
    assert '{% extends "base.html" %}' in (SHARED_TEMPLATES / "error.html").read_text()
