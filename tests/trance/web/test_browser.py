"""End-to-end in a real browser: Debian's chromium driven by Playwright (never a downloaded
browser). The server runs with uvicorn on a free loopback port; the test goes through the
introduction, answers two samples (one right, one wrong), checks the history, and saves
screenshots of every page (the path is printed; run with -s to see it)."""

from __future__ import annotations

import http.server
import json
import tempfile
import threading
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path

import pytest

from tests.trance.web.helpers import right_steps, wrong_steps
from tests.web.browser import ARGS, CHROMIUM, needs_chromium, serving

pytestmark = needs_chromium


@pytest.fixture
def server(datasets, tmp_path):
    """A study server: (app, URL)."""
    from tvr.trance.web.app import create_app
    from tvr.web.config import ServeConfig

    config = ServeConfig(
        data=tuple(datasets.values()), db_url=f"sqlite:///{tmp_path / 'e2e.sqlite'}", practice=2
    )
    app = create_app(config)
    with serving(app) as url:
        yield app, url


@pytest.fixture
def viewer(datasets, tmp_path):
    """A viewer server with one right and one wrong prediction of Event: its URL."""
    from tvr.trance.data.store import open_dataset
    from tvr.trance.web.app import create_app
    from tvr.web.config import ServeConfig

    samples = open_dataset(datasets["event"]).split("test").samples()
    preds = tmp_path / "model-a.jsonl"
    preds.write_text(
        json.dumps({"id": samples[0].id, "steps": right_steps(samples[0])})
        + "\n"
        + json.dumps({"id": samples[1].id, "steps": wrong_steps(samples[1])})
        + "\n"
    )
    config = ServeConfig(
        data=tuple(datasets.values()),
        predictions=(preds,),
        db_url=f"sqlite:///{tmp_path / 'e2e.sqlite'}",
        viewer=True,
    )
    with serving(create_app(config)) as url:
        yield url


def build(page, steps) -> None:
    """Enter steps in the step builder (its first row exists already)."""
    rows = page.locator("#steps tr")
    for k, st in enumerate(steps):
        if k >= rows.count():
            page.click("#add-step")
        row = page.locator("#steps tr").nth(k)
        row.locator("select").nth(0).select_option(str(st["obj"]))
        row.locator("select").nth(1).select_option(st["attr"])
        page.locator("#steps tr").nth(k).locator("select").nth(2).select_option(st["value"])


def chosen(page) -> list[tuple[str, str, str]]:
    return page.eval_on_selector_all(
        "#steps tr", "rows => rows.map(r => [...r.querySelectorAll('select')].map(s => s.value))"
    )


def settle(page) -> None:
    """Wait until every image of the page has loaded (before a screenshot)."""
    page.wait_for_function("[...document.images].every(i => i.complete && i.naturalWidth > 0)")


def boot(page) -> dict:
    return page.evaluate("JSON.parse(document.getElementById('boot').textContent)")


