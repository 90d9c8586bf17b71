#!/usr/bin/env python3
"""Remake the screenshots of the web apps in docs/img/ (shown in docs/web.md).

Makes small data with tvr's own commands (a TRANCE Event dataset and two baselines' predictions,
three CLEVRER videos, a VTT-shaped testbed with two prediction files), serves each app with
`tvr serve` on a free loopback port, drives Debian's chromium (/usr/bin/chromium, never a
downloaded browser) with Playwright as a tester, a rater or you would, and writes 1000 px wide
palette PNGs:

    web-trance-test.png      the TRANCE human test: a test sample with two steps entered
    web-trance-viewer.png    the TRANCE viewer: one sample, its reference and two predictions
    web-clevrer-viewer.png   the CLEVRER viewer: a video's page (video, objects, events)
    web-vtt-rating.png       the VTT rating page: the states, the descriptions, the scales
    web-vt-verify-N.png      VisualTrans verification: the first 10 items a verifier is served
                             from a testbed build (N = 1..10), as they see them (no answer)
    web-vt-verify-review.png the review of one of them: the generated answer beside theirs
    web-vt-verify-admin.png  the admin view after those 10 (agreement, flags, export)

Every command it runs is printed first. Needs the test install (the web, render, clevrer and
vtt extras; Playwright) and chromium. About a minute on 2 cores.

    python3 scripts/web_screenshots.py                  # into docs/img/
    python3 scripts/web_screenshots.py --out /tmp/shots --work /tmp/shots-data
    python3 scripts/web_screenshots.py --only visualtrans --visualtrans-build BUILD

The VisualTrans build is `tvr visualtrans testbed --episodes-per-scene 2 --error-rate 0.3`'s
unless --visualtrans-build names one; its questions are copied, so its own verify/ store is
never touched. The script's verifier gives the verdicts of scripts/web_screenshots_vt_verdicts.json
(what a person answered and flagged looking at these items, by item id) and answers any other
item with its generated answer.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run", "--hide-scrollbars"]  # fmt: skip
WIDTH = 1000  # of the PNGs written
VIEWPORT = {"width": 1200, "height": 900}  # the browser window


def run(*cmd: str) -> None:
    print("$", shlex.join(cmd), flush=True)
    subprocess.run(cmd, check=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def serving(*args: str) -> Iterator[str]:
    """`tvr serve ARGS --port P` in the background until it answers; yields its base URL."""
    port = free_port()
    cmd = ["tvr", "serve", *args, "--port", str(port)]
    print("$", shlex.join(cmd), "&", flush=True)
    server = subprocess.Popen(cmd)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            if server.poll() is not None:
                raise SystemExit(f"tvr serve exited with {server.returncode}")
            try:
                urllib.request.urlopen(url + "/", timeout=2)
                break
            except urllib.error.HTTPError:
                break  # it answers
            except OSError:
                if time.monotonic() > deadline:
                    raise SystemExit(f"tvr serve did not answer on {url}") from None
                time.sleep(0.3)
        yield url
    finally:
        server.terminate()
        server.wait(10)


def make_data(work: Path) -> dict[str, Path]:
    """The small data of the four pages, made by tvr's commands (skipped when already there)."""
    d = {"work": work, "event": work / "event", "clevrer": work / "clevrer", "vtt": work / "vtt"}
    run("tvr", "generate", "--setting", "event", "--split-sizes", "train=2,val=1,test=8",
        "--seed", "1", "--backend", "raster", "--preset", "preview", "--out", str(d["event"]),
        "--quiet")  # fmt: skip
    for kind in ("reversed", "random"):
        d[kind] = work / f"{kind}.jsonl"
        run("tvr", "baseline", kind, "--data", str(d["event"]), "--split", "test", "--seed", "1",
            "--out", str(d[kind]))  # fmt: skip
    run("tvr", "clevrer", "generate", "--out", str(d["clevrer"]), "--num", "3", "--seed", "1",
        "--quiet")  # fmt: skip
    run("tvr", "vtt", "testbed", "--out", str(d["vtt"]), "--num", "24", "--preset", "preview",
        "--quiet")  # fmt: skip
    # two "models" to rate: the testbed's own descriptions, and the same with the last one
    # dropped (a rater sees "(no description)"); raters never see these names
    records = [json.loads(line) for line in (d["vtt"] / "meta" / "vtt.jsonl").open()]
    for name, cut in (("describer", None), ("forgetful", -1)):
        d[name] = work / f"{name}.jsonl"
        with d[name].open("w") as f:
            for r in records:
                if r["split"] == "test":
                    labels = [a["label"] for a in r["annotation"]]
                    f.write(json.dumps({"id": r["id"], "transformations": labels[:cut]}) + "\n")
    print(f"wrote {d['describer']} and {d['forgetful']} (the testbed's descriptions; the "
          "second without the last one)")  # fmt: skip
    return d


