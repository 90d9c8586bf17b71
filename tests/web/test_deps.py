"""The shared web layer without any benchmark: the app factory, the dependencies (database
session per request, tester of the cookie, admin guard, JSON body through pydantic) and the
error answers, on a small app of test routes."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from fastapi import APIRouter, Depends
from fastapi.testclient import TestClient
from pydantic import BaseModel
from sqlalchemy import event, select

from tvr.web import db as web_db
from tvr.web.config import ServeConfig
from tvr.web.deps import (
    ADMIN_OFF,
    MAX_BODY,
    CurrentTester,
    Db,
    json_body,
    require_admin,
    require_admin_api,
)
from tvr.web.factory import create_app
from tvr.web.pages import Pages
from tvr.web.responses import ApiError, PageError
from tvr.web.testers import COOKIE, hash_token

ERROR_HTML = "<h1>error</h1><p>{{ message }}</p><p>{{ admin_enabled }}</p>"


class Count(BaseModel):
    count: int
    label: str = ""


def routes(calls: list[str]) -> APIRouter:
    router = APIRouter()

    @router.post("/add")
    def add(db: Db, name: str = "ann") -> dict:
        db.add(web_db.Tester(name=name, token_hash=hash_token(name)))  # committed by the dependency
        return {"ok": True}

    @router.post("/add-then-crash")
    def add_then_crash(db: Db) -> dict:
        db.add(web_db.Tester(name="crash", token_hash="x"))
        db.flush()  # the row is in the transaction
        raise RuntimeError("boom")

    @router.post("/add-then-refuse")
    def add_then_refuse(db: Db) -> dict:
        db.add(web_db.Tester(name="refused", token_hash="y"))
        db.flush()
        raise ApiError("refused", 409)

    @router.get("/page-error")
    def page_error() -> dict:
        raise PageError("no such thing", 404)

    @router.get("/me")
    def me(tester: CurrentTester) -> dict:
        return {"tester": tester.name if tester else None}

    @router.get("/admin", dependencies=[Depends(require_admin)])
    def admin() -> dict:
        calls.append("admin")
        return {"admin": True}

    @router.get("/admin-api", dependencies=[Depends(require_admin_api)])
    def admin_api() -> dict:
        calls.append("admin-api")
        return {"admin": True}

    @router.post("/count")
    def count(body: Annotated[Count, Depends(json_body(Count))]) -> dict:
        calls.append("count")
        return body.model_dump()

    return router


@pytest.fixture
def make(tmp_path: Path):
    """make(admin=...) -> (TestClient, calls): an app of the test routes on a fresh database."""
    (tmp_path / "templates").mkdir()
    (tmp_path / "templates" / "error.html").write_text(ERROR_HTML)

    def build(**options) -> tuple[TestClient, list[str]]:
        calls: list[str] = []
        pages = Pages(title="test", routers=[routes(calls)], templates=tmp_path / "templates")
        config = ServeConfig(data=(tmp_path,), db_url=f"sqlite:///{tmp_path}/t.sqlite", **options)
        app = create_app(config, lambda _config: pages)
        return TestClient(app, raise_server_exceptions=False, base_url="http://localhost"), calls

    return build


def stored_names(client: TestClient) -> list[str]:
    with client.app.state.sessions() as db:
        return list(db.scalars(select(web_db.Tester.name).order_by(web_db.Tester.id)))


def transaction_ends(client: TestClient) -> list[str]:
    """Record every commit and rollback of the app's sessions."""
    seen: list[str] = []
    sessions = client.app.state.sessions
    event.listen(sessions, "after_commit", lambda _s: seen.append("commit"))
    event.listen(sessions, "after_rollback", lambda _s: seen.append("rollback"))
    return seen


# --- the database session of a request ---------------------------------------------------------
def test_session_is_committed_when_the_route_returns(make):
    client, _ = make()
    seen = transaction_ends(client)
    assert client.post("/add").json() == {"ok": True}
    assert stored_names(client) == ["ann"]
    assert seen == ["commit"]


def test_session_is_rolled_back_when_the_route_crashes(make):
    client, _ = make()
    seen = transaction_ends(client)
    r = client.post("/add-then-crash")
    assert r.status_code == 500 and r.text == "Internal Server Error"
    assert stored_names(client) == []
    assert seen == ["rollback"]


def test_session_is_rolled_back_on_an_error_answer(make):
    client, _ = make()
    seen = transaction_ends(client)
    r = client.post("/add-then-refuse")
    assert (r.status_code, r.json()) == (409, {"error": "refused"})
    assert stored_names(client) == []
    assert seen == ["rollback"]


def test_a_failed_commit_is_an_error_not_a_success(make):
    client, _ = make()
    assert client.post("/add").status_code == 200
    r = client.post("/add")  # the same name again: the commit breaks the unique constraint
    assert r.status_code == 500
    assert stored_names(client) == ["ann"]