def test_tester_in_a_real_browser(server, viewer):
    from playwright.sync_api import sync_playwright

    app, url = server
    catalog = app.state.catalog
    shots = Path(tempfile.mkdtemp(prefix="tvr-web-shots-"))
    print(f"\nscreenshots: {shots}")

    def sample_on(page):
        b = boot(page)
        sd = catalog.split(b["problem"], b["split"])
        return b, sd.samples[sd.index[b["sample_id"]]]

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url + "/")
        assert page.locator("#test").input_value() == "basic:test"
        page.screenshot(path=shots / "1-start.png", full_page=True)
        page.fill("#name", "Ada")
        page.select_option("#test", "event:test")
        page.click("#start")
        page.wait_for_url("**/welcome/event/test")  # the resume code first
        code = page.inner_text("#resume-code")
        assert (
            code.replace("-", "")
            == {c["name"]: c["value"] for c in page.context.cookies()}["tvr_tester"]
        )
        page.click("#begin")
        page.wait_for_url("**/test/event/test")
        assert page.locator("header nav a", has_text="Viewer").count() == 0
        assert page.locator("#part").inner_text() == "Practice 1 of 2"
        assert page.locator("#intro").get_attribute("open") is not None
        settle(page)
        assert page.locator("img#img-init").evaluate("i => i.naturalWidth") == 320
        page.screenshot(path=shots / "2-introduction.png", full_page=True)

        # practice: answer with the reference, see the feedback with the ground truth
        for k in (1, 2):
            b, sample = sample_on(page)
            assert b["practice"] and page.locator("#part").inner_text() == f"Practice {k} of 2"
            build(page, right_steps(sample))
            page.click("#submit")
            page.wait_for_selector("#verdict")
            assert page.inner_text("#verdict") == "Correct"
            assert page.locator(".result ol.truth li").count() == len(sample.steps)
            if k == 1:
                page.screenshot(path=shots / "3-practice-feedback.png", full_page=True)
            assert page.inner_text("#next") == (
                "Next practice sample" if k == 1 else "Start the test"
            )
            page.click("#next")
            page.wait_for_load_state()

        # test sample 1: right, entered in reverse with an extra row, then fixed with the buttons
        b, s1 = sample_on(page)
        assert not b["practice"] and page.locator("#part").inner_text() == "Sample 1 of 6"
        steps = right_steps(s1)
        extra = {"obj": 9, "attr": "shape", "value": "shape.cube"}
        build(page, [extra, *reversed(steps)])
        page.locator("#steps tr").nth(0).locator("button.remove").click()
        assert page.locator("#steps tr").count() == len(steps)
        for k in range(1, len(steps)):  # reverse back with the up buttons
            for j in range(k, 0, -1):
                page.locator("#steps tr").nth(j).locator("button.up").click()
        want = [[str(s["obj"]), s["attr"], s["value"]] for s in steps]
        assert chosen(page) == want
        if len(steps) > 1:  # dragging reorders too
            page.locator("#steps tr").nth(len(steps) - 1).drag_to(page.locator("#steps tr").nth(0))
            assert chosen(page)[0] == want[-1]
            page.locator("#steps tr").nth(0).drag_to(page.locator("#steps tr").nth(len(steps) - 1))
            assert chosen(page) == want
        assert page.locator("#add-step").is_disabled() == (len(steps) == 4)
        page.screenshot(path=shots / "4-answer-built.png", full_page=True)
        page.click("#submit")
        page.wait_for_selector("#verdict")
        assert page.inner_text("#verdict") == "Correct"
        page.click("#next")
        page.wait_for_load_state()

        # test sample 2: wrong (one attribute off)
        b, s2 = sample_on(page)
        assert page.locator("#part").inner_text() == "Sample 2 of 6"
        build(page, wrong_steps(s2))
        page.click("#submit")
        page.wait_for_selector("#verdict")
        assert page.inner_text("#verdict") == "Not correct"
        assert "distance 1" in page.inner_text(".result")
        page.screenshot(path=shots / "5-wrong-feedback.png", full_page=True)

        # history: two finished samples, one right
        page.goto(url + "/history")
        stats = dict(
            zip(
                page.locator(".history table.stats").first.locator("th").all_inner_texts(),
                page.locator(".history table.stats").first.locator("td").all_inner_texts(),
                strict=True,
            )
        )
        assert stats["Count"] == "2"
        assert stats["Acc"] == "0.5000" and stats["LAcc"] == "0.5000"
        assert stats["AD"] == "0.5000"
        assert stats["AND"] == f"{(1 / len(s2.steps)) / 2:.4f}"
        assert page.locator("table.answers tbody tr").count() == 2
        page.screenshot(path=shots / "6-history.png", full_page=True)

        # the viewer: a server of its own
        page.goto(viewer + "/viewer/view/test")
        settle(page)
        page.screenshot(path=shots / "7-viewer-list.png", full_page=True)
        page.goto(viewer + "/viewer/event/test/1")
        assert "model-a: wrong" in page.inner_text(".prediction h2")
        page.click("details.card summary")
        settle(page)
        page.screenshot(path=shots / "8-viewer-sample.png", full_page=True)
        assert not errors, errors
        browser.close()
    assert len(list(shots.glob("*.png"))) == 8


