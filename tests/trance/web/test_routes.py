"""The routers on the shared app: the admin guard and the pydantic bodies give exactly the
answers the app gave before it was split into routers (statuses and bodies recorded then)."""

from __future__ import annotations

import json

import pytest

from tests.trance.web.helpers import new_key, right_steps, sample_of
from tvr.web.deps import ADMIN_OFF

ADMIN_OFF_HTML = f'<p class="error">{ADMIN_OFF}</p>'


def start(client, name: str = "ann") -> None:
    assert client.post("/api/start", json={"name": name}).status_code == 200


# --- the admin guard ----------------------------------------------------------------------------
def test_admin_pages_without_admin_are_the_404_error_page(make_client):
    client = make_client()
    start(client)  # a tester, even one with answers, sees no admin page
    for url in ("/admin", "/admin/tester/1", "/admin/tester/99", "/admin/tester/-1"):
        page = client.get(url)
        assert page.status_code == 404, url
        assert page.headers["content-type"] == "text/html; charset=utf-8"
        assert "<title>Not found · tvr</title>" in page.text and ADMIN_OFF_HTML in page.text
        assert 'href="/admin"' not in page.text  # no admin link in the header
        assert "ann" not in page.text  # the error page names no tester
    for url in ("/admin/export/1/event/test", "/admin/export/99/nope/x"):
        r = client.get(url)
        assert (r.status_code, r.json()) == (404, {"error": ADMIN_OFF}), url
        assert r.headers["content-type"] == "application/json"


@pytest.mark.parametrize("admin", [False, True])
def test_a_bad_tester_id_gets_the_guards_answer_first(make_client, admin):
    client = make_client(viewer=admin, admin=admin)
    page = client.get("/admin/tester/abc")
    r = client.get("/admin/export/abc/event/test")
    if admin:
        assert page.status_code == 404 and '<p class="error">no tester abc</p>' in page.text
        assert (r.status_code, r.json()) == (404, {"error": "no tester abc"})
    else:
        assert page.status_code == 404 and ADMIN_OFF_HTML in page.text
        assert (r.status_code, r.json()) == (404, {"error": ADMIN_OFF})


def test_admin_view_with_admin(make_client):
    start(make_client())  # a tester of the study server, on the same database
    client = make_client(viewer=True, admin=True)
    assert client.get("/admin").status_code == 200
    page = client.get("/admin/tester/99")
    assert page.status_code == 404 and '<p class="error">no tester 99</p>' in page.text
    r = client.get("/admin/export/99/event/test")
    assert (r.status_code, r.json()) == (404, {"error": "no tester 99"})
    r = client.get("/admin/export/1/nope/x")
    assert (r.status_code, r.json()) == (404, {"error": "unknown problem/split 'nope'/'x'"})
    r = client.get("/admin/export/1/event/test")
    assert r.status_code == 200 and r.text == ""
    assert r.headers["content-disposition"] == (
        'attachment; filename="human-0001-ann-event-test.jsonl"'
    )


# --- JSON bodies ----------------------------------------------------------------------------------
J = {"Content-Type": "application/json"}
NOT_JSON = "send JSON (Content-Type: application/json)"


@pytest.mark.parametrize(
    "kwargs, status, error",
    [
        ({"content": b'{"name": "x"}'}, 415, NOT_JSON),
        ({"content": b'{"name": "x"}', "headers": {"Content-Type": "text/plain"}}, 415, NOT_JSON),
        ({"data": {"name": "x"}}, 415, NOT_JSON),
        ({"content": b'{"name": "pj"}', "headers": {"Content-Type": "application/ld+json"}},
         415, NOT_JSON),
        ({"content": b'{"name": "odd"}', "headers": {"Content-Type": "text/x-application/json"}},
         415, NOT_JSON),
        ({"content": b'{"name": "x"}', "headers": {"Content-Type": "text/plain; x=application/json"}},
         415, NOT_JSON),
        ({"content": b"{not json", "headers": J}, 400, "the request body is not valid JSON"),
        ({"content": b"", "headers": J}, 400, "the request body is not valid JSON"),
        ({"content": b'{"name": "\xff"}', "headers": J}, 400, "the request body is not valid JSON"),
        ({"content": b"[1, 2]", "headers": J}, 400, "expected a JSON object"),
        ({"content": b'"ann"', "headers": J}, 400, "expected a JSON object"),
        ({"content": b"null", "headers": J}, 400, "expected a JSON object"),
        ({"content": b'{"name": "' + b"x" * 70000 + b'"}', "headers": J}, 413, "request too large"),
        ({"content": b'{"name":"' + b"y" * 63991 + b'"}', "headers": J}, 413, "request too large"),
        ({"json": {}}, 422, "enter your name"),
        ({"json": {"name": 5}}, 422, "enter your name"),
        ({"json": {"name": None}}, 422, "enter your name"),
        ({"json": {"name": ["ann"]}}, 422, "enter your name"),
        ({"content": b'{"name": NaN}', "headers": J}, 400,
         "the request body is not valid JSON: NaN and Infinity are not JSON (write null or a "
         "number)"),
        ({"json": {"name": "   "}}, 422, "enter your name"),
        ({"json": {"name": "x" * 41}}, 422, "the name is too long (41 characters, at most 40)"),
        ({"json": {"name": "a\x00b"}}, 422, "the name has characters that cannot be shown"),
    ],
)  # fmt: skip
def test_api_start_refusals(make_client, kwargs, status, error):
    client = make_client()
    r = client.post("/api/start", **kwargs)
    assert (r.status_code, r.json()) == (status, {"error": error})
    assert "set-cookie" not in r.headers


