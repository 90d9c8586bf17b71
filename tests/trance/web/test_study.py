"""A study as testers and other pages would try it: a study server reveals no reference, other
origins cannot act for a tester, a tester can always come back, and the small fixes of issue 15."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from sqlalchemy import select

from tests.trance.web.helpers import (
    answer,
    finish_practice,
    form_token,
    post_form,
    right_steps,
    sample_of,
)
from tvr.cli import main
from tvr.core.errors import UserError
from tvr.trance.web.app import create_app
from tvr.web.config import ServeConfig
from tvr.web.csrf import CROSS_ORIGIN
from tvr.web.db import Answer, Serving, Tester
from tvr.web.deps import ADMIN_OFF

OTHER_PORT = {"Origin": "http://127.0.0.1:9999", "Sec-Fetch-Site": "same-site"}


def start(client, name: str = "ann") -> dict:
    r = client.post("/api/start", json={"name": name})
    assert r.status_code == 200, r.text
    return r.json()


def boot_of(page: str) -> dict:
    m = re.search(r'<script id="boot" type="application/json">(.*?)</script>', page, re.S)
    assert m, "no boot data on the page"
    return json.loads(m.group(1))


def stored(client, model) -> int:
    with client.app.state.sessions() as db:
        return len(list(db.scalars(select(model))))


# --- 1. the viewer is not served by a study server ------------------------------------------------
def test_a_study_server_reveals_no_reference(make_client):
    client = make_client(practice=0)
    start(client)
    nxt = client.get("/api/next/event/test").json()
    page = client.get("/test/event/test").text
    assert 'href="/viewer"' not in page
    sample = sample_of(client.app.state.catalog, "event", nxt)
    for url in (
        "/viewer",
        "/viewer/event/test",
        f"/viewer/event/test/{nxt['index']}",
        "/viewer/event/train/0",
    ):
        r = client.get(url)
        assert r.status_code == 404, url
        assert sample.id not in r.text
    # a View test shows one final view; the others are not served either
    v = client.get("/api/next/view/test").json()
    assert client.get(f"/img/view/test/{v['index']}/fin/{v['view']}.png").status_code == 200
    assert client.get(f"/img/view/test/{v['index']}/init/C.png").status_code == 200
    for other in {"L", "C", "R"} - {v["view"]}:
        assert client.get(f"/img/view/test/{v['index']}/fin/{other}.png").status_code == 404


def test_a_viewer_server_serves_the_viewer_and_no_test(make_client):
    viewer = make_client(viewer=True)
    assert viewer.get("/viewer").status_code == 200
    assert viewer.get("/viewer/event/test/0").status_code == 200
    assert viewer.get("/", follow_redirects=False).headers["location"] == "/viewer"
    assert viewer.get("/test/event/test").status_code == 404
    assert viewer.post("/api/start", json={"name": "ann"}).status_code == 404
    for v in ("L", "C", "R"):
        assert viewer.get(f"/img/view/test/0/fin/{v}.png").status_code == 200


@pytest.mark.parametrize(
    "options, message",
    [
        ({"admin": True}, "--admin needs --viewer"),
        ({"predictions": ("x.jsonl",)}, "--predictions needs --viewer"),
    ],
)
def test_admin_and_predictions_belong_to_the_viewer(datasets, tmp_path, options, message):
    if "predictions" in options:
        (tmp_path / "x.jsonl").write_text("")
        options = {"predictions": (tmp_path / "x.jsonl",)}
    with pytest.raises(UserError, match=message):
        ServeConfig(data=(datasets["event"],), **options).validate()


def test_tvr_serve_admin_without_viewer_is_one_line(datasets, capsys):
    assert main(["serve", "--data", str(datasets["event"]), "--admin"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--admin needs --viewer" in err


# --- 2. another origin cannot act for a tester ------------------------------------------------------
def test_other_origins_cannot_answer_start_or_leave(make_client):
    client = make_client(practice=0)
    start(client)
    cookie = client.cookies["tvr_tester"]
    nxt = client.get("/api/next/event/test").json()
    body = {
        "problem": "event",
        "split": "test",
        "sample_id": nxt["sample_id"],
        "steps": right_steps(sample_of(client.app.state.catalog, "event", nxt)),
        "key": "key-cross-0001",
    }
    # the request of issue 15: text/plain that mentions application/json, from another port
    r = client.post(
        "/api/answer",
        content=json.dumps(body),
        headers={**OTHER_PORT, "Content-Type": "text/plain; x=application/json"},
    )
    assert r.status_code == 403
    r = client.post(
        "/api/answer",
        content=json.dumps(body),
        headers={"Content-Type": "text/plain; x=application/json"},
    )
    assert r.status_code == 415
    r = client.post("/api/answer", json=body, headers=OTHER_PORT)
    assert (r.status_code, r.json()) == (403, {"error": CROSS_ORIGIN})
    assert stored(client, Answer) == 0
    token = form_token(client)
    for url, data in (("/logout", {}), ("/start", {"name": "mallory", "test": "event:test"})):
        r = client.post(
            url, data={**data, "csrf": token}, headers=OTHER_PORT, follow_redirects=False
        )
        assert r.status_code == 403 and "set-cookie" not in r.headers, url
        r = client.post(url, data=data, follow_redirects=False)  # no form token
        assert r.status_code == 403 and "set-cookie" not in r.headers, url
    assert client.cookies["tvr_tester"] == cookie
    assert [t.name for t in client.app.state.sessions().scalars(select(Tester))] == ["ann"]
    assert client.post("/api/answer", json=body).status_code == 200  # the tester's own page


# --- 3. a tester can always come back ------------------------------------------------------------------
def test_the_resume_code_brings_a_tester_back_in_any_browser(make_client):
    first = make_client(practice=1)
    got = start(first, "Ada")
    code = got["resume_code"]
    assert re.fullmatch(r"[0-9A-Z]{4}(-[0-9A-Z]{4}){3}", code)
    nxt = finish_practice(first, "event", "test")
    assert post_form(first, "/logout", {}, follow_redirects=False).status_code == 303
    assert "tvr_tester" not in first.cookies
    r = first.post("/api/start", json={"name": "Ada"})
    assert r.status_code == 409 and "resume code" in r.json()["error"]
    other = make_client(practice=1)  # another browser; the code typed loosely
    loose = code.lower().replace("-", " ").replace("1", "l").replace("0", "o")
    r = other.post("/api/resume", json={"code": loose})
    assert (r.status_code, r.json()["tester"], r.json()["id"]) == (200, "Ada", got["id"])
    again = other.get("/api/next/event/test").json()
    assert (again["practice"], again["sample_id"]) == (False, nxt["sample_id"])  # where Ada stopped
    for bad in ("", "AAAA-AAAA-AAAA-AAAA", "x" * 500, 5):
        r = make_client().post("/api/resume", json={"code": bad})
        assert r.status_code in (404, 422) and "resume code" in r.json()["error"], bad


def test_the_pages_show_the_code_and_leave_says_what_it_does(make_client):
    client = make_client(practice=1)
    r = post_form(client, "/start", {"name": "Ada", "test": "event:test"}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/welcome/event/test"
    cookie = client.cookies["tvr_tester"]
    code = "-".join(cookie[k : k + 4] for k in range(0, 16, 4))
    welcome = client.get("/welcome/event/test").text
    assert code in welcome and 'href="/test/event/test"' in welcome
    assert code in client.get("/").text
    page = client.get("/test/event/test").text
    assert 'href="/leave"' in page and 'action="/logout"' not in page
    leave = client.get("/leave").text
    assert code in leave and "answers stay" in leave and 'action="/logout"' in leave
    # starting again in the same browser goes straight to the test
    r = post_form(client, "/start", {"name": "ada", "test": "event:test"}, follow_redirects=False)
    assert r.headers["location"] == "/test/event/test"
    post_form(client, "/logout", {})
    r = post_form(client, "/start", {"name": "Ada", "test": "event:test"})
    assert r.status_code == 409 and "resume code" in r.text
    r = post_form(client, "/resume", {"code": code, "test": "event:test"}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/test/event/test"
    assert client.cookies["tvr_tester"] == cookie
    r = post_form(client, "/resume", {"code": "0000-0000-0000-0000", "test": "event:test"})
    assert r.status_code == 404 and "resume code" in r.text


def test_names_differing_in_case_or_width_are_one_tester(make_client):
    ada = make_client()
    first = start(ada, "Ada")
    for name in ("ada", "ＡＤＡ", " Ａｄａ "):
        assert start(ada, name)["id"] == first["id"]  # the same browser: the same tester
        r = make_client().post("/api/start", json={"name": name})
        assert r.status_code == 409, name
    assert stored(ada, Tester) == 1


def test_an_old_database_gets_the_name_key(make_client, tmp_path):
    """A results database made before names were compared by NFKC + casefold keeps working."""
    import sqlite3

    path = tmp_path / "old.sqlite"
    con = sqlite3.connect(path)
    con.executescript(
        "CREATE TABLE testers (id INTEGER PRIMARY KEY, name VARCHAR(200) UNIQUE,"
        " token_hash VARCHAR(64) UNIQUE, created_at DATETIME);"
        "INSERT INTO testers VALUES (1, 'Ada', 'h1', '2024-01-01 00:00:00');"
        "INSERT INTO testers VALUES (2, 'ada', 'h2', '2024-01-01 00:00:00');"
    )
    con.commit()
    con.close()
    client = make_client(db_url=f"sqlite:///{path}")
    r = client.post("/api/start", json={"name": "ADA"})
    assert r.status_code == 409
    assert start(client, "bob")["id"] == 3


# --- 7. small fixes ------------------------------------------------------------------------------------
def test_the_last_practice_button_says_the_test_comes_next(make_client):
    client = make_client(practice=2)
    start(client)
    labels = []
    for _ in range(4):
        page = client.get("/test/event/test").text
        labels.append(boot_of(page)["next_label"])
        nxt = client.get("/api/next/event/test").json()
        answer(client, "event", nxt, right_steps(sample_of(client.app.state.catalog, "event", nxt)))
    assert labels == ["Next practice sample", "Start the test", "Next sample", "Next sample"]
    for _ in range(3):
        nxt = client.get("/api/next/event/test").json()
        answer(client, "event", nxt, right_steps(sample_of(client.app.state.catalog, "event", nxt)))
    assert boot_of(client.get("/test/event/test").text)["next_label"] == "Finish"


def test_the_clock_resumes_from_the_stored_time(make_client):
    client = make_client(practice=0)
    start(client)
    assert boot_of(client.get("/test/event/test").text)["elapsed"] < 5
    with client.app.state.sessions() as db:  # the sample was first shown 100 s ago
        row = db.scalar(select(Serving))
        row.served_at -= timedelta(seconds=100)
        db.commit()
    elapsed = boot_of(client.get("/test/event/test").text)["elapsed"]
    assert 100 <= elapsed < 110


def test_history_of_an_unknown_test_is_404(make_client):
    client = make_client()
    start(client)
    r = client.get("/api/history/unknown/split")
    assert (r.status_code, r.json()) == (404, {"error": "unknown problem/split 'unknown'/'split'"})
    assert client.get("/api/history/event/test").status_code == 200


@pytest.mark.parametrize(
    "url", ["/admin/tester/abc", "/admin/tester/%C2%B2", "/admin/export/abc/event/test"]
)
def test_admin_routes_without_admin_are_the_admin_off_answer(make_client, url):
    r = make_client().get(url)
    assert r.status_code == 404 and ADMIN_OFF in r.text


def test_admin_with_a_bad_tester_id_is_no_such_tester(make_client):
    client = make_client(viewer=True, admin=True)
    page = client.get("/admin/tester/abc")
    assert page.status_code == 404 and '<p class="error">no tester abc</p>' in page.text
    r = client.get("/admin/export/abc/event/test")
    assert (r.status_code, r.json()) == (404, {"error": "no tester abc"})


@pytest.mark.parametrize("practice", ["false", "true", 0, 1, None, []])
def test_practice_must_be_a_json_boolean(make_client, practice):
    client = make_client(practice=1)
    start(client)
    nxt = client.get("/api/next/event/test").json()
    steps = right_steps(sample_of(client.app.state.catalog, "event", nxt))
    r = answer(client, "event", nxt, steps, practice=practice)
    assert r.status_code == 422 and "practice" in r.json()["error"]
    assert stored(client, Answer) == 0


def test_admin_on_a_viewer_server_sees_the_study_database(make_client):
    ann = make_client(practice=0)
    start(ann)
    nxt = ann.get("/api/next/event/test").json()
    answer(ann, "event", nxt, right_steps(sample_of(ann.app.state.catalog, "event", nxt)))
    admin = make_client(viewer=True, admin=True)  # the same database, its own server
    assert "ann" in admin.get("/admin").text
    assert nxt["sample_id"] in admin.get("/admin/export/1/event/test").text


def test_create_app_on_one_database_in_both_modes(datasets, tmp_path):
    db = f"sqlite:///{tmp_path}/both.sqlite"
    study = create_app(ServeConfig(data=(datasets["event"],), db_url=db))
    viewer = create_app(ServeConfig(data=(datasets["event"],), db_url=db, viewer=True))
    paths = set(study.openapi()["paths"])
    assert "/api/answer" in paths and "/viewer" not in paths
    paths = set(viewer.openapi()["paths"])
    assert "/viewer" in paths and "/api/answer" not in paths