ATTACK = """<!doctype html><html><body>
<iframe name="sink1"></iframe><iframe name="sink2"></iframe>
<form id="leave" method="post" action="{url}/logout" target="sink1"></form>
<form id="swap" method="post" action="{url}/start" target="sink2">
  <input name="name" value="mallory"><input name="test" value="event:test">
</form>
<script>
(async () => {{
  const body = {body};
  for (const type of ["text/plain; x=application/json", "application/x-www-form-urlencoded"]) {{
    try {{
      await fetch("{url}/api/answer", {{method: "POST", mode: "no-cors", credentials: "include",
        headers: {{"Content-Type": type}}, body: JSON.stringify(body)}});
    }} catch (e) {{}}
  }}
  document.getElementById("leave").submit();
  document.getElementById("swap").submit();
  setTimeout(() => {{ document.title = "done"; }}, 1500);
}})();
</script></body></html>"""


@contextmanager
def attacker_site(html: str):
    """A page of another origin (another loopback port): yields its URL."""

    class Page(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            data = html.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args):
            pass

    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Page)
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_address[1]}/"
    finally:
        srv.shutdown()
        srv.server_close()


def test_a_study_is_safe_from_other_pages_and_a_tester_can_come_back(server):
    """Issue 15, items 1-3 in a browser: no viewer during a test, a page on another port cannot
    answer, leave or swap the tester, and leaving (explained) then the resume code bring the
    tester back to the same sample with the clock where it was."""
    from playwright.sync_api import sync_playwright
    from sqlalchemy import func, select

    from tvr.web.db import Answer, Serving

    app, url = server
    catalog = app.state.catalog

    def answers() -> int:
        with app.state.sessions() as db:
            return db.scalar(select(func.count()).select_from(Answer))

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        context = browser.new_context()
        page = context.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url + "/")
        page.fill("#name", "Ada")
        page.select_option("#test", "event:test")
        page.click("#start")
        page.wait_for_url("**/welcome/event/test")
        code = page.inner_text("#resume-code").strip()
        page.click("#begin")
        page.wait_for_url("**/test/event/test")
        b = boot(page)
        cookie = {c["name"]: c["value"] for c in page.context.cookies()}["tvr_tester"]

        # 1. the references of the split under test are not served
        assert page.locator("header nav a", has_text="Viewer").count() == 0
        sd = catalog.split("event", "test")
        for k in range(len(sd)):
            r = page.goto(f"{url}/viewer/event/test/{k}")
            assert r.status == 404
            assert "Reference transformation" not in page.content()

        # 2. a page on another port of the same host tries to answer, leave and swap the tester
        shown = catalog.split("event", b["split"])
        sample = shown.samples[shown.index[b["sample_id"]]]
        body = {
            "problem": "event", "split": b["split"], "sample_id": b["sample_id"], "practice": True,
            "steps": right_steps(sample), "key": "attacker-key-0001",
        }  # fmt: skip
        with attacker_site(ATTACK.format(url=url, body=json.dumps(body))) as evil:
            other = context.new_page()
            other.goto(evil)
            other.wait_for_function("document.title === 'done'", timeout=15000)
            other.close()
        assert answers() == 0
        assert {c["name"]: c["value"] for c in page.context.cookies()}["tvr_tester"] == cookie
        page.goto(url + "/")
        assert "signed in as Ada" in page.inner_text("#signed-in")
        assert code in page.inner_text("#signed-in")

        # 3. leaving says what it does; the resume code brings Ada back to the same sample
        page.goto(url + "/test/event/test")
        with app.state.sessions() as db:  # shown 100 s ago
            row = db.scalar(select(Serving).where(Serving.sample_id == b["sample_id"]))
            row.served_at -= timedelta(seconds=100)
            db.commit()
        page.click("#leave")
        page.wait_for_url("**/leave")
        text = page.inner_text("main")
        assert code in text and "answers stay stored" in text
        page.click("#confirm-leave")
        page.wait_for_url(url + "/")
        page.fill("#name", "ada")  # the same name, another case
        page.click("#start")
        assert "already taken" in page.inner_text(".error")
        page.fill("#code", code.lower())
        page.select_option("#resume-test", "event:test")
        page.click("#resume")
        page.wait_for_url("**/test/event/test")
        assert boot(page)["sample_id"] == b["sample_id"]
        assert int(page.inner_text("#timer")) >= 100  # the clock goes on from the stored time
        assert not errors, errors
        browser.close()
