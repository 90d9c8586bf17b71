"""The verification pages in a real browser: Debian's chromium driven by Playwright (never a
downloaded browser). A verifier starts, answers items without seeing the generated answer (a
number, a letter, objects ticked), reviews each (the planted wrong ones flagged, with the fix the
page fills in), and leaves; the admin server shows the agreement and the fix. Screenshots go to
a temporary folder (run with -s to see it)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.visualtrans.web.build import PLANTED, make_build, truth
from tests.web.browser import ARGS, CHROMIUM, needs_chromium, serving

pytestmark = needs_chromium


def answer_page(page) -> int:
    """Answer the item on the page with its true answer; its position in the build."""
    n = int(page.inner_text("#question")[2:4]) - 1
    label = truth()[n]
    if page.locator("#count").count():
        page.fill("#count", label)
    elif page.locator("#answer input[type=radio]").count():
        page.check(f"#answer input[value='{label}']")
    else:
        for name in [] if label == "none" else label.split(", "):
            page.check(f"#answer input[value='{name}']")
    page.click("#submit")
    page.wait_for_selector("#generated")
    return n


def test_verifier_in_a_real_browser(make_config, build):
    only = (0, 1, 2, 5)  # three planted wrong answers and a right one
    make_build(build, only=only)
    pytest.importorskip("playwright")
    from playwright.sync_api import sync_playwright

    from tvr.web.factory import create_app

    shots = Path(tempfile.mkdtemp(prefix="tvr-vt-shots-"))
    print(f"\nscreenshots: {shots}")
    app = create_app(make_config(verifiers=1), "visualtrans")
    admin = create_app(make_config(admin=True, verifiers=1), "visualtrans")
    with serving(app) as url, serving(admin) as admin_url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1200, "height": 900})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url + "/")
        page.fill("#name", "Ada")
        page.click("#start")
        page.wait_for_url("**/welcome")
        assert len(page.inner_text("#resume-code")) == 19
        page.click("#begin")
        page.wait_for_url("**/verify")
        page.wait_for_function("[...document.images].every(i => i.complete && i.naturalWidth > 0)")
        assert page.locator("#images img").count() >= 2
        assert page.locator("#generated").count() == 0  # not before the answer
        page.screenshot(path=shots / "1-answer.png", full_page=True)
        flagged = []
        while page.locator("#done").count() == 0:
            n = answer_page(page)
            if page.inner_text("#agreement") == "they differ":
                # a planted wrong answer: the fix is already filled in with the verifier's answer
                assert page.input_value("#fix") == truth()[n]
                page.check("#flags input[value='wrong_answer']")
                page.screenshot(path=shots / f"2-review-{n}.png", full_page=True)
                flagged.append(n)
            else:
                assert page.input_value("#fix") == ""
            page.click("#review")
            page.wait_for_selector("#answer-form, #done")
        assert sorted(flagged) == sorted(PLANTED)
        page.click("#leave")
        page.wait_for_url("**/leave")
        page.click("#logout")
        page.wait_for_url(url + "/")
        admin_page = browser.new_page(viewport={"width": 1200, "height": 900})
        admin_page.goto(admin_url + "/")
        admin_page.wait_for_url("**/admin")
        assert admin_page.locator("#items tr").count() - 1 == 4
        assert admin_page.inner_text("#agreement") == "25.0 %"
        admin_page.screenshot(path=shots / "3-admin.png", full_page=True)
        admin_page.goto(f"{admin_url}/admin/item/{only.index(flagged[0])}")
        assert admin_page.inner_text("#outcome") == f"fixed → {truth()[flagged[0]]}"
        browser.close()
    assert errors == []