def save(page, path: Path, height: int | None = None) -> None:
    """The page's viewport (or its top `height` pixels, below the fold too) as a WIDTH px wide
    palette PNG."""
    from PIL import Image

    raw = path.with_suffix(".raw.png")
    if height is None:
        page.screenshot(path=raw)
    else:
        full = page.evaluate("document.documentElement.scrollHeight")
        clip = {"x": 0, "y": 0, "width": VIEWPORT["width"], "height": min(height, full)}
        page.screenshot(path=raw, full_page=True, clip=clip)
    image = Image.open(raw).convert("RGB")
    height = round(image.height * WIDTH / image.width)
    image = image.resize((WIDTH, height), Image.Resampling.LANCZOS)
    image = image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    image.save(path, optimize=True)
    raw.unlink()
    print(f"wrote {path} ({WIDTH}x{height}, {path.stat().st_size // 1024} KB)", flush=True)


def images_loaded(page) -> None:
    page.wait_for_function("[...document.images].every(i => i.complete && i.naturalWidth > 0)")


def trance_test(browser, d: dict[str, Path], out: Path) -> None:
    db = d["work"] / "trance-test.sqlite"  # a new study each time: the name Ada is free
    for old in d["work"].glob("trance-test.sqlite*"):
        old.unlink()
    with serving("--data", str(d["event"]), "--practice", "0", "--db", f"sqlite:///{db}") as url:
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(url + "/")
        page.fill("#name", "Ada")
        page.select_option("#test", "event:test")
        page.click("#start")
        page.wait_for_url("**/welcome/event/test")
        page.click("#begin")
        page.wait_for_url("**/test/event/test")
        images_loaded(page)
        page.click("#add-step")
        rows = page.locator("#steps tr")
        for row, (obj, attr, value) in enumerate([("3", "color", "color.red"),
                                                  ("5", "position", "position.front.1")]):  # fmt: skip
            cells = rows.nth(row)
            cells.locator("select[aria-label=object]").select_option(obj)
            cells.locator("select[aria-label=attribute]").select_option(attr)
            cells.locator("select[aria-label=value]").select_option(value)
        page.evaluate("document.getElementById('timer').textContent = '42'")  # a still clock
        save(page, out / "web-trance-test.png")
        page.close()


def trance_viewer(browser, d: dict[str, Path], out: Path) -> None:
    with serving("--viewer", "--data", str(d["event"]), "--predictions", str(d["reversed"]),
                 str(d["random"])) as url:  # fmt: skip
        page = browser.new_page(viewport=VIEWPORT)
        # the first test sample of more than one step: reversed is loose correct, not correct
        samples = [json.loads(line) for line in (d["event"] / "test" / "samples.jsonl").open()]
        index = next((i for i, s in enumerate(samples) if len(s["steps"]) > 1), 0)
        page.goto(f"{url}/viewer/event/test/{index}")
        images_loaded(page)
        save(page, out / "web-trance-viewer.png", height=1500)  # down to the predictions
        page.close()


def clevrer_viewer(browser, d: dict[str, Path], out: Path) -> None:
    with serving("--benchmark", "clevrer", "--viewer", "--data", str(d["clevrer"])) as url:
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(url + "/video/0/1")
        # a frame from the middle of the video (when this chromium plays H.264)
        page.evaluate("""() => new Promise(done => {
            const v = document.getElementById('video');
            if (!v) return done();
            const seek = () => { v.pause(); v.currentTime = 2.4; v.addEventListener('seeked', done, {once: true}); };
            if (v.readyState >= 1) seek(); else v.addEventListener('loadedmetadata', seek, {once: true});
            v.addEventListener('error', done, {once: true}); setTimeout(done, 10000);
        })""")  # fmt: skip
        page.wait_for_timeout(1500)  # until the player's loading spinner has gone
        save(page, out / "web-clevrer-viewer.png", height=1300)  # down to the questions
        page.close()


def vtt_rating(browser, d: dict[str, Path], out: Path) -> None:
    db = d["work"] / "vtt-ratings.sqlite"  # a new study each time: the name Ada is free
    for old in d["work"].glob("vtt-ratings.sqlite*"):
        old.unlink()
    with serving("--benchmark", "vtt", "--data", str(d["vtt"]), "--predictions",
                 f"describer={d['describer']}", f"forgetful={d['forgetful']}",
                 "--db", f"sqlite:///{db}") as url:  # fmt: skip
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(url + "/")
        page.fill("#name", "Ada")
        page.click("#start")
        page.wait_for_url("**/welcome")
        page.click("#begin")
        page.wait_for_url("**/rate")
        images_loaded(page)
        page.check("#fluency input[value='5']")
        page.check("#relevance input[value='4']")
        save(page, out / "web-vtt-rating.png")
        page.close()


def save_element(page, selector: str, path: Path, width: int = 640, colors: int = 128) -> None:
    """The element `selector` as a `width` px wide palette PNG (small: ten of them go in docs)."""
    from PIL import Image

    raw = path.with_suffix(".raw.png")
    page.locator(selector).screenshot(path=raw)
    image = Image.open(raw).convert("RGB")
    image = image.resize((width, round(image.height * width / image.width)),
                         Image.Resampling.LANCZOS)  # fmt: skip
    # octree keeps the hues of small objects on a grey table (median cut turns them grey)
    image = image.quantize(colors=colors, method=Image.Quantize.FASTOCTREE,
                           dither=Image.Dither.NONE)  # fmt: skip
    image.save(path, optimize=True)
    raw.unlink()
    print(f"wrote {path} ({image.width}x{image.height}, {path.stat().st_size // 1024} KB)",
          flush=True)  # fmt: skip


