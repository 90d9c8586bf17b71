"""The runner against a real local chat server: concurrency bound, failures, resume, token log."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.visualtrans.make_data import CORRECT_REPLIES, make_visualtrans
from tests.vlm.chat_server import ChatServer
from tvr.cli import main
from tvr.core.errors import UserError
from tvr.visualtrans.vlm_task import VisualTransTask
from tvr.vlm.client import Endpoint, RetryPolicy
from tvr.vlm.results import read_results
from tvr.vlm.runner import run, runs_log_path
from tvr.vlm.templates import shipped_template

KEY = "sk-test-RUNNER-SECRET-7"
FAST = RetryPolicy(timeout_s=2.0, retries=2, backoff_s=0.01, backoff_max_s=0.05)
SRC = Path(__file__).resolve().parents[2] / "src"


@pytest.fixture
def vt(tmp_path):
    data, images, _ = make_visualtrans(tmp_path)
    task = VisualTransTask(data, images)
    ids = {it.fields["question"][:5]: it.id for it in task.items()}
    return data, images, task, ids


def go(task, server, out, **kw):
    kw.setdefault("policy", FAST)
    kw.setdefault("progress", False)
    endpoint = Endpoint(server.base_url, kw.pop("model", "test-model"), KEY)
    return run(task, shipped_template("visualtrans.txt", "tvr.visualtrans"), endpoint, out, **kw)


def test_concurrency_is_bounded_and_reached(vt, tmp_path):
    _, _, task, _ = vt
    with ChatServer(CORRECT_REPLIES, hold_for=3) as server:
        summary = go(task, server, tmp_path / "r.jsonl", concurrency=3)
    assert server.max_in_flight == 3
    assert summary.succeeded == len(server.requests) == 10  # 11 items, one duplicated
    with ChatServer(CORRECT_REPLIES) as server:
        go(task, server, tmp_path / "r1.jsonl", concurrency=1)
    assert server.max_in_flight == 1


def test_results_lines_images_and_token_log(vt, tmp_path):
    _, _, task, ids = vt
    out = tmp_path / "r.jsonl"
    with ChatServer(CORRECT_REPLIES) as server:
        summary = go(task, server, out, concurrency=2)
    records = read_results(out).records
    assert set(records) == set(ids.values())
    rec = records[ids["[Q05]"]]
    assert rec["reply"] == CORRECT_REPLIES["[Q05]"] and rec["error"] is None
    assert rec["attempts"] == 1 and rec["task"] == "visualtrans" and rec["model"] == "test-model"
    assert rec["usage"] == {"prompt_tokens": 160, "completion_tokens": 7, "total_tokens": 167}
    assert rec["meta"]["task_type"] == "procedural_interm"
    by_key = {r.key: r for r in server.requests}
    assert by_key["[Q05]"].image_mimes == ["image/jpeg"] * 6
    assert by_key["[Q01]"].image_mimes == ["image/jpeg", "image/png"]  # a PNG named .jpg
    assert all(r.images_match_mime for r in server.requests)
    (log,) = [json.loads(x) for x in runs_log_path(out).read_text().splitlines()]
    total = sum(r["usage"]["total_tokens"] for r in records.values())
    assert log["tokens"]["total_tokens"] == total == summary.tokens["total_tokens"]
    assert log["succeeded"] == 10 and log["prompt"] == "tvr/visualtrans/prompts/visualtrans.txt"
    assert log["endpoint"] == server.base_url + "/chat/completions"
    for path in (out, runs_log_path(out)):
        assert KEY not in path.read_text()


def test_failures_are_recorded_counted_and_asked_again(vt, tmp_path):
    _, _, task, ids = vt
    out = tmp_path / "r.jsonl"
    script = {"[Q03]": ["500", "500", "500"], "[Q07]": ["429", "ok"], "[Q08]": ["sleep"]}
    policy = RetryPolicy(timeout_s=0.4, retries=2, backoff_s=0.01, backoff_max_s=0.05)
    with ChatServer(CORRECT_REPLIES, script=script, sleep_s=1.0) as server:
        summary = go(task, server, out, policy=policy)
    assert (summary.succeeded, summary.failed) == (9, 1)
    records = read_results(out).records
    failed = records[ids["[Q03]"]]
    assert failed["reply"] is None and failed["attempts"] == 3 and failed["http_status"] == 500
    assert "HTTP 500" in failed["error"]
    assert records[ids["[Q07]"]]["attempts"] == 2 and records[ids["[Q08]"]]["attempts"] == 2
    # the next run asks only the failed item, and its success supersedes the failure
    with ChatServer(CORRECT_REPLIES) as server:
        again = go(task, server, out)
    assert [r.key for r in server.requests] == ["[Q03]"]
    assert (again.already_done, again.retried_failures, again.succeeded) == (9, 1, 1)
    assert read_results(out).records[ids["[Q03]"]]["reply"] == CORRECT_REPLIES["[Q03]"]


def test_resume_after_a_killed_run(vt, tmp_path):
    data, images, _task, ids = vt
    out = tmp_path / "r.jsonl"
    env = {**os.environ, "PYTHONPATH": str(SRC), "TVR_VLM_API_KEY": KEY}
    with ChatServer(CORRECT_REPLIES, slow_s=0.1) as server:
        cmd = [sys.executable, "-m", "tvr", "vlm", "run", "--task", "visualtrans",
               "--data", str(data), "--images", str(images), "--out", str(out),
               "--base-url", server.base_url, "--model", "test-model", "--concurrency", "1",
               "--quiet"]  # fmt: skip
        proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and proc.poll() is None:
            if out.exists() and len(read_results(out).done_ids()) >= 3:
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=10)
        first_run = len(server.requests)
    assert KEY.encode() not in stdout + stderr
    done_before = read_results(out).done_ids()
    assert 3 <= len(done_before) < 10, "the run should have been killed part-way"
    with out.open("a") as f:
        f.write('{"id": "torn-li')  # a line cut by the kill
    with ChatServer(CORRECT_REPLIES) as server:
        assert main(["vlm", "run", "--task", "visualtrans", "--data", str(data),
                     "--images", str(images), "--out", str(out), "--base-url", server.base_url,
                     "--model", "test-model", "--api-key", KEY, "--quiet"]) == 0  # fmt: skip
    asked_again = {ids[r.key] for r in server.requests}
    assert not asked_again & done_before
    assert asked_again | done_before == set(ids.values())
    results = read_results(out)
    assert results.done_ids() == set(ids.values()) and results.unreadable_lines
    lines = [json.loads(x) for x in out.read_text().splitlines() if x.startswith('{"id": "vt-')]
    successes = [x["id"] for x in lines if x["error"] is None]
    assert sorted(successes) == sorted(set(successes)), "an answered item was asked again"
    assert first_run >= 3


def test_another_model_cannot_append_to_the_same_results(vt, tmp_path, capsys):
    _, _, task, _ = vt
    out = tmp_path / "r.jsonl"
    with ChatServer(CORRECT_REPLIES) as server:
        go(task, server, out, limit=2)
        with pytest.raises(UserError, match="holds replies of model"):
            go(task, server, out, model="other-model")


def test_limit_and_missing_images(vt, tmp_path):
    _, images, task, _ = vt
    with ChatServer(CORRECT_REPLIES) as server:
        summary = go(task, server, tmp_path / "r.jsonl", limit=4)
        assert (summary.attempted, summary.not_attempted) == (4, 6)
        next(images.rglob("*_end.jpg")).unlink()
        with pytest.raises(UserError, match=r"1 image\(s\) not found"):
            go(task, server, tmp_path / "r2.jsonl")
    assert len(server.requests) == 4


def test_cli_run_reports_failures_with_exit_status_1(vt, tmp_path, capsys, monkeypatch):
    data, images, _, _ = vt
    monkeypatch.setenv("TVR_VLM_API_KEY", KEY)
    with ChatServer(CORRECT_REPLIES, script={"[Q02]": ["400"]}) as server:
        rc = main(["vlm", "run", "--task", "visualtrans", "--data", str(data), "--images",
                   str(images), "--out", str(tmp_path / "r.jsonl"), "--base-url", server.base_url,
                   "--model", "m", "--retries", "0", "--quiet"])  # fmt: skip
    captured = capsys.readouterr()
    assert rc == 1 and "9 answered, 1 failed" in captured.out and "HTTP 400" in captured.err
    assert KEY not in captured.out + captured.err
    assert all(r.headers["Authorization"] == f"Bearer {KEY}" for r in server.requests)
