"""Every rating page is a page of the shared layout with the shared stylesheet; its error pages
are the shared one."""

from __future__ import annotations

from pathlib import Path

import tvr.vtt.web
from tests.web.layout import (
    assert_every_page_has_the_layout,
    assert_shared_layout,
    assert_templates_extend_the_layout,
)
from tvr.web.csrf import FORM_EXPIRED

TEMPLATES = Path(tvr.vtt.web.__file__).parent / "templates"


def test_every_rating_page_has_the_shared_layout(make_client):
    client = make_client()
    assert_shared_layout(client.get("/").text, "/")  # signed out
    assert client.post("/api/start", json={"name": "Ada"}).status_code == 200
    pages = {"/": ("/",), "/welcome": ("/welcome",), "/rate": ("/rate",), "/leave": ("/leave",)}
    assert assert_every_page_has_the_layout(client, pages) == 4
    rate = client.get("/rate").text
    assert 'id="rating"' in rate and 'table class="guidelines"' in rate  # VTT's own page inside


def test_the_done_page_and_the_error_page_have_the_shared_layout(make_client):
    client = make_client()
    assert client.post("/api/start", json={"name": "Ada"}).status_code == 200
    client.app.state.study.units.clear()  # nothing left to rate
    done = client.get("/rate")
    assert done.status_code == 200 and 'id="done"' in done.text
    assert_shared_layout(done.text, "/rate")
    refused = client.post("/start", data={"name": "Bo"})  # a form without its token
    assert refused.status_code == 403 and 'id="error"' in refused.text
    assert_shared_layout(refused.text, "/start")
    assert "<title>Refused · tvr</title>" in refused.text and FORM_EXPIRED in refused.text


def test_every_template_extends_the_shared_layout():
    assert_templates_extend_the_layout(TEMPLATES)
    css = (TEMPLATES.parent / "static" / "style.css").read_text()
    assert "header.top" not in css and ":root" not in css  # the common look is tvr.css's only
