"""`tvr serve --benchmark visualtrans --verify --data BUILD`: the store in BUILD/verify/, the
settings the export reads, the admin server on its own, and one-line refusals (uvicorn stubbed
out)."""

from __future__ import annotations

import json

import pytest

from tests.web.browser import free_port
from tvr.visualtrans.web.verify_export import store_file


@pytest.fixture
def served(monkeypatch):
    import uvicorn

    got: dict = {}
    monkeypatch.setattr(uvicorn, "run", lambda app, **kw: got.update(app=app, **kw))
    return got


def serve(*args: str) -> int:
    from tvr.cli import main

    return main(["serve", "--benchmark", "visualtrans", "--port", str(free_port()), *args])


def test_the_verify_server_keeps_its_store_in_the_build(build, served, capsys):
    assert serve("--admin", "--viewer", "--verify", "--data", str(build)) == 2
    assert "no verification yet" in capsys.readouterr().err
    assert serve("--verify", "--verifiers", "3", "--data", str(build)) == 0
    out = capsys.readouterr().out
    assert "VisualTrans verification at http://127.0.0.1:" in out
    assert str(store_file(build).resolve()) in out and store_file(build).is_file()
    assert served["app"].state.verification.target == 3
    assert json.loads((build / "verify" / "settings.json").read_text()) == {"verifiers": 3}
    assert serve("--verify", "--viewer", "--admin", "--data", str(build)) == 0
    assert "VisualTrans verification (admin)" in capsys.readouterr().out
    assert served["app"].state.verification.target == 3  # the saved one, as the export reads
    # the admin server does not change what the verify server saved
    assert json.loads((build / "verify" / "settings.json").read_text()) == {"verifiers": 3}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--data", "{build}"], "--verify"),
        (["--verify", "--viewer", "--data", "{build}"], "no viewer"),
        (["--verify", "--data", "{tmp}"], "no questions/VisualTrans.json"),
    ],
)
def test_refusals_are_one_line(build, tmp_path, served, capsys, args, message):
    args = [a.format(build=build, tmp=tmp_path) for a in args]
    assert serve(*args) == 2
    assert not (tmp_path / "verify").exists()
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and not served


def test_verify_is_visualtrans_only(build, capsys):
    from tvr.cli import main

    assert main(["serve", "--verify", "--data", str(build), "--port", str(free_port())]) == 2
    assert "--verify is VisualTrans's" in capsys.readouterr().err
