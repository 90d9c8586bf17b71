"""The CLEVRER viewer of `tvr serve --benchmark clevrer --viewer`."""

from __future__ import annotations

import pytest

pytest.importorskip("fastapi")

from fastapi.testclient import TestClient

from tvr.core.errors import UserError
from tvr.web.config import ServeConfig
from tvr.web.factory import create_app


def _client(root, tmp_path) -> TestClient:
    config = ServeConfig(data=(root,), viewer=True, db_url=f"sqlite:///{tmp_path / 'v.sqlite'}")
    return TestClient(create_app(config, "clevrer"), base_url="http://localhost")


def test_viewer_pages(rendered_set, tmp_path):
    client = _client(rendered_set, tmp_path)
    index = client.get("/")
    assert index.status_code == 200 and "/video/0/2" in index.text
    page = client.get("/video/0/1")
    assert page.status_code == 200
    html = page.text
    assert 'src="/media/0/1.mp4"' in html and 'id="causal-graph"' in html
    assert "collision" in html and "caused by" in html
    assert "filter_" in html or "query_" in html  # programs are shown
    video = client.get("/media/0/1.mp4")
    assert video.status_code == 200 and video.headers["content-type"] == "video/mp4"
    assert video.content[4:8] == b"ftyp"
    assert client.get("/video/0/99").status_code == 404
    assert client.get("/media/5/1.mp4").status_code == 404
    assert client.get("/?page=9").status_code == 404


def test_clevrer_has_no_human_test(rendered_set, tmp_path):
    config = ServeConfig(data=(rendered_set,), db_url=f"sqlite:///{tmp_path / 'v.sqlite'}")
    with pytest.raises(UserError, match="--viewer"):
        create_app(config, "clevrer")


def test_the_viewer_writes_nothing_into_the_data_folder(rendered_set, tmp_path):
    """A read-only viewer creates no database beside the data (issue 28: it wrote
    human-tests.sqlite, -wal and -shm into the folder it only reads)."""
    before = sorted(p.name for p in rendered_set.iterdir())
    client = TestClient(create_app(ServeConfig(data=(rendered_set,), viewer=True), "clevrer"),
                        base_url="http://localhost")  # fmt: skip
    assert client.get("/").status_code == 200
    assert client.app.state.config.database_url == "sqlite://"
    assert sorted(p.name for p in rendered_set.iterdir()) == before


def test_no_input_gives_a_5xx_and_rebinding_is_refused(rendered_set, tmp_path):
    from tests.web.fuzz import boundary_statuses, rebinding_refused, run_fuzz

    client = _client(rendered_set, tmp_path)
    assert rebinding_refused(client)
    statuses, failures = boundary_statuses(client, {"k": "0", "index": "1"})
    assert not failures, failures[:10]
    pytest.importorskip("schemathesis")
    config = ServeConfig(data=(rendered_set,), viewer=True, allowed_hosts=("testserver",),
                         db_url=f"sqlite:///{tmp_path / 'v.sqlite'}")  # fmt: skip
    statuses, failures = run_fuzz(create_app(config, "clevrer"), {}, examples=15)
    print(f"\nschemathesis (clevrer viewer): {sum(statuses.values())} cases, "
          f"{sum(n for s, n in statuses.items() if s >= 500)} with a 5xx; "
          f"statuses {dict(sorted(statuses.items()))}")  # fmt: skip
    assert not failures, failures[:10]
    assert sum(statuses.values()) >= 30


def test_every_viewer_page_has_the_shared_layout(rendered_set, tmp_path):
    from pathlib import Path

    import tvr.clevrer.web
    from tests.web.layout import (
        assert_error_page,
        assert_every_page_has_the_layout,
        assert_templates_extend_the_layout,
    )

    client = _client(rendered_set, tmp_path)
    pages = {"/": ("/",), "/video/{k}/{index}": ("/video/0/0", "/video/0/1", "/video/0/2")}
    assert assert_every_page_has_the_layout(client, pages) == 4
    assert 'id="causal-graph"' in client.get("/video/0/1").text  # CLEVRER's own page inside
    assert_error_page(client, "/video/0/99", 404, f"{rendered_set}: no video 99")
    templates = Path(tvr.clevrer.web.__file__).parent / "templates"
    assert_templates_extend_the_layout(templates)
    css = (templates.parent / "static" / "style.css").read_text()
    assert "header.top" not in css and ":root" not in css  # the common look is tvr.css's only


def test_no_file_outside_the_set_is_sent(rendered_set, tmp_path):
    """The path test of the viewer's file route and static mounts (issue 38): only MP4 videos
    that lie in the set's folder once resolved are sent; the set's own hard links (shards and
    videos/ hold one file under two names) still are."""
    from tests.web.paths import link_cases, traversal_cases

    client = _client(rendered_set, tmp_path)
    target = client.app.state.clevrer_sets[0].videos[1]
    assert target.stat().st_nlink == 2  # tvr's layout: the shard's file and its videos/ name
    statuses, failures = link_cases(client.app, "/media/0/1.mp4", target, tmp_path / "outside")
    more, bad = traversal_cases(client.app, ["/media/{k}/{index}.mp4"], {"k": "0", "index": "1"})
    statuses += more
    failures += bad
    print(f"\npath test (clevrer viewer): {sum(statuses.values())} cases, {len(failures)} "
          f"failures; statuses {dict(sorted(statuses.items()))}")  # fmt: skip
    assert not failures, failures[:10]
    assert set(statuses) <= {400, 404, 405, 422}
