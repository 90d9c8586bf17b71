"""End-to-end in a real browser: Debian's chromium driven by Playwright (never a downloaded
browser). The server runs with uvicorn on a free loopback port; the test goes through the
introduction, answers two samples (one right, one wrong), checks the history, and saves
screenshots of every page (the path is printed; run with -s to see it)."""

from __future__ import annotations

import json
import os
import socket
import tempfile
import threading
import time
from pathlib import Path

import pytest

from tests.trance.web.helpers import right_steps, wrong_steps

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]

pytestmark = pytest.mark.skipif(
    not os.path.exists(CHROMIUM),
    reason=f"{CHROMIUM} missing: apt-get install chromium (scripts/test.sh does)",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def server(datasets, tmp_path):
    import uvicorn

    from tvr.trance.dataset.store import open_dataset
    from tvr.trance.web.app import create_app
    from tvr.web.config import ServeConfig

    samples = open_dataset(datasets["event"]).split("test").samples()
    preds = tmp_path / "model-a.jsonl"  # one right and one wrong prediction for the viewer
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
        practice=2,
    )
    app = create_app(config)
    port = free_port()
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not srv.started:
        assert time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    yield app, f"http://127.0.0.1:{port}"
    srv.should_exit = True
    thread.join(10)


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


def test_tester_in_a_real_browser(server):
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
        page.wait_for_url("**/test/event/test")
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

        # the viewer
        page.goto(url + "/viewer/view/test")
        settle(page)
        page.screenshot(path=shots / "7-viewer-list.png", full_page=True)
        page.goto(url + "/viewer/event/test/1")
        assert "model-a: wrong" in page.inner_text(".prediction h2")
        page.click("details.card summary")
        settle(page)
        page.screenshot(path=shots / "8-viewer-sample.png", full_page=True)
        assert not errors, errors
        browser.close()
    assert len(list(shots.glob("*.png"))) == 8
