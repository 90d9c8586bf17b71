"""Every page of TRANCE's two servers (the human test and the viewer with --admin) is a page of
the shared layout with the shared stylesheet; its error pages are the shared one."""

from __future__ import annotations

from pathlib import Path

import tvr.trance.web
from tests.web.layout import (
    assert_error_page,
    assert_every_page_has_the_layout,
    assert_shared_layout,
    assert_templates_extend_the_layout,
)
from tvr.web.deps import ADMIN_OFF

TEMPLATES = Path(tvr.trance.web.__file__).parent / "templates"


def test_every_page_of_the_human_test_has_the_shared_layout(make_client):
    client = make_client()
    start = client.get("/").text  # signed out
    assert_shared_layout(start, "/")
    assert 'id="start"' in start and start.count('name="csrf"') == 2
    assert client.post("/api/start", json={"name": "Ada"}).status_code == 200
    pages = {
        "/": ("/",),
        "/welcome/{problem}/{split}": ("/welcome/event/test", "/welcome/nope/test"),
        "/test/{problem}/{split}": ("/test/event/test", "/test/basic/test", "/test/view/test"),
        "/history": ("/history",),
        "/leave": ("/leave",),
        "/admin": ("/admin",),  # the admin-off error page
        "/admin/tester/{tester_id}": ("/admin/tester/1",),
    }
    assert assert_every_page_has_the_layout(client, pages) == 10
    assert 'id="builder"' in client.get("/test/event/test").text  # TRANCE's own page inside
    assert_error_page(client, "/test/nope/test", 404, "no test nope/test on this server")
    assert_error_page(client, "/admin", 404, ADMIN_OFF)


def test_every_page_of_the_viewer_and_admin_has_the_shared_layout(make_client):
    assert make_client().post("/api/start", json={"name": "Ada"}).status_code == 200
    client = make_client(viewer=True, admin=True)
    pages = {
        "/viewer": ("/viewer",),
        "/viewer/{problem}/{split}": ("/viewer/event/test", "/viewer/view/test?steps=2"),
        "/viewer/{problem}/{split}/{index}": ("/viewer/event/test/0", "/viewer/basic/train/1"),
        "/admin": ("/admin",),
        "/admin/tester/{tester_id}": ("/admin/tester/1",),
    }
    assert assert_every_page_has_the_layout(client, pages) == 7
    assert_error_page(client, "/viewer/event/test/99", 404, "no sample 99 in event/test")
    assert_error_page(client, "/admin/tester/99", 404, "no tester 99")


def test_every_template_extends_the_shared_layout():
    assert_templates_extend_the_layout(TEMPLATES)
    css = (TEMPLATES.parent / "static" / "style.css").read_text()
    assert "header.top" not in css and ":root" not in css  # the common look is tvr.css's only