def visualtrans_build(work: Path, given: Path | None) -> Path:
    """A copy of the questions of `given` (or of a new testbed build) in a fresh build folder."""
    import shutil

    source = given
    if source is None:
        run("tvr", "visualtrans", "testbed", "--out", str(work / "vt-testbed"),
            "--episodes-per-scene", "2", "--error-rate", "0.3")  # fmt: skip
        source = work / "vt-testbed" / "build"
    copy = work / "vt-verify-build"
    if copy.exists():
        shutil.rmtree(copy)
    shutil.copytree(source / "questions", copy / "questions")
    print(f"copied {source / 'questions'} to {copy / 'questions'}")
    return copy


#: the verdicts of the person who looked at the 10 items of the docs (docs/visualtrans.md,
#: "Verification"), by item id; any other item is answered with its generated answer
VT_VERDICTS = Path(__file__).with_name("web_screenshots_vt_verdicts.json")


def visualtrans_verify(browser, build: Path, out: Path, items: int = 10) -> None:
    from tvr.visualtrans.data.dataset import item_id

    listed = json.loads((build / "questions" / "VisualTrans.json").read_text())
    verdicts = {v["id"]: v for v in json.loads(VT_VERDICTS.read_text())}
    with serving("--benchmark", "visualtrans", "--verify", "--verifiers", "1", "--data",
                 str(build)) as url:  # fmt: skip
        page = browser.new_page(viewport={"width": 1000, "height": 900})
        page.goto(url + "/")
        page.fill("#name", "Ada")
        page.click("#start")
        page.wait_for_url("**/welcome")
        page.click("#begin")
        page.wait_for_url("**/verify")
        reviewed = False
        for n in range(1, items + 1):
            images_loaded(page)
            save_element(page, "#unit", out / f"web-vt-verify-{n}.png")
            item = listed[int(page.inner_text("#meta").rsplit("item ", 1)[1])]
            verdict = verdicts.get(item_id(item["question"], item["images"]), {})
            answer = verdict.get("answer", item["label"])
            if page.locator("#count").count():
                page.fill("#count", answer)
            elif page.locator("#answer input[type=radio]").count():
                page.check(f"#answer input[value='{answer}']")
            elif page.locator("#answer input[type=checkbox]").count():
                names = answer if isinstance(answer, list) else answer.split(", ")
                for name in names if names != ["none"] else []:
                    page.check(f"#answer input[value='{name}']")
            else:
                page.fill("#objects", ", ".join(answer) if isinstance(answer, list) else answer)
            page.click("#submit")
            page.wait_for_selector("#generated")
            for flag in verdict.get("flags", []):
                page.check(f"#flags input[value='{flag}']")
            page.fill("#fix", verdict.get("fix", ""))
            page.fill("#note", verdict.get("note", ""))
            if verdict.get("flags") and not reviewed:
                save_element(page, "#unit", out / "web-vt-verify-review.png")
                reviewed = True
            page.click("#review")
            page.wait_for_selector("#answer-form, #done")
        page.close()
    with serving("--benchmark", "visualtrans", "--verify", "--viewer", "--admin", "--data",
                 str(build)) as url:  # fmt: skip
        page = browser.new_page(viewport={"width": 1000, "height": 900})
        page.goto(url + "/admin")
        save_element(page, "main", out / "web-vt-verify-admin.png", width=720, colors=64)
        page.close()


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=Path("docs/img"), help="default docs/img")
    p.add_argument("--work", type=Path, help="the data folder (default: a temporary one)")
    p.add_argument(
        "--only",
        choices=("trance", "clevrer", "vtt", "visualtrans"),
        help="only this app's screenshots",
    )
    p.add_argument(
        "--visualtrans-build",
        type=Path,
        help="a build of `tvr visualtrans build` to verify (default: a testbed's)",
    )
    args = p.parse_args()
    if not Path(CHROMIUM).exists():
        raise SystemExit(f"{CHROMIUM} missing: apt-get install chromium")
    from playwright.sync_api import sync_playwright

    args.out.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        work = args.work or Path(stack.enter_context(tempfile.TemporaryDirectory()))
        work.mkdir(parents=True, exist_ok=True)
        shoots = {"trance": (trance_test, trance_viewer), "clevrer": (clevrer_viewer,),
                  "vtt": (vtt_rating,)}  # fmt: skip
        wanted = [args.only] if args.only else [*shoots, "visualtrans"]
        data = make_data(work) if set(wanted) & set(shoots) else {}
        build = visualtrans_build(work, args.visualtrans_build) if "visualtrans" in wanted else None
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
            for app in wanted:
                for shoot in shoots.get(app, ()):
                    shoot(browser, data, args.out)
            if build is not None:
                visualtrans_verify(browser, build, args.out)
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
