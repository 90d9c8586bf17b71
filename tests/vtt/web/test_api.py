"""The VTT rating pages through their API: raters, typed bodies, the safeguards, two raters per
unit, the export and the table."""

from __future__ import annotations

import json

import pytest

from tests.vtt.samples import sample_id
from tests.vtt.web.conftest import PREDICTIONS
from tvr.core.errors import UserError
from tvr.web.config import ServeConfig
from tvr.web.factory import create_app

SCORES = {"fluency": 5, "relevance": 4, "logical_soundness": 3}


def start(client, name):
    r = client.post("/api/start", json={"name": name})
    assert r.status_code == 200, r.text
    return r.json()


def rate(client, serving, key, **body):
    return client.post("/api/rating", json={"serving": serving, "key": key, **body})


def test_a_rater_rates_a_unit(make_client):
    client = make_client()
    started = start(client, "Ada")
    assert len(started["resume_code"]) == 19  # four groups of four
    nxt = client.get("/api/next").json()
    assert not nxt["done"] and nxt["rated"] == 0 and nxt["still_needed"] == 2 * 6
    assert "model" not in json.dumps(nxt)  # raters never learn which model wrote it
    n = nxt["n"]
    assert nxt["states"] == [nxt["states"][0][:-1] + str(i) for i in range(n + 1)]
    assert len(nxt["descriptions"]) >= n and nxt["descriptions"][0]["pair"] == "1 → 2"
    image = client.get(nxt["states"][0])
    assert image.status_code == 200 and image.content.startswith(b"\xff\xd8\xff")
    assert client.get("/api/next").json()["serving"] == nxt["serving"]  # the open one again
    r = rate(client, nxt["serving"], "key-00000001", **SCORES, client_seconds=12.5)
    assert r.status_code == 200 and r.json()["stored"] and r.json()["fluency"] == 5
    again = rate(client, nxt["serving"], "key-00000001", **SCORES)
    assert again.status_code == 200 and not again.json()["stored"]  # a retry is stored once
    twice = rate(client, nxt["serving"], "key-00000002", **SCORES)
    assert twice.status_code == 409 and "rated this sample already" in twice.json()["error"]
    following = client.get("/api/next").json()
    assert following["serving"] != nxt["serving"] and following["rated"] == 1


@pytest.mark.parametrize(
    ("body", "status", "words"),
    [
        ({"fluency": "5", "relevance": 4, "logical_soundness": 3}, 422, "field 'fluency'"),
        ({"fluency": 5.0, "relevance": 4, "logical_soundness": 3}, 422, "field 'fluency'"),
        ({"fluency": 6, "relevance": 4, "logical_soundness": 3}, 422, "field 'fluency'"),
        ({"fluency": True, "relevance": 4, "logical_soundness": 3}, 422, "field 'fluency'"),
        ({"fluency": 5, "relevance": 4}, 422, "rate the logical soundness"),
        ({**SCORES, "undecided": "yes"}, 422, "field 'undecided'"),
        ({**SCORES, "client_seconds": -1}, 422, "field 'client_seconds'"),
        ({**SCORES, "key": "short"}, 422, "key must be 8-64"),
        ({**SCORES, "serving": "1"}, 422, "field 'serving'"),
        ({**SCORES, "serving": 999}, 404, "no sample 999 was served to you"),
    ],
)
def test_rating_bodies_are_checked(make_client, body, status, words):
    client = make_client()
    start(client, "Ada")
    serving = client.get("/api/next").json()["serving"]
    r = client.post("/api/rating", json={"serving": serving, "key": "key-00000001", **body})
    assert r.status_code == status and words in r.json()["error"], r.text


def test_undecided_stores_no_scores(make_client):
    client = make_client()
    start(client, "Ada")
    serving = client.get("/api/next").json()["serving"]
    r = rate(client, serving, "key-00000001", undecided=True, fluency=2)
    assert r.status_code == 200
    assert r.json()["undecided"] and r.json()["fluency"] is None


