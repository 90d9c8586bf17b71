"""What two new users met on fresh clones (issue 29) and is now said plainly."""

from __future__ import annotations

import socket

from tvr.cli import main


def test_generate_into_a_sample_folder_says_what_the_folder_is(tmp_path, capsys):
    assert main(["sample", "--out", str(tmp_path / "s"), "--num", "4", "--quiet"]) == 0
    capsys.readouterr()
    assert main(["generate", "--setting", "event", "--split-sizes", "train=2,val=2,test=2",
                 "--out", str(tmp_path / "s"), "--quiet"]) == 2  # fmt: skip
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "holds the symbolic samples of `tvr sample`" in err[0], err


def _dead_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again: nothing listens there


def test_a_vlm_run_against_a_dead_endpoint_says_so_at_the_first_failure(tmp_path, capsys):
    data = tmp_path / "gen"
    assert main(["generate", "--setting", "event", "--split-sizes", "train=2,val=2,test=2",
                 "--out", str(data), "--preset", "preview", "--image-size", "96x72",
                 "--small-size", "48x36", "--quiet"]) == 0  # fmt: skip
    capsys.readouterr()
    main(["vlm", "run", "--task", "trance", "--data", str(data), "--out", str(tmp_path / "r.jsonl"),
          "--base-url", f"http://127.0.0.1:{_dead_port()}/v1", "--model", "m", "--retries", "0",
          "--timeout", "5"])  # fmt: skip
    err = capsys.readouterr().err
    assert "tvr vlm run: the first failed request:" in err and "connection error" in err
    assert err.count("the first failed request") == 1