@pytest.mark.parametrize(
    "kwargs, name",
    [
        ({"json": {"name": "  ann  ", "extra": 1}}, "ann"),
        ({"content": b'{"name": 1, "name": "dup"}', "headers": J}, "dup"),
        ({"content": b'{"name": "cs"}', "headers": {"Content-Type": "application/json; x=1"}},
         "cs"),
    ],
)  # fmt: skip
def test_api_start_accepts(make_client, kwargs, name):
    client = make_client()
    r = client.post("/api/start", **kwargs)
    got = r.json()
    code = got.pop("resume_code")
    assert (r.status_code, got) == (200, {"tester": name, "id": 1})
    assert code.replace("-", "") == client.cookies["tvr_tester"]
    assert r.headers["set-cookie"].startswith("tvr_tester=")


@pytest.fixture
def served(make_client):
    """A tester with one practice sample served: (client, the body of a right answer to it)."""
    client = make_client(practice=1)
    start(client)
    nxt = client.get("/api/next/event/test").json()
    assert nxt["practice"] and nxt["split"] == "train"
    body = {
        "problem": "event",
        "split": "train",
        "sample_id": nxt["sample_id"],
        "practice": True,
        "steps": right_steps(sample_of(client.app.state.catalog, "event", nxt)),
        "key": "key-00000001",
        "client_seconds": 1.5,
    }
    return client, body


def without(body: dict, key: str) -> dict:
    return {k: v for k, v in body.items() if k != key}


OK_STEP = {"obj": 1, "attr": "color", "value": "color.red"}
ANSWER_CASES = [
    # (label, change to the right answer, status, error; SAMPLE: the served sample id's repr)
    ("empty object", lambda b: {}, 422, "field 'problem': Field required"),
    ("problem 5", lambda b: {**b, "problem": 5}, 422, "field 'problem': Input should be a valid string"),
    ("problem list", lambda b: {**b, "problem": ["event"]}, 422,
     "field 'problem': Input should be a valid string"),
    ("problem other", lambda b: {**b, "problem": "nope"}, 404, "unknown problem 'nope'"),
    ("no key", lambda b: without(b, "key"), 400,
     "missing or malformed submission key (8-64 letters, digits, - or _)"),
    ("key int", lambda b: {**b, "key": 12345678}, 400,
     "missing or malformed submission key (8-64 letters, digits, - or _)"),
    ("no split", lambda b: without(b, "split"), 422, "field 'split': Field required"),
    ("split 5", lambda b: {**b, "split": 5}, 422, "field 'split': Input should be a valid string"),
    ("split list", lambda b: {**b, "split": ["train"]}, 422,
     "field 'split': Input should be a valid string"),
    ("split other", lambda b: {**b, "split": "nosplit"}, 404,
     "unknown problem/split 'event'/'nosplit'"),
    ("no sample", lambda b: without(b, "sample_id"), 404, "unknown sample None in event/train"),
    ("sample int", lambda b: {**b, "sample_id": 3}, 404, "unknown sample 3 in event/train"),
    ("sample list", lambda b: {**b, "sample_id": ["x"]}, 404, "unknown sample ['x'] in event/train"),
    ("practice false", lambda b: {**b, "practice": False}, 409,
     "sample SAMPLE was not given to you in this test"),
    # only JSON booleans: "false" is not read as true, nor 0 as false
    ("practice 0", lambda b: {**b, "practice": 0}, 422,
     "field 'practice': Input should be a valid boolean"),
    ("practice 'no'", lambda b: {**b, "practice": "no", "steps": "x"}, 422,
     "field 'practice': Input should be a valid boolean"),
    ("practice 'false'", lambda b: {**b, "practice": "false"}, 422,
     "field 'practice': Input should be a valid boolean"),
    ("no steps", lambda b: without(b, "steps"), 422, "the answer must be a list of steps"),
    ("steps dict", lambda b: {**b, "steps": {"obj": 1}}, 422, "the answer must be a list of steps"),
    ("steps empty", lambda b: {**b, "steps": []}, 422, "add at least one step before submitting"),
    ("5 steps", lambda b: {**b, "steps": [OK_STEP] * 5}, 422, "5 steps, but event allows at most 4"),
    ("step 1", lambda b: {**b, "steps": [1]}, 422,
     "step 1: expected an object, attribute and value"),
    ("obj 1.0", lambda b: {**b, "steps": [{**OK_STEP, "obj": 1.0}]}, 422,
     "step 1: object 1.0 is not an object index 0..9"),
    ("obj true", lambda b: {**b, "steps": [{**OK_STEP, "obj": True}]}, 422,
     "step 1: object True is not an object index 0..9"),
    ("value list", lambda b: {**b, "steps": [{**OK_STEP, "value": ["a"]}]}, 422,
     "step 1: ['a'] is not a value (e.g. 'color.red')"),
    ("attr int", lambda b: {**b, "steps": [{**OK_STEP, "attr": 3}]}, 422,
     "step 1: the value 'color.red' does not belong to the attribute 3"),
    ("step 2", lambda b: {**b, "steps": [OK_STEP, {**OK_STEP, "obj": 99}]}, 422,
     "step 2: object 99 is not an object index 0..9"),
    ("time str", lambda b: {**b, "client_seconds": "1"}, 400, "bad client time '1'"),
    ("time true", lambda b: {**b, "client_seconds": True}, 400, "bad client time True"),
    ("time huge", lambda b: {**b, "client_seconds": 1e9}, 400, "bad client time 1000000000.0"),
]  # fmt: skip