def test_safeguards(make_client):
    client = make_client()
    assert client.get("/api/next").status_code == 401
    assert rate(client, 1, "key-00000001", **SCORES).status_code == 401
    start(client, "Ada")
    # another site's page cannot post, with or without a JSON body
    foreign = client.post("/api/rating", json={"serving": 1, "key": "key-00000001", **SCORES},
                          headers={"Origin": "https://evil.example"})  # fmt: skip
    assert foreign.status_code == 403
    sec = client.post("/api/start", json={"name": "Bob"}, headers={"Sec-Fetch-Site": "cross-site"})
    assert sec.status_code == 403
    plain = client.post("/api/rating", content=json.dumps({"serving": 1}),
                        headers={"Content-Type": "text/plain"})  # fmt: skip
    assert plain.status_code == 415
    # a form without the browser's token is refused
    assert client.post("/start", data={"name": "Eve"}).status_code == 403
    # a serving of another rater is not yours to rate
    other = make_client()
    start(other, "Bob")
    theirs = other.get("/api/next").json()["serving"]
    assert rate(client, theirs, "key-00000009", **SCORES).status_code == 404
    # names are one name across case and width; resume codes bring a rater back
    third = make_client()
    assert third.post("/api/start", json={"name": "ＡＤＡ"}).status_code == 409


