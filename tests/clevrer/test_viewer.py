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
    return TestClient(create_app(config, "clevrer"))


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
