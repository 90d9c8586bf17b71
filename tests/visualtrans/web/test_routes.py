"""The verification pages through their routes: sign in, an item shown without its answer, the
blind answer, the review (flags, a fix), the admin view's agreement; CSRF, Host and sign-in
refusals as in TRANCE's human test; the shared layout on every page."""

from __future__ import annotations

import json
import re

import pytest

from tests.visualtrans.web.build import PLANTED, truth
from tests.web.layout import assert_every_page_has_the_layout
from tvr.visualtrans.web.verify_export import store_file

J = {"Content-Type": "application/json"}


def start(client, name="Ada"):
    r = client.post("/api/start", json={"name": name})
    assert r.status_code == 200, r.text
    return r.json()


def form_token(client) -> str:
    html = client.get("/").text
    return re.search(r'name="csrf" value="([^"]+)"', html).group(1)


def answer_of(nxt: dict) -> str | list[str]:
    """The true answer to the served item (its [Qnn] marker names it)."""
    n = int(nxt["item"]["question"][2:4]) - 1
    label = truth()[n]
    return (
        label.split(", ") if nxt["item"]["widget"]["kind"] == "set" and label != "none" else label
    )


def test_an_item_is_shown_without_its_answer_then_revealed_after_the_answer(make_client):
    client = make_client()
    start(client)
    nxt = client.get("/api/next").json()
    assert nxt["stage"] == "answer" and "generated" not in nxt and "label" not in json.dumps(nxt)
    page = client.get("/verify").text
    assert 'id="generated"' not in page and 'data-stage="answer"' in page
    assert "Generated answer" not in page and nxt["item"]["question"] in page
    image = client.get(nxt["item"]["images"][0])
    assert image.status_code == 200 and image.headers["content-type"] == "image/png"
    r = client.post("/api/answer", json={"serving": nxt["serving"], "answer": answer_of(nxt),
                                         "key": "key-00000001"})  # fmt: skip
    assert r.status_code == 200 and r.json()["stored"] is True
    again = client.post("/api/answer", json={"serving": nxt["serving"], "answer": "7",
                                             "key": "key-00000001"})  # fmt: skip
    assert again.json()["stored"] is False  # a retried key stores nothing new
    after = client.get("/api/next").json()
    assert after["serving"] == nxt["serving"] and after["stage"] == "review"
    assert after["generated"] == r.json()["generated"]
    assert 'id="generated"' in client.get("/verify").text


def test_answer_flag_fix_and_the_admin_agreement(make_client):
    client = make_client(verifiers=1)
    start(client)
    seen = []
    while not (nxt := client.get("/api/next").json())["finished"]:
        n = int(nxt["item"]["question"][2:4]) - 1
        r = client.post("/api/answer", json={"serving": nxt["serving"], "answer": answer_of(nxt),
                                             "key": f"key-{n:08d}"})  # fmt: skip
        assert r.status_code == 200, r.text
        assert r.json()["agrees"] is (n not in PLANTED)
        body = {"serving": nxt["serving"], "flags": []}
        if n in PLANTED:
            body = {**body, "flags": ["wrong_answer"], "fix": truth()[n]}
        if n == 8:
            body["flags"] = ["ambiguous", "insufficient_evidence"]
        r = client.post("/api/review", json=body)
        assert r.status_code == 200, r.text
        seen.append(n)
    assert sorted(seen) == list(range(10))
    admin = make_client(admin=True, verifiers=1)
    summary = admin.get("/api/admin/summary").json()
    assert summary["answers"] == 10 and summary["agreement"] == pytest.approx(0.7)
    assert summary["flags"] == {"missing_option": 0, "wrong_answer": 3, "ambiguous": 1,
                                "insufficient_evidence": 1}  # fmt: skip
    assert summary["outcomes"]["verified"] == 6 and summary["outcomes"]["fixed"] == 3
    assert summary["outcomes"]["ambiguous"] == 1
    count = next(r for r in summary["tables"]["task_type"] if r["name"] == "count")
    assert (count["answers"], count["agree"]) == (2, 1)
    page = admin.get("/admin").text
    assert "70.0 %" in page and 'id="by-family"' in page
    assert "10 items, 1 verifier(s) wanted" in page and "built-in method" not in page
    item = admin.get("/admin/item/0")
    assert item.status_code == 200 and "fixed" in item.text and "Ada" in item.text
    assert admin.get("/", follow_redirects=False).headers["location"] == "/admin"


def test_refusals_of_answers_and_reviews(make_client):
    client = make_client()
    assert client.get("/api/next").status_code == 401
    start(client)
    nxt = client.get("/api/next").json()
    s = nxt["serving"]
    assert client.post("/api/review", json={"serving": s}).status_code == 409  # answer first
    bad = client.post("/api/answer", json={"serving": s, "answer": "many", "key": "key-0000000a"})
    assert bad.status_code == 422 and "whole number" in bad.json()["error"]
    other = client.post(
        "/api/answer", json={"serving": s + 99, "answer": "1", "key": "key-0000000b"}
    )
    assert other.status_code == 404
    assert client.post("/api/answer", json={"serving": s, "answer": "1",
                                            "key": "key-0000000c"}).status_code == 200  # fmt: skip
    r = client.post("/api/review", json={"serving": s, "flags": ["bogus"]})
    assert r.status_code == 422 and "unknown flag" in r.json()["error"]
    r = client.post("/api/review", json={"serving": s, "flags": [], "fix": "2"})
    assert r.status_code == 422 and "wrong answer" in r.json()["error"]
    assert (
        client.post("/api/review", json={"serving": s, "flags": ["ambiguous"]}).status_code == 200
    )
    assert (
        client.post("/api/review", json={"serving": s, "flags": ["ambiguous"]}).status_code == 200
    )
    assert client.post("/api/review", json={"serving": s, "flags": []}).status_code == 409


