"""What every page of every `tvr serve` app shares (imported by each server's tests): the shared
layout (`tvr/web/templates/layout.html`: its `data-layout` mark, header and footer), the one
stylesheet linked first and served, and every page route of an app checked."""

from __future__ import annotations

import re
from pathlib import Path

from tvr.web.factory import STYLESHEET_URL

#: what the shared layout writes on every page it makes
LAYOUT_MARK = '<html lang="en" data-layout="tvr">'
STYLESHEET_LINK = re.compile(r'<link rel="stylesheet" href="([^"]+)">')


def page_routes(app) -> set[str]:
    """The path templates of `app`'s GET routes that answer with a page (an HTMLResponse)."""
    from fastapi.responses import HTMLResponse
    from fastapi.routing import APIRoute

    out = set()
    for route in app.routes:
        if isinstance(route, APIRoute) and "GET" in route.methods:
            cls = getattr(route.response_class, "value", route.response_class)  # a placeholder
            if isinstance(cls, type) and issubclass(cls, HTMLResponse):
                out.add(route.path)
    return out


def assert_shared_layout(html: str, where: str) -> list[str]:
    """`html` is a page of the shared layout with the shared stylesheet first; its stylesheets."""
    assert html.startswith("<!doctype html>") and LAYOUT_MARK in html, where
    assert '<header class="top">' in html, where
    assert '<a class="brand" href="/"><b>tvr</b> · ' in html, where
    assert '<footer class="bottom">' in html, where
    sheets = STYLESHEET_LINK.findall(html)
    assert sheets and sheets[0] == STYLESHEET_URL, (where, sheets)
    return sheets


def assert_stylesheet_served(client, url: str = STYLESHEET_URL) -> str:
    r = client.get(url)
    assert r.status_code == 200, url
    assert r.headers["content-type"].startswith("text/css"), (url, r.headers["content-type"])
    return r.text


def assert_every_page_has_the_layout(client, pages: dict[str, tuple[str, ...]]) -> int:
    """`pages`: every page route of the client's app (its path template) -> URLs of it to get.
    Each answer must be an HTML page of the shared layout (a 200 page or an error page) whose
    stylesheets are all served as CSS; a page route left out of `pages` fails. The number of
    pages checked."""
    missing = page_routes(client.app) - set(pages)
    assert not missing, f"page routes not checked: {sorted(missing)}"
    checked, sheets = 0, set()
    for template, urls in pages.items():
        assert urls, template
        for url in urls:
            r = client.get(url, follow_redirects=False)
            assert r.status_code == 200 or 400 <= r.status_code < 500, (url, r.status_code)
            assert r.headers["content-type"].startswith("text/html"), url
            sheets.update(assert_shared_layout(r.text, url))
            checked += 1
    assert_stylesheet_served(client)
    for url in sheets:
        assert_stylesheet_served(client, url)
    return checked


def assert_error_page(client, url: str, status: int, message: str) -> None:
    """`url` answers the shared error page (tvr/web/templates/error.html) with `message`."""
    r = client.get(url, follow_redirects=False)
    assert r.status_code == status, (url, r.status_code)
    assert_shared_layout(r.text, url)
    assert '<div class="card narrow" id="error"><h1>Sorry</h1>' in r.text, url
    assert f'<p class="error">{message}</p>' in r.text, url


def assert_templates_extend_the_layout(templates: Path) -> None:
    """Every page template of a benchmark (not a `_partial.html`) extends its base.html, which
    extends the shared layout.html (so pages no route reaches in a test share it too), and the
    benchmark has no error page of its own."""
    base = (templates / "base.html").read_text()
    assert '{% extends "layout.html" %}' in base
    assert not (templates / "error.html").exists(), "the error page is the shared error.html"
    for path in sorted(templates.glob("*.html")):
        if path.name != "base.html" and not path.name.startswith("_"):
            assert path.read_text().lstrip().startswith('{% extends "base.html" %}'), path.name