# --- the tester of the cookie ---------------------------------------------------------------------
def test_current_tester_comes_from_the_cookie_token(make):
    client, _ = make()
    with client.app.state.sessions() as db:
        db.add(web_db.Tester(name="ann", token_hash=hash_token("secret-token")))
        db.commit()
    assert client.get("/me").json() == {"tester": None}
    client.cookies.set(COOKIE, "secret-token")
    assert client.get("/me").json() == {"tester": "ann"}
    client.cookies.set(COOKIE, hash_token("secret-token"))  # the stored hash is not a token
    assert client.get("/me").json() == {"tester": None}


# --- the admin guard --------------------------------------------------------------------------------
def test_admin_guard_refuses_without_admin(make):
    client, calls = make()
    page = client.get("/admin")
    assert page.status_code == 404 and page.headers["content-type"].startswith("text/html")
    assert page.text == f"<h1>error</h1><p>{ADMIN_OFF}</p><p>False</p>"
    api = client.get("/admin-api")
    assert (api.status_code, api.json()) == (404, {"error": ADMIN_OFF})
    assert ADMIN_OFF == (
        "the admin view is off (it is served by a viewer server: tvr serve --viewer --admin)"
    )
    assert calls == []  # the routes never ran


def test_admin_guard_lets_the_admin_in(make):
    client, calls = make(viewer=True, admin=True)
    assert client.get("/admin").json() == {"admin": True}
    assert client.get("/admin-api").json() == {"admin": True}
    assert calls == ["admin", "admin-api"]


# --- JSON bodies --------------------------------------------------------------------------------------
JSON = {"Content-Type": "application/json"}


@pytest.mark.parametrize(
    "kwargs, status, body",
    [
        ({"content": b'{"count": 1}'}, 415, "send JSON (Content-Type: application/json)"),
        (
            {"content": b'{"count": 1}', "headers": {"Content-Type": "text/plain"}},
            415,
            "send JSON (Content-Type: application/json)",
        ),
        (
            {"content": b'{"count": 1, "label": "' + b"x" * MAX_BODY + b'"}', "headers": JSON},
            413,
            "request too large",
        ),
        ({"content": b"{not json", "headers": JSON}, 400, "the request body is not valid JSON"),
        ({"content": b"", "headers": JSON}, 400, "the request body is not valid JSON"),
        ({"content": b"[1]", "headers": JSON}, 400, "expected a JSON object"),
        ({"content": b"null", "headers": JSON}, 400, "expected a JSON object"),
        ({"json": {}}, 422, "field 'count': Field required"),
        (
            {"json": {"count": "many"}},
            422,
            "field 'count': Input should be a valid integer, unable to parse string as an integer",
        ),
        ({"json": {"count": 1, "label": 5}}, 422, "field 'label': Input should be a valid string"),
    ],
)
def test_json_body_refusals(make, kwargs, status, body):
    client, calls = make()
    r = client.post("/count", **kwargs)
    assert (r.status_code, r.json()) == (status, {"error": body})
    assert calls == []


def test_json_body_gives_the_model(make):
    client, calls = make()
    r = client.post(
        "/count",
        content=b'{"count": 3, "extra": [1]}',
        headers={"Content-Type": "application/json; charset=utf-8"},
    )
    assert r.json() == {"count": 3, "label": ""} and calls == ["count"]


# --- other errors are left alone ------------------------------------------------------------------------
def test_page_error_and_framework_errors(make):
    client, _ = make()
    r = client.get("/page-error")
    assert (r.status_code, r.text) == (404, "<h1>error</h1><p>no such thing</p><p>False</p>")
    assert client.get("/nothing").json() == {"detail": "Not Found"}
    assert client.get("/add").status_code == 405


def test_pages_are_built_before_the_database_is_opened(tmp_path):
    """A benchmark's bad input is reported before the database is touched (as before)."""
    from tvr.core.errors import UserError

    def bad_pages(_config):
        raise UserError("bad pages")

    bad_db = f"sqlite:///{tmp_path}/no/such/folder/x.sqlite"
    with pytest.raises(UserError, match="bad pages"):
        create_app(ServeConfig(data=(tmp_path,), db_url=bad_db), bad_pages)
    assert not (tmp_path / "no").exists()


@pytest.mark.parametrize("raw", [b'{"count": NaN}', b'{"count": 1, "x": "\xff"}',
                                 b'{"count": 1}\x00', b'\xef\xbb\xbf{"count": 1}'])  # fmt: skip
def test_a_body_is_read_as_every_tvr_reader_reads_json(make, raw):
    """One way everywhere (issue 28): NaN, invalid UTF-8, NUL and a byte-order mark are
    refused in a request body as in a file."""
    client, calls = make()
    r = client.post("/count", content=raw, headers=JSON)
    assert r.status_code == 400 and calls == []
