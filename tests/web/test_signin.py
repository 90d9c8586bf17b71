"""The shared sign-in without any benchmark: a toy benchmark's `SignIn` (its own word for a
person, its own refusal, a landing chosen by a form field) served with the shared templates."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import pytest

pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from fastapi import APIRouter, Form
from fastapi.testclient import TestClient

from tvr.web.config import ServeConfig
from tvr.web.csrf import CSRF_COOKIE
from tvr.web.errors import Refusal
from tvr.web.factory import create_app
from tvr.web.pages import Pages
from tvr.web.signin import Landing, SignIn, sign_in_router
from tvr.web.testers import COOKIE

TEMPLATES = {
    "base.html": '{% extends "layout.html" %}{% import "signin.html" as signin with context %}'
    '{% block title %}Toy{% endblock %}{% block header %}{{ signin.who("Player") }}{% endblock %}',
    "start.html": '{% extends "base.html" %}{% import "signin.html" as signin with context %}'
    '{% block content %}{% call signin.start_form() %}<input name="level">{% endcall %}'
    '{{ signin.resume_card("games") }}{% endblock %}',
    "leave.html": "left {{ tester.name }} {{ resume_code }}",
    "error.html": "{{ message }}",
}


class GameError(Refusal):
    """The toy benchmark's refusal."""


def chosen_level(level: Annotated[str, Form()] = "") -> Landing:
    def landing() -> tuple[str, str]:
        if level not in ("1", "2"):
            raise GameError("choose a level")
        return f"/hello/{level}", f"/play/{level}"

    return landing


@pytest.fixture
def client(tmp_path: Path) -> TestClient:
    (tmp_path / "templates").mkdir()
    for name, text in TEMPLATES.items():
        (tmp_path / "templates" / name).write_text(text)
    router = APIRouter()
    router.include_router(sign_in_router(SignIn("player", GameError, chosen_level)))
    pages = Pages(title="toy", routers=[router], templates=tmp_path / "templates")
    config = ServeConfig(data=(tmp_path,), db_url=f"sqlite:///{tmp_path}/t.sqlite")
    return TestClient(create_app(config, lambda _config: pages), follow_redirects=False,
                      base_url="http://localhost")


def form(client: TestClient, url: str, **data: str):
    if CSRF_COOKIE not in client.cookies:
        client.get("/")
    return client.post(url, data={**data, "csrf": client.cookies[CSRF_COOKIE]})


def test_the_start_page_has_the_shared_forms_with_the_benchmarks_fields(client):
    page = client.get("/").text
    assert page.count('name="csrf"') == 2 and '<input name="level">' in page
    assert "your games are kept" in page and "<title>Toy · tvr</title>" in page


def test_a_player_starts_is_refused_in_the_benchmarks_words_and_resumes(client, tmp_path):
    assert "choose a level" in form(client, "/start", name="Ada", level="9").text
    started = form(client, "/start", name="Ａｄａ ", level="2")  # NFKC, trimmed
    assert (started.status_code, started.headers["location"]) == (303, "/hello/2")
    token = client.cookies[COOKIE]
    assert "Player: <b>Ada</b>" in client.get("/").text
    again = form(client, "/start", name="ada", level="1")  # the same browser: the same player
    assert again.headers["location"] == "/play/1" and client.cookies[COOKIE] == token
    assert client.get("/leave").text.startswith("left Ada ")

    other = TestClient(client.app, follow_redirects=False, base_url="http://localhost")
    taken = other.post("/api/start", json={"name": "ADA"})
    assert taken.status_code == 409 and "already taken" in taken.json()["error"]
    wrong = other.post("/api/resume", json={"code": "0000-0000-0000-0000"})
    assert wrong.json() == {"error": "no player has this resume code; check it and type it again"}
    resumed = other.post("/api/resume", json={"code": token.lower()})
    assert resumed.json()["player"] == "Ada" and other.cookies[COOKIE] == token
    assert form(other, "/resume", code=token, level="1").headers["location"] == "/play/1"
    assert form(other, "/logout").headers["location"] == "/"
