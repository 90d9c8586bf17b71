"""The web app through FastAPI's test client: validation, security, history, export, persistence."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import func, select

from tests.trance.web.helpers import (
    answer,
    basic_wrong_value,
    finish_practice,
    new_key,
    post_form,
    right_steps,
    sample_of,
    wrong_steps,
)
from tvr.cli import main
from tvr.trance.data.store import open_dataset
from tvr.trance.eval.evaluate import evaluate_files
from tvr.trance.eval.metrics import ReferenceTable, details, read_predictions, score
from tvr.web.db import Answer


def answers_stored(client) -> int:
    with client.app.state.sessions() as db:
        return db.scalar(select(func.count()).select_from(Answer))


def start(client, name: str) -> None:
    r = client.post("/api/start", json={"name": name})
    assert r.status_code == 200, r.text


# --- the flow ------------------------------------------------------------------------------------
def test_start_page_and_test_page(make_client):
    client = make_client()
    page = client.get("/")
    assert page.status_code == 200
    assert 'value="event:test"' in page.text and 'value="view:train"' in page.text
    r = post_form(client, "/start", {"name": "ann", "test": "event:test"}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/welcome/event/test"
    page = client.get("/test/event/test")
    assert page.status_code == 200
    assert "Practice 1 of 1" in page.text and "Introduction" in page.text
    assert "<svg" in page.text and "/img/event/train/" in page.text  # practice comes from train
    assert page.text.count("<tr>") >= 10  # the objects table


def test_practice_first_then_shuffled_order_without_repeats(make_client):
    client = make_client(practice=2)
    start(client, "ann")
    seen_practice = []
    for _ in range(2):
        nxt = client.get("/api/next/event/test").json()
        assert nxt["practice"] and nxt["split"] == "train"
        seen_practice.append(nxt["sample_id"])
        answer(client, "event", nxt, right_steps(sample_of(client.app.state.catalog, "event", nxt)))
    assert len(set(seen_practice)) == 2
    order = []
    for _ in range(6):
        nxt = client.get("/api/next/event/test").json()
        assert not nxt["practice"]
        # served twice before answering: the same sample (no skipping by reloading)
        assert client.get("/api/next/event/test").json()["sample_id"] == nxt["sample_id"]
        order.append(nxt["sample_id"])
        r = answer(client, "event", nxt, [{"obj": 0, "attr": "color", "value": "color.red"}])
        assert r.status_code == 200
    assert len(set(order)) == 6  # never repeats a finished sample
    assert client.get("/api/next/event/test").json() == {"done": True}
    assert "All done" in client.get("/test/event/test").text
    # another tester gets another order (seeded by tester and problem), the same tester the same
    other = make_client(practice=2)
    start(other, "bob")
    finish_practice(other, "event", "test")
    bob = [other.get("/api/next/event/test").json()["sample_id"]]
    assert sorted(order) == sorted(client.app.state.catalog.split("event", "test").index)
    from tvr.trance.web.human import plan

    cat = client.app.state.catalog
    sd = cat.split("event", "test")
    assert [sd.samples[i].id for i in plan(cat, "event", sd, "ann", 2).test] == order
    assert next(sd.samples[i].id for i in plan(cat, "event", sd, "bob", 2).test) == bob[0]
    assert plan(cat, "event", sd, "bob", 2).test != plan(cat, "event", sd, "ann", 2).test


# --- validation: a clear message, nothing stored ---------------------------------------------------
def test_bad_answers_are_refused_and_nothing_is_stored(make_client):
    client = make_client(practice=0)
    start(client, "ann")
    nxt = client.get("/api/next/event/test").json()
    ok = {"obj": 1, "attr": "color", "value": "color.red"}
    cases = [
        ([{"obj": 10, "attr": "color", "value": "color.red"}], "not an object index 0..9"),
        ([{"obj": -1, "attr": "color", "value": "color.red"}], "not an object index 0..9"),
        ([{"obj": "3", "attr": "color", "value": "color.red"}], "not an object index 0..9"),
        ([{"obj": True, "attr": "color", "value": "color.red"}], "not an object index 0..9"),
        ([{"obj": 1, "attr": "color", "value": "color.pink"}], "is not a value"),
        ([{"obj": 1, "attr": "shape", "value": "color.red"}], "does not belong to the attribute"),
        ([ok] * 5, "at most 4"),
        ([], "at least one step"),
        ("color.red", "list of steps"),
        ([[1, "color.red"]], "step 1"),
    ]
    for steps, message in cases:
        r = answer(client, "event", nxt, steps)
        assert r.status_code == 422, (steps, r.text)
        assert message in r.json()["error"], (steps, r.json())
    r = answer(client, "event", {**nxt, "sample_id": "no-such-sample"}, [ok])
    assert r.status_code == 404 and "unknown sample" in r.json()["error"]
    r = answer(client, "event", {**nxt, "split": "nosplit"}, [ok])
    assert r.status_code == 404
    r = answer(client, "nope", nxt, [ok])
    assert r.status_code == 404 and "unknown problem" in r.json()["error"]
    # a real sample of the split that was not given to this tester
    others = [
        i for i in client.app.state.catalog.split("event", "test").index if i != nxt["sample_id"]
    ]
    r = answer(client, "event", {**nxt, "sample_id": others[0]}, [ok])
    assert r.status_code == 409 and "not given to you" in r.json()["error"]
    for key in (None, "short", "bad key with spaces", "x" * 65):
        body = {"problem": "event", "split": "test", "sample_id": nxt["sample_id"], "steps": [ok]}
        if key is not None:
            body["key"] = key
        r = client.post("/api/answer", json=body)
        assert r.status_code == 400 and "submission key" in r.json()["error"]
    r = answer(client, "event", nxt, [ok], client_seconds=-4)
    assert r.status_code == 400
    r = client.post(
        "/api/answer", content=b"{not json", headers={"Content-Type": "application/json"}
    )
    assert r.status_code == 400
    r = client.post("/api/answer", content=b"steps=1", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415
    assert answers_stored(client) == 0
    # Basic allows one step only
    start_basic = make_client(practice=0)
    start(start_basic, "bea")
    b = start_basic.get("/api/next/basic/test").json()
    r = answer(start_basic, "basic", b, [ok, ok])
    assert r.status_code == 422 and "at most 1" in r.json()["error"]
    assert answers_stored(start_basic) == 0
    # and the good answer is stored once
    r = answer(client, "event", nxt, [ok])
    assert r.status_code == 200 and r.json()["stored"]
    assert answers_stored(client) == 1


def test_no_tester_no_answer(make_client):
    client = make_client()
    r = client.post(
        "/api/answer",
        json={"problem": "event", "split": "test", "sample_id": "x", "steps": [], "key": new_key()},
    )
    assert r.status_code == 401
    assert client.get("/api/next/event/test").status_code == 401
    assert client.get("/history", follow_redirects=False).status_code == 303


@pytest.mark.parametrize(
    "name, message",
    [
        ("", "enter your name"),
        ("   ", "enter your name"),
        ("x" * 41, "too long"),
        ("a\x00b", "cannot be shown"),
    ],
)
def test_bad_names(make_client, name, message):
    client = make_client()
    r = client.post("/api/start", json={"name": name})
    assert r.status_code == 422 and message in r.json()["error"]
    page = post_form(client, "/start", {"name": name, "test": "event:test"})
    assert page.status_code == 422 and "tvr_tester" not in page.cookies
    with client.app.state.sessions() as db:
        from tvr.web.db import Tester

        assert db.scalar(select(func.count()).select_from(Tester)) == 0


def test_a_name_belongs_to_one_browser(make_client):
    ann = make_client()
    start(ann, "ann")
    start(ann, "ann")  # the same browser again: fine
    thief = make_client()
    r = thief.post("/api/start", json={"name": "ann"})
    assert r.status_code == 409 and "already taken" in r.json()["error"]


def test_retried_submission_is_stored_once(make_client):
    client = make_client(practice=0)
    start(client, "ann")
    nxt = client.get("/api/next/event/test").json()
    steps = right_steps(sample_of(client.app.state.catalog, "event", nxt))
    key = new_key()
    first = answer(client, "event", nxt, steps, key=key)
    again = answer(client, "event", nxt, steps, key=key)
    assert first.status_code == again.status_code == 200
    assert first.json()["stored"] and not again.json()["stored"]
    assert first.json()["answer_id"] == again.json()["answer_id"]
    other_key = answer(client, "event", nxt, steps)  # a second answer to the same sample
    assert other_key.status_code == 409
    assert answers_stored(client) == 1


# --- security ------------------------------------------------------------------------------------------
TRAVERSALS = [
    "/img/event/test/0/init/../../../config.json",
    "/img/event/test/0/init/..%2F..%2F..%2Fconfig.json",
    "/img/event/test/0/init/%2e%2e%2f%2e%2e%2fconfig.json",
    "/img/event/test/0/init/..%252f..%252fconfig.json",
    "/img/event/..%2F..%2F/0/init/C.png",
    "/img/..%2F..%2Fetc/test/0/init/C.png",
    "/img/event/test/..%2F0/init/C.png",
    "/img/event/test/0/..%2Finit/C.png",
    "/img/event/test/-1/init/C.png",
    "/img/event/test/6/init/C.png",
    "/img/event/test/0/init/L.png",
    "/img/event/test/0/fin/X.png",
    "/img/event/test/0/mid/C.png",
    "/img/event/test/%2Fetc%2Fpasswd/init/C.png",
    "/static/../app.py",
    "/static/..%2Fapp.py",
    "/static/%2e%2e/app.py",
    "/static/%2e%2e%2fdb.py",
    "/static//etc/passwd",
]


@pytest.mark.parametrize("url", TRAVERSALS)
def test_no_path_traversal(make_client, url):
    client = make_client()
    r = client.get(url)
    assert r.status_code == 404, (url, r.status_code)
    assert b"def create_app" not in r.content and b"root:" not in r.content
    assert b'"setting"' not in r.content


def test_images_come_from_the_store(make_client, datasets):
    client = make_client(viewer=True)
    sp = open_dataset(datasets["view"]).split("test")
    for stage, view in (("init", "C"), ("fin", "L"), ("fin", "C"), ("fin", "R")):
        r = client.get(f"/img/view/test/2/{stage}/{view}.png")
        assert r.status_code == 200 and r.headers["content-type"] == "image/png"
        assert r.content == sp.image_path(2, stage, view).read_bytes()


def test_tester_isolation_and_admin_option(make_client):
    ann = make_client(practice=0)
    start(ann, "ann")
    nxt = ann.get("/api/next/event/test").json()
    answer(ann, "event", nxt, right_steps(sample_of(ann.app.state.catalog, "event", nxt)))
    bob = make_client(practice=0)
    start(bob, "bob")
    assert bob.get("/api/history/event/test").json()["count"] == 0
    assert nxt["sample_id"] not in bob.get("/history").text
    assert bob.get("/export/event/test").text == ""
    assert nxt["sample_id"] in ann.get("/history").text
    # no admin view on the study server
    for url in ("/admin", "/admin/tester/1", "/admin/export/1/event/test"):
        assert bob.get(url).status_code == 404
    assert "ann" not in bob.get("/admin").text
    admin = make_client(viewer=True, admin=True)  # a viewer server on the study's database
    page = admin.get("/admin")
    assert page.status_code == 200 and "ann" in page.text and "bob" in page.text
    assert nxt["sample_id"] in admin.get("/admin/tester/1").text
    assert nxt["sample_id"] in admin.get("/admin/export/1/event/test").text


# --- history, export, persistence --------------------------------------------------------------------
def test_event_history_numbers_by_hand(make_client):
    client = make_client(practice=1)
    start(client, "ann")
    cat = client.app.state.catalog
    first = finish_practice(client, "event", "test")
    s1 = sample_of(cat, "event", first)
    r = answer(client, "event", first, right_steps(s1))
    assert r.json()["correct"] and r.json()["distance"] == 0
    second = client.get("/api/next/event/test").json()
    s2 = sample_of(cat, "event", second)
    r = answer(client, "event", second, wrong_steps(s2))
    got = r.json()
    assert not got["correct"] and not got["loose_correct"] and got["distance"] == 1
    assert got["broken_rule"] is None
    assert [x["value"] for x in got["reference"]] == [
        v.split(".", 1)[1] for v in (st["value"] for st in right_steps(s2))
    ]
    h = client.get("/api/history/event/test").json()
    n1, n2 = len(s1.steps), len(s2.steps)
    assert h["count"] == 2  # practice answers do not count
    assert h["Acc"] == 0.5 and h["LAcc"] == 0.5
    assert h["AD"] == pytest.approx(0.5)
    assert h["AND"] == pytest.approx((0 + 1 / n2) / 2)
    expected_steps = {}
    for n, ok in ((n1, 1.0), (n2, 0.0)):
        expected_steps.setdefault(str(n), []).append(ok)
    assert {k: (v["count"], v["Acc"]) for k, v in h["by_steps"].items()} == {
        k: (len(v), sum(v) / len(v)) for k, v in expected_steps.items()
    }
    assert h["by_view"] == {"C": {"count": 2, "Acc": 0.5}}
    assert h["mean_time"] >= 0 and h["mean_client_time"] == 1.5
    page = client.get("/history").text
    assert "0.5000" in page and s2.id in page and s1.id in page


def test_basic_history_and_view_history(make_client):
    client = make_client(practice=0)
    start(client, "ann")
    cat = client.app.state.catalog
    a = client.get("/api/next/basic/test").json()
    answer(client, "basic", a, right_steps(sample_of(cat, "basic", a)))
    b = client.get("/api/next/basic/test").json()
    r = answer(client, "basic", b, basic_wrong_value(sample_of(cat, "basic", b)))
    assert r.json()["obj_correct"] and r.json()["attr_correct"] and not r.json()["value_correct"]
    h = client.get("/api/history/basic/test").json()
    assert (h["count"], h["Acc"], h["ObjAcc"], h["AttrAcc"], h["ValAcc"]) == (2, 0.5, 1.0, 1.0, 0.5)
    # View: the view shown is the sample's stored view, and it is recorded per answer
    v = client.get("/api/next/view/test").json()
    sample = sample_of(cat, "view", v)
    assert v["view"] == sample.extra["view"]
    assert f"/img/view/test/{v['index']}/fin/{v['view']}.png" in client.get("/test/view/test").text
    r = answer(client, "view", v, right_steps(sample))
    assert r.json()["view"] == sample.extra["view"] and r.json()["correct"]
    h = client.get("/api/history/view/test").json()
    assert h["by_view"] == {sample.extra["view"]: {"count": 1, "Acc": 1.0}}


@pytest.mark.parametrize("problem", ["event", "view", "basic"])
def test_export_is_scored_by_tvr_evaluate(make_client, datasets, tmp_path, problem):
    client = make_client(practice=0)
    start(client, "ann")
    cat = client.app.state.catalog
    verdicts = {}
    for k in range(3):
        nxt = client.get(f"/api/next/{problem}/test").json()
        sample = sample_of(cat, problem, nxt)
        if k == 1:
            steps = basic_wrong_value(sample) if problem == "basic" else wrong_steps(sample)
        else:
            steps = right_steps(sample)
        verdicts[nxt["sample_id"]] = answer(client, problem, nxt, steps).json()["correct"]
    assert list(verdicts.values()) == [True, False, True]
    export = client.get(f"/export/{problem}/test")
    assert export.status_code == 200 and "attachment" in export.headers["content-disposition"]
    path = tmp_path / "human.jsonl"
    path.write_text(export.text)
    samples = open_dataset(datasets[problem]).split("test").samples_path
    summary = evaluate_files(samples, path, problem, out=tmp_path / "eval")
    assert summary["predicted"] == 3 and summary["invalid"] == 0
    assert summary["metrics"]["Acc"] == pytest.approx(2 / 6)  # 6 test samples, 3 answered
    detail = [json.loads(x) for x in (tmp_path / "eval" / "detail.jsonl").read_text().splitlines()]
    assert {d["id"]: d["correct"] for d in detail if d["prediction"] is not None} == verdicts
    # the CLI reads it too, and `tvr serve --export` writes the same file
    assert (
        main(
            [
                "evaluate",
                "--data",
                str(samples),
                "--predictions",
                str(path),
                "--setting",
                problem,
            ]
        )
        == 0
    )
    out = tmp_path / "exported"
    assert (
        main(
            [
                "serve",
                "--data",
                *map(str, datasets.values()),
                "--db",
                client.app.state.config.database_url,
                "--export",
                str(out),
            ]
        )
        == 0
    )
    files = list((out / problem / "test").glob("*.jsonl"))
    assert len(files) == 1 and files[0].read_text() == export.text


def test_results_survive_a_restart(make_client):
    first = make_client(practice=0)
    start(first, "ann")
    nxt = first.get("/api/next/event/test").json()
    answer(first, "event", nxt, right_steps(sample_of(first.app.state.catalog, "event", nxt)))
    before = first.get("/api/history/event/test").json()
    cookie = first.cookies.get("tvr_tester")
    first.app.state.engine.dispose()
    second = make_client(practice=0)  # a new app on the same database file
    second.cookies.set("tvr_tester", cookie)
    assert second.get("/api/history/event/test").json() == before
    assert before["count"] == 1
    # the order goes on where it stopped
    assert second.get("/api/next/event/test").json()["sample_id"] != nxt["sample_id"]


def test_sqlite_runs_in_wal_mode(make_client):
    client = make_client()
    with client.app.state.engine.connect() as conn:
        assert conn.exec_driver_sql("PRAGMA journal_mode").scalar() == "wal"
        assert conn.exec_driver_sql("PRAGMA busy_timeout").scalar() == 30000


def test_default_database_lies_beside_the_data(datasets):
    from tvr.web.config import ServeConfig

    config = ServeConfig(data=(datasets["event"],))
    assert config.database_url == f"sqlite:///{datasets['event'].resolve() / 'human-tests.sqlite'}"


# --- viewer ----------------------------------------------------------------------------------------------
def test_viewer_filters_and_predictions(make_client, datasets, tmp_path):
    sp = open_dataset(datasets["event"]).split("test")
    samples = sp.samples()
    preds = tmp_path / "model.jsonl"
    lines = [{"id": samples[0].id, "steps": right_steps(samples[0])}]
    lines.append({"id": samples[1].id, "steps": wrong_steps(samples[1])})
    preds.write_text("".join(json.dumps(x) + "\n" for x in lines))
    run = tmp_path / "run1"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"setting": "event", "model": "resnet--g"}))
    (run / "predictions.jsonl").write_text(
        json.dumps({"id": samples[0].id, "steps": [{"obj": 0, "value": "position.front.2"}] * 4})
        + "\n"
    )
    client = make_client(viewer=True, predictions=(preds, run))
    index = client.get("/viewer").text
    assert "model" in index and "run1 (resnet--g)" in index
    page = client.get("/viewer/event/test")
    assert page.status_code == 200 and all(s.id in page.text for s in samples)
    for k in range(1, 5):
        want = [s.id for s in samples if len(s.steps) == k]
        got = client.get(f"/viewer/event/test?steps={k}").text
        assert all(i in got for i in want) and not any(
            s.id in got for s in samples if s.id not in want
        )
    out_ids = [s.id for s in samples if any(st.move_type == "out" for st in s.steps)]
    got = client.get("/viewer/event/test?move=out").text
    assert all(i in got for i in out_ids) and f"{len(out_ids)} of 6 samples" in got
    detail = client.get("/viewer/event/test/0").text
    assert "model: correct" in detail and "run1 (resnet--g): wrong" in detail
    # the same scores as tvr evaluate
    ref = ReferenceTable.from_samples(samples, "event")
    d = {
        x["id"]: x
        for x in details(
            ref,
            read_predictions(run / "predictions.jsonl", ref, lenient=False),
            score(ref, read_predictions(run / "predictions.jsonl", ref)),
        )
    }
    want = d[samples[0].id]
    assert f"<th>distance</th><td>{want['distance']}</td>" in detail
    if want["broken_rule"]:
        assert f"{want['broken_rule']['rule']} at step {want['broken_rule']['step']}" in detail
    wrong = client.get("/viewer/event/test/1").text
    assert (
        "model: wrong" in wrong
        and "<th>distance</th><td>1</td>" in wrong
        and 'class="diff"' in wrong
    )
    assert client.get("/viewer/event/test/99").status_code == 404
    assert client.get("/viewer/event/nosplit").status_code == 404


def test_bad_predictions_file_names_the_line(datasets, tmp_path):
    from tvr.core.errors import UserError
    from tvr.trance.web.app import create_app
    from tvr.web.config import ServeConfig

    sp = open_dataset(datasets["event"]).split("test")
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        json.dumps({"id": sp.ids[0], "steps": [{"obj": 12, "value": "color.red"}]}) + "\n"
    )
    with pytest.raises(UserError, match=r"bad.jsonl, line 1, field 'steps\[0\].obj'"):
        create_app(
            ServeConfig(
                data=(datasets["event"],),
                predictions=(bad,),
                viewer=True,
                db_url=f"sqlite:///{tmp_path}/x.sqlite",
            )
        )


def test_any_sqlalchemy_url_in_memory(make_client):
    client = make_client(db_url="sqlite://", practice=0)
    start(client, "ann")
    nxt = client.get("/api/next/event/test").json()
    r = answer(client, "event", nxt, right_steps(sample_of(client.app.state.catalog, "event", nxt)))
    assert r.status_code == 200 and client.get("/api/history/event/test").json()["count"] == 1


def test_names_are_escaped_in_pages(make_client):
    client = make_client()
    start(client, "<script>alert(1)</script>")
    admin = make_client(viewer=True, admin=True)
    for page in (client.get("/").text, client.get("/history").text, admin.get("/admin").text):
        assert "<script>alert(1)</script>" not in page
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_unwritable_database_is_a_clear_error(datasets, tmp_path):
    from tvr.core.errors import UserError
    from tvr.trance.web.app import create_app
    from tvr.web.config import ServeConfig

    bad = f"sqlite:///{tmp_path}/no/such/folder/x.sqlite"
    with pytest.raises(UserError, match="cannot open the results database"):
        create_app(ServeConfig(data=(datasets["event"],), db_url=bad))