@pytest.mark.parametrize(
    "change, status, error", [c[1:] for c in ANSWER_CASES], ids=[c[0] for c in ANSWER_CASES]
)
def test_api_answer_refusals(served, change, status, error):
    client, body = served
    r = client.post("/api/answer", json=change(body))
    error = error.replace("SAMPLE", repr(body["sample_id"]))
    assert (r.status_code, r.json()) == (status, {"error": error})
    assert client.get("/api/next/event/test").json()["practice"]  # nothing stored


@pytest.mark.parametrize(
    "raw, error",
    [
        (b"{not json", "the request body is not valid JSON"),
        (b"[]", "expected a JSON object"),
    ],
)
def test_api_answer_envelope_refusals(served, raw, error):
    client, _ = served
    r = client.post("/api/answer", content=raw, headers=J)
    assert (r.status_code, r.json()) == (400, {"error": error})


def test_api_answer_json_literals_and_size(served):
    client, body = served
    for literal in ("NaN", "Infinity"):  # not JSON: refused as every tvr reader refuses them
        raw = json.dumps(body).replace("1.5", literal).encode()
        r = client.post("/api/answer", content=raw, headers=J)
        assert r.status_code == 400
        assert r.json()["error"].startswith("the request body is not valid JSON: NaN and Inf")
    r = client.post("/api/answer", content=json.dumps({**body, "pad": "x" * 70000}), headers=J)
    assert (r.status_code, r.json()) == (413, {"error": "request too large"})
    r = client.post("/api/answer", content=json.dumps(body).encode())
    assert (r.status_code, r.json()) == (415, {"error": NOT_JSON})


def test_api_answer_body_checks_wait_for_the_tester_and_the_key(served, make_client):
    client, body = served
    anonymous = make_client()
    r = anonymous.post("/api/answer", json={"steps": "garbage"})
    assert (r.status_code, r.json()) == (
        401,
        {"error": "start a test first: no tester for this browser"},
    )
    first = client.post("/api/answer", json={**body, "ignored": [1, 2]})
    assert first.status_code == 200 and first.json()["stored"]
    # a retry with the same key returns the stored answer: the rest of the body is not checked
    again = client.post("/api/answer", json={**body, "steps": "garbage", "client_seconds": "x"})
    assert again.status_code == 200 and not again.json()["stored"]
    assert again.json()["answer_id"] == first.json()["answer_id"]
    r = client.post("/api/answer", json={**body, "sample_id": "other"})
    assert (r.status_code, r.json()) == (
        409,
        {"error": "this submission key was already used for another sample"},
    )
    r = client.post("/api/answer", json={**body, "key": new_key()})
    assert (r.status_code, r.json()) == (409, {"error": "this sample is already answered"})