def test_resume_code_and_forms(make_client):
    client = make_client()
    page = client.get("/")
    token = page.cookies.get("tvr_csrf") or client.cookies.get("tvr_csrf")
    assert 'name="csrf"' in page.text and token
    r = client.post("/start", data={"name": "Ada", "csrf": token}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/welcome"
    code = client.get("/welcome").text.split('id="resume-code">')[1].split("<")[0]
    assert client.get("/rate").status_code == 200
    other = make_client()
    other.get("/")
    t2 = other.cookies.get("tvr_csrf")
    r = other.post("/resume", data={"code": code.lower(), "csrf": t2}, follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/rate"
    assert "Ada" in other.get("/rate").text
    bad = other.post("/resume", data={"code": "0000-0000-0000-0000", "csrf": t2})
    assert bad.status_code == 404 and "no rater has this resume code" in bad.text


def test_every_unit_gets_two_raters_and_the_export_and_table(make_client, tmp_path):
    from tvr.vtt.web.export import model_table, rating_lines, write_ratings

    raters = [make_client() for _ in range(3)]
    for k, client in enumerate(raters):
        start(client, f"rater {k}")
    units, counted = 6, 0
    scores = {}  # (rater, serving) -> scores given
    # round-robin until no rater gets anything: 12 decided ratings in all
    for round_ in range(20):
        progressed = False
        for k, client in enumerate(raters):
            nxt = client.get("/api/next").json()
            if nxt["done"]:
                continue
            progressed = True
            given = {"fluency": 1 + (k + round_) % 5, "relevance": 5, "logical_soundness": 1 + k}
            r = rate(client, nxt["serving"], f"key-{k}-{round_:04d}", **given)
            assert r.status_code == 200, r.text
            scores[(k, nxt["serving"])] = given
            counted += 1
        if not progressed:
            break
    assert counted == 2 * units
    assert all(c.get("/api/next").json() == {"done": True, "still_needed": 0} for c in raters)
    db = f"sqlite:///{tmp_path / 'ratings.sqlite'}"
    lines = rating_lines(db)
    per_unit = {}
    for line in lines:
        per_unit.setdefault((line["sample_id"], line["model"]), []).append(line["rater"])
    assert len(per_unit) == units
    assert all(len(r) == 2 and len(set(r)) == 2 for r in per_unit.values())
    # what was shown is stored with the rating
    shown = {(x["sample_id"], x["model"]): x["transformations"] for x in lines}
    assert shown[(sample_id(1), "model-b")] == PREDICTIONS["model-b"][sample_id(1)]

    table = model_table(lines)
    for model in PREDICTIONS:
        mine = [x for x in lines if x["model"] == model]
        assert table[model]["ratings"] == 6 and table[model]["samples"] == 3
        assert table[model]["samples_with_2"] == 3
        assert table[model]["relevance"] == 5 and table[model]["relevance_std"] == 0
        want = sum(x["logical_soundness"] for x in mine) / 6
        assert table[model]["logical_soundness"] == pytest.approx(want)
    summary = write_ratings(db, tmp_path / "export")
    assert summary["ratings"] == 12
    csv_lines = (tmp_path / "export" / "ratings.csv").read_text().splitlines()
    assert csv_lines[0].startswith("sample_id,model,rater,n,transformations,fluency")
    assert len(csv_lines) == 13
    text = (tmp_path / "export" / "table.md").read_text()
    assert "| model-a | " in text and "| TTNet | 4.78 | 4.10 | 4.11 |" in text


def test_units_others_are_rating_are_claimed(make_client, tmp_path):
    """With 2 raters wanted, a unit served to a rater still rating it is claimed: of 13 raters
    starting at once on 6 units, the first 6 get one unit each, the next 6 the second places, and
    the 13th nothing for now; once the claims lapse, a rater gets a unit again."""
    from collections import Counter

    from sqlalchemy import create_engine, select

    from tvr.vtt.web.models import VttServing

    def served() -> list[tuple[str, str]]:
        engine = create_engine(f"sqlite:///{tmp_path / 'ratings.sqlite'}")
        with engine.connect() as conn:
            rows = [tuple(r) for r in conn.execute(
                select(VttServing.sample_id, VttServing.model).order_by(VttServing.id))]  # fmt: skip
        engine.dispose()
        return rows

    clients = [make_client() for _ in range(13)]
    answers = []
    for k, c in enumerate(clients):
        start(c, f"r{k}")
        answers.append(c.get("/api/next").json())
    rows = served()
    assert len(set(rows[:6])) == 6 and Counter(rows[:12]) == dict.fromkeys(set(rows), 2)
    assert answers[12] == {"done": True, "still_needed": 12}
    lapsed = make_client(claim_minutes=1e-9)
    lapsed.cookies.update(clients[12].cookies)
    assert not lapsed.get("/api/next").json()["done"]


def test_config_errors(make_config, release, tmp_path):
    from tvr.vtt.web.app import vtt_pages

    with pytest.raises(UserError, match="at least 2 raters"):
        vtt_pages(make_config(raters=1))
    with pytest.raises(UserError, match="give the predictions to rate"):
        vtt_pages(make_config(predictions={}))
    with pytest.raises(UserError, match="rating pages only"):
        create_app(ServeConfig(data=(release,), viewer=True, db_url="sqlite://"), "vtt")
    with pytest.raises(UserError, match="unknown VTT serve options: colour"):
        vtt_pages(make_config(colour="red"))
    (release / "states" / f"{sample_id(0)}_4_1.jpg").unlink()
    with pytest.raises(UserError, match=r"line 1: state image .*_4_1\.jpg: missing"):
        vtt_pages(make_config())


def test_the_subset_is_seeded(make_config):
    from tvr.vtt.web.app import vtt_pages

    one = vtt_pages(make_config(subset=2, seed=3)).state["study"]
    two = vtt_pages(make_config(subset=2, seed=3)).state["study"]
    assert [r.id for r in one.samples] == [r.id for r in two.samples]
    assert len(one.samples) == 2 and len(one.units) == 4
    # two topics of the three are kept: one sample per topic comes first
    assert len({r.topic for r in one.samples}) == 2


def test_tvr_serve_benchmark_vtt(release, prediction_files, tmp_path, monkeypatch, capsys):
    """`tvr serve --benchmark vtt` builds the study from its options (uvicorn stubbed out)."""
    import uvicorn

    from tvr.cli import main

    served = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: served.update(app=app, **kw))
    named = [f"{k}={v}" for k, v in prediction_files.items()]
    db = f"sqlite:///{tmp_path / 'cli.sqlite'}"
    assert main(["serve", "--benchmark", "vtt", "--data", str(release), "--predictions", *named,
                 "--subset", "2", "--seed", "1", "--raters", "3", "--db", db]) == 0  # fmt: skip
    study = served["app"].state.study
    assert study.models == ["model-a", "model-b"] and len(study.samples) == 2 and study.target == 3
    assert "tvr serve: VTT ratings at http://127.0.0.1:8000/" in capsys.readouterr().out
    assert main(["serve", "--benchmark", "vtt", "--data", str(release), "--predictions",
                 f"a={tmp_path / 'none.jsonl'}"]) == 2  # fmt: skip
    assert "none.jsonl: no such file" in capsys.readouterr().err


def test_tvr_vtt_ratings(make_client, tmp_path, capsys):
    from tvr.cli import main

    client = make_client()
    start(client, "Ada")
    for k in range(2):
        serving = client.get("/api/next").json()["serving"]
        assert rate(client, serving, f"key-0000000{k}", **SCORES).status_code == 200
    db = f"sqlite:///{tmp_path / 'ratings.sqlite'}"
    assert main(["vtt", "ratings", "--db", db, "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "| 5.00 ± " in out and "| 4.00 ± " in out and "(2 ratings)" in out
    assert len((tmp_path / "out" / "ratings.jsonl").read_text().splitlines()) == 2
    missing = f"sqlite:///{tmp_path / 'nothing.sqlite'}"
    assert main(["vtt", "ratings", "--db", missing, "--out", str(tmp_path / "o2")]) == 2
    assert "no such database file" in capsys.readouterr().err
    assert not (tmp_path / "nothing.sqlite").exists()