def test_the_forms_need_the_token_and_the_same_origin(make_client):
    client = make_client()
    token = form_token(client)
    assert client.post("/start", data={"name": "Ada"}).status_code == 403  # no token
    r = client.post("/start", data={"name": "Ada", "csrf": token}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/welcome"
    page = client.get("/verify").text
    serving = re.search(r'name="serving" value="(\d+)"', page).group(1)
    key = re.search(r'name="key" value="([^"]+)"', page).group(1)
    form = {"serving": serving, "key": key, "answer": "2"}
    assert client.post("/verify/answer", data=form).status_code == 403
    cross = client.post("/verify/answer", data={**form, "csrf": token},
                        headers={"Origin": "http://evil.example"})  # fmt: skip
    assert cross.status_code == 403
    api = client.post("/api/answer", json={"serving": int(serving), "answer": "2", "key": key},
                      headers={"Sec-Fetch-Site": "cross-site"})  # fmt: skip
    assert api.status_code == 403
    plain = client.post("/api/answer", content=json.dumps({"serving": 1}),
                        headers={"Content-Type": "text/plain"})  # fmt: skip
    assert plain.status_code == 415
    ok = client.post("/verify/answer", data={**form, "csrf": token}, follow_redirects=False)
    assert ok.status_code == 303 and 'data-stage="review"' in client.get("/verify").text
    review = {"serving": serving, "csrf": token, "flags": ["wrong_answer"], "fix": "5"}
    assert client.post("/verify/review", data=review, follow_redirects=False).status_code == 303
    assert 'data-stage="answer"' in client.get("/verify").text
    assert store_file(client.app.state.verification.build).is_file()


def test_a_set_item_answered_with_boxes_and_a_bad_fix_shown_on_the_page(make_client):
    client = make_client(verifiers=1)
    token = form_token(client)
    client.post("/start", data={"name": "Ada", "csrf": token})
    while True:  # to the first set item
        page = client.get("/verify").text
        serving = re.search(r'name="serving" value="(\d+)"', page).group(1)
        if 'type="checkbox" name="answer"' in page:
            break
        key = re.search(r'name="key" value="([^"]+)"', page).group(1)
        answer = "A" if 'type="radio"' in page else "1"
        client.post("/verify/answer", data={"serving": serving, "key": key, "answer": answer,
                                            "csrf": token})  # fmt: skip
        client.post("/verify/review", data={"serving": serving, "csrf": token})
    names = re.findall(r'type="checkbox" name="answer" value="([^"]+)"', page)
    key = re.search(r'name="key" value="([^"]+)"', page).group(1)
    client.post("/verify/answer", data={"serving": serving, "key": key, "answer": names[:2],
                                        "csrf": token})  # fmt: skip
    review = client.get("/verify").text
    assert f"{names[0]}, {names[1]}" in review
    r = client.post("/verify/review", data={"serving": serving, "csrf": token,
                                            "flags": ["wrong_answer"], "fix": "a unicorn"})  # fmt: skip
    assert r.status_code == 422 and "does not list" in r.text and 'data-stage="review"' in r.text


def test_images_are_sent_by_their_content_and_only_the_items_own(make_client, build):
    client = make_client()
    folder = build / "questions" / "images" / "pick_place_food"
    png = next(folder.glob("*_end.png"))
    png.rename(png.with_suffix(".jpg"))  # a PNG under a .jpg name, as the release has one
    items_file = build / "questions" / "VisualTrans.json"
    items_file.write_text(items_file.read_text().replace(png.name, png.with_suffix(".jpg").name))
    client = make_client()
    r = client.get("/img/0/1")
    assert r.status_code == 200 and r.headers["content-type"] == "image/png"
    assert client.get("/img/0/2").status_code == 404  # a count item has two images
    assert (
        client.get("/img/%C2%B2/0").status_code == 404
        and client.get("/img/99/0").status_code == 404
    )
    (folder / png.with_suffix(".jpg").name).write_bytes(b"not an image")
    assert client.get("/img/0/1").status_code == 404


def test_admin_pages_only_on_the_admin_server(make_client):
    client = make_client()
    r = client.get("/admin")
    assert r.status_code == 404 and "admin view is off" in r.text
    assert client.get("/api/admin/summary").status_code == 404
    admin = make_client(admin=True)
    assert admin.get("/admin").status_code == 200
    assert admin.post("/api/start", json={"name": "x"}).status_code in (404, 405)
    assert admin.get("/verify").status_code == 404


def test_every_page_has_the_shared_layout(make_client):
    client = make_client()
    start(client)
    pages = {"/": ("/",), "/welcome": ("/welcome",), "/verify": ("/verify",),
             "/leave": ("/leave",), "/admin": ("/admin",),
             "/admin/item/{index}": ("/admin/item/0",)}  # fmt: skip
    assert assert_every_page_has_the_layout(client, pages) == 6
    admin = make_client(admin=True)
    pages = {"/": ("/admin",), "/admin": ("/admin",),
             "/admin/item/{index}": ("/admin/item/0", "/admin/item/99", "/admin/item/%C2%B2")}  # fmt: skip
    assert assert_every_page_has_the_layout(admin, pages) == 5


def test_hosts_and_sign_in_are_the_shared_ones(make_client):
    from tests.web.fuzz import rebinding_refused

    assert rebinding_refused(make_client())
    assert rebinding_refused(make_client(admin=True))
    client = make_client()
    start(client, "Ada")
    other = make_client()
    r = other.post("/api/start", json={"name": "ada"})  # one name, another browser
    assert r.status_code == 409
