"""The shared layer's guards against other sites and pages: a state-changing request only from the
app's own pages (Origin, Sec-Fetch-Site), JSON only as exactly application/json, a token in every
form, and JSON nested too deeply for the parser refused with a message."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from fastapi import APIRouter, Depends, Form, Request
from fastapi.testclient import TestClient
from pydantic import BaseModel

from tvr.web.config import ServeConfig
from tvr.web.csrf import CROSS_ORIGIN, CSRF_COOKIE, FORM_EXPIRED, check_form_token
from tvr.web.deps import MAX_DEPTH, json_body
from tvr.web.factory import create_app
from tvr.web.pages import Pages
from tvr.web.responses import render

TEMPLATES = {
    "error.html": "<h1>error</h1><p>{{ message }}</p>",
    "form.html": '<form method="post"><input name="csrf" value="{{ csrf_token }}"></form>',
}


class Body(BaseModel):
    value: Any = None


def routes(calls: list[str]) -> APIRouter:
    router = APIRouter()

    @router.get("/form")
    def form(request: Request):
        return render(request, "form.html")

    @router.post("/form", dependencies=[Depends(check_form_token)])
    def form_post(name: Annotated[str, Form()] = "") -> dict:
        calls.append(f"form {name}")
        return {"ok": name}

    @router.post("/json")
    def json_post(body: Annotated[Body, Depends(json_body(Body))]) -> dict:
        calls.append("json")
        return {"ok": True}

    @router.get("/read")
    def read() -> dict:
        return {"read": True}

    return router


@pytest.fixture
def make(tmp_path: Path):
    (tmp_path / "templates").mkdir()
    for name, text in TEMPLATES.items():
        (tmp_path / "templates" / name).write_text(text)

    def build() -> tuple[TestClient, list[str]]:
        calls: list[str] = []
        pages = Pages(title="t", routers=[routes(calls)], templates=tmp_path / "templates")
        config = ServeConfig(data=(tmp_path,), db_url=f"sqlite:///{tmp_path}/t.sqlite")
        client = TestClient(create_app(config, lambda _c: pages), base_url="http://127.0.0.1:8000")
        return client, calls

    return build


# --- Origin and Sec-Fetch-Site -------------------------------------------------------------------------
CROSS = [
    {"Origin": "http://127.0.0.1:9999"},  # another port of the same host
    {"Origin": "http://evil.example"},
    {"Origin": "null"},
    {"Origin": "https://127.0.0.1:8000"},  # the same host and port over another scheme
    {"Sec-Fetch-Site": "same-site"},
    {"Sec-Fetch-Site": "cross-site"},
    {"Sec-Fetch-Site": "same-site", "Origin": "http://127.0.0.1:8000"},
]


@pytest.mark.parametrize("headers", CROSS)
def test_a_state_change_from_another_origin_is_refused(make, headers):
    client, calls = make()
    r = client.post("/json", json={"value": 1}, headers=headers)
    assert (r.status_code, r.json()) == (403, {"error": CROSS_ORIGIN})
    client.get("/form")
    token = client.cookies[CSRF_COOKIE]
    r = client.post("/form", data={"csrf": token, "name": "x"}, headers=headers)
    assert r.status_code == 403 and CROSS_ORIGIN in r.text and "<h1>error</h1>" in r.text
    assert calls == []


@pytest.mark.parametrize(
    "headers",
    [
        {},  # no browser: curl, scripts, the load test
        {"Origin": "http://127.0.0.1:8000"},
        {"Origin": "http://127.0.0.1:8000", "Sec-Fetch-Site": "same-origin"},
        {"Sec-Fetch-Site": "none"},  # typed by the user
    ],
)
def test_a_state_change_from_the_apps_own_pages_is_accepted(make, headers):
    client, calls = make()
    assert client.post("/json", json={"value": 1}, headers=headers).json() == {"ok": True}
    assert calls == ["json"]


def test_reading_is_not_guarded(make):
    client, _ = make()
    r = client.get(
        "/read", headers={"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}
    )
    assert r.json() == {"read": True}


# --- JSON content type ---------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "content_type",
    [
        "text/plain; x=application/json",
        "text/plain",
        "text/x-application/json",
        "application/jsonx",
        "application/ld+json",
        "multipart/form-data; boundary=application/json",
        "",
    ],
)
def test_json_must_be_exactly_application_json(make, content_type):
    client, calls = make()
    r = client.post("/json", content=b'{"value": 1}', headers={"Content-Type": content_type})
    assert (r.status_code, r.json()) == (
        415,
        {"error": "send JSON (Content-Type: application/json)"},
    )
    assert calls == []


@pytest.mark.parametrize(
    "content_type", ["application/json", "Application/JSON", "application/json; charset=utf-8"]
)
def test_application_json_with_parameters_is_json(make, content_type):
    client, calls = make()
    r = client.post("/json", content=b'{"value": 1}', headers={"Content-Type": content_type})
    assert r.json() == {"ok": True} and calls == ["json"]


@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 10_000])
def test_json_nested_too_deeply_is_refused(make, depth):
    client, calls = make()
    raw = b'{"value": ' + b"[" * depth + b"]" * depth + b"}"
    r = client.post("/json", content=raw, headers={"Content-Type": "application/json"})
    assert (r.status_code, r.json()) == (400, {"error": f"JSON nested deeper than {MAX_DEPTH}"})
    assert calls == []
    ok = b'{"value": ' + b"[" * (MAX_DEPTH - 1) + b"]" * (MAX_DEPTH - 1) + b"}"
    assert client.post("/json", content=ok, headers={"Content-Type": "application/json"}).json()


# --- the form token -------------------------------------------------------------------------------------
def test_a_page_gives_the_browser_its_form_token_once(make):
    client, _ = make()
    page = client.get("/form")
    token = client.cookies[CSRF_COOKIE]
    assert f'value="{token}"' in page.text and len(token) >= 32
    cookie = page.headers["set-cookie"].lower()
    assert "httponly" in cookie and "samesite=lax" in cookie
    again = client.get("/form")
    assert "set-cookie" not in again.headers and f'value="{token}"' in again.text


def test_a_form_needs_the_browsers_token(make):
    client, calls = make()
    client.get("/form")
    token = client.cookies[CSRF_COOKIE]
    other = token[:-1] + ("A" if token[-1] != "A" else "B")
    for data in ({"name": "x"}, {"name": "x", "csrf": ""}, {"name": "x", "csrf": other}):
        r = client.post("/form", data=data)
        assert r.status_code == 403 and FORM_EXPIRED in r.text, data
    fresh = make()[0]  # a browser without the cookie, sending someone else's token
    r = fresh.post("/form", data={"name": "x", "csrf": token})
    assert r.status_code == 403 and FORM_EXPIRED in r.text
    assert calls == []
    assert client.post("/form", data={"name": "ann", "csrf": token}).json() == {"ok": "ann"}
    assert calls == ["form ann"]
