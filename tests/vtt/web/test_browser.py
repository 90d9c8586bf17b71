"""The rating pages in a real browser: Debian's chromium driven by Playwright (never a downloaded
browser). A rater starts, reads the resume code, rates one unit with the radio buttons, another
with "Cannot decide", and the ratings are in the database. Screenshots go to a temporary folder
(the path is printed; run with -s to see it)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.web.browser import ARGS, CHROMIUM, needs_chromium, serving

pytestmark = needs_chromium


def test_rater_in_a_real_browser(make_config, tmp_path):
    pytest.importorskip("playwright")
    from playwright.sync_api import sync_playwright

    from tvr.vtt.web.export import rating_lines
    from tvr.web.factory import create_app

    shots = Path(tempfile.mkdtemp(prefix="tvr-vtt-shots-"))
    print(f"\nscreenshots: {shots}")
    app = create_app(make_config(), "vtt")
    with serving(app) as url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1300, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url + "/")
        assert page.locator("table.guidelines tbody tr").count() == 15
        page.fill("#name", "Ada")
        page.click("#start")
        page.wait_for_url("**/welcome")
        code = page.inner_text("#resume-code")
        cookies = {c["name"]: c["value"] for c in page.context.cookies()}
        assert code.replace("-", "") == cookies["tvr_tester"]
        page.click("#begin")
        page.wait_for_url("**/rate")
        page.wait_for_function("[...document.images].every(i => i.complete && i.naturalWidth > 0)")
        n_images = page.locator("#states img").count()
        assert n_images >= 2 and page.locator("#states figcaption").nth(0).inner_text() == "1"
        assert page.locator("#descriptions li").count() >= n_images - 1
        assert "1 → 2:" in page.inner_text("#descriptions")
        page.screenshot(path=shots / "1-rate.png", full_page=True)

        # submitting with a score missing says so and stores nothing
        page.check("#fluency input[value='5']")
        page.click("#submit")
        assert "Rate all three" in page.inner_text("#message")
        page.check("#relevance input[value='4']")
        page.check("#logical_soundness input[value='2']")
        page.click("#submit")
        page.wait_for_function(
            "document.getElementById('progress').textContent.includes('rated 1')"
        )
        page.click("#undecided")
        page.wait_for_function(
            "document.getElementById('progress').textContent.includes('rated 2')"
        )
        page.screenshot(path=shots / "2-next.png", full_page=True)
        page.click("#leave")
        page.wait_for_url("**/leave")
        page.click("#logout")
        page.wait_for_url(url + "/")
        browser.close()
    assert errors == []
    lines = rating_lines(f"sqlite:///{tmp_path / 'ratings.sqlite'}")
    assert [(x["fluency"], x["relevance"], x["logical_soundness"], x["undecided"])
            for x in lines] == [(5, 4, 2, False), (None, None, None, True)]  # fmt: skip
    assert lines[0]["client_seconds"] is not None and lines[0]["client_seconds"] >= 0
