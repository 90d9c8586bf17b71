"""End to end through the CLI: `tvr vlm run` then the scorer, on VisualTrans and on TRANCE."""

import importlib.util
import json

import pytest

from tests.visualtrans.make_data import CORRECT_REPLIES, make_visualtrans
from tests.vlm.chat_server import ChatServer
from tests.vlm.make_trance import make_trance, sample_key, steps_reply
from tvr.cli import main

KEY = "sk-test-E2E-SECRET"

#: Q01 answers in words (normalized only), Q09 starts with "Because" (label A: the official
#: rule reads B), everything else is right under both rules
E2E_REPLIES = {
    **CORRECT_REPLIES,
    "[Q01]": "<think>Two items.</think><answer>Two.</answer>",
    "[Q09]": "<answer>Because nothing moved, A</answer>",
}


def vlm_run(server, *args):
    return main(["vlm", "run", "--base-url", server.base_url, "--model", "e2e-model",
                 "--api-key", KEY, "--quiet", "--retries", "3", "--backoff", "0.01",
                 "--timeout", "5", *map(str, args)])  # fmt: skip


def test_visualtrans_run_then_score(tmp_path, capsys):
    data, images, _ = make_visualtrans(tmp_path)
    results = tmp_path / "results.jsonl"
    script = {"[Q03]": ["429"], "[Q06]": ["500", "503"]}
    with ChatServer(E2E_REPLIES, script=script) as server:
        assert vlm_run(server, "--task", "visualtrans", "--data", data, "--images", images,
                       "--out", results, "--concurrency", "3", "--temperature", "0",
                       "--seed", "1") == 0  # fmt: skip
    assert len(server.requests) == 10 + 1 + 2
    for req in server.requests:
        assert req.headers["Authorization"] == f"Bearer {KEY}"
        assert KEY not in req.path and KEY.encode() not in req.body
        assert not any(KEY in v for k, v in req.headers.items() if k != "Authorization")
    assert KEY not in results.read_text() + (tmp_path / "results.runs.jsonl").read_text()
    scores = {}
    for mode in ("official", "normalized"):
        out = tmp_path / mode
        assert main(["visualtrans", "evaluate", "--data", str(data), "--predictions",
                     str(results), "--mode", mode, "--out", str(out)]) == 0  # fmt: skip
        scores[mode] = json.loads((out / "summary.json").read_text())
        assert {p.name for p in out.iterdir() if not p.name.startswith(".")} == {
            "summary.json", "summary.md", "accuracy.png", "detail.jsonl",
        }  # fmt: skip
    official, normalized = scores["official"], scores["normalized"]
    assert official["overall"]["items"] == normalized["overall"]["items"] == 11
    assert official["overall"]["correct"] == 9 and normalized["overall"]["correct"] == 11
    assert official["subtasks"]["count"]["correct"] == 1
    assert official["subtasks"]["spatial_global"]["correct"] == 0
    detail = [
        json.loads(x) for x in (tmp_path / "official" / "detail.jsonl").read_text().splitlines()
    ]
    q09 = next(d for d in detail if d["task_type"] == "spatial_global")
    assert q09["prediction"] == "B" and q09["extracted"] == "Because nothing moved, A"
    out = capsys.readouterr().out
    assert "Overall" in out and KEY not in out


def test_trance_run_then_export(tmp_path, capsys):
    data, images, samples = make_trance(tmp_path, n=3)
    table = {
        sample_key(0): steps_reply([(1, "color.yellow")]),
        sample_key(1): steps_reply([(1, "color.yellow"), (2, "color.cyan")]),
        sample_key(2): "I believe object one became yellow and object two cyan.",
    }
    results = tmp_path / "results.jsonl"
    with ChatServer(table, script={sample_key(1): ["500"]}) as server:
        assert vlm_run(server, "--task", "trance", "--data", data, "--images", images,
                       "--out", results, "--setting", "event") == 0  # fmt: skip
    assert all(r.image_mimes == ["image/png", "image/png"] for r in server.requests)
    preds = tmp_path / "predictions.jsonl"
    assert main(["vlm", "export", "--task", "trance", "--data", str(data), "--images",
                 str(images), "--results", str(results), "--out", str(preds)]) == 0  # fmt: skip
    lines = [json.loads(x) for x in preds.read_text().splitlines()]
    assert lines == [
        {"id": samples[0].id, "steps": [{"obj": 1, "value": "color.yellow"}]},
        {"id": samples[1].id, "steps": [{"obj": 1, "value": "color.yellow"},
                                         {"obj": 2, "value": "color.cyan"}]},
        {"id": samples[2].id, "steps": []},
    ]  # fmt: skip
    unparsed = [
        json.loads(x) for x in (tmp_path / "predictions.unparsed.jsonl").read_text().splitlines()
    ]
    assert [u["id"] for u in unparsed] == [samples[2].id]
    assert "1 unreadable" in capsys.readouterr().out
    if importlib.util.find_spec("tvr.trance.eval.metrics") is None:
        pytest.skip("`tvr evaluate` (the foundation's evaluator) is not on this branch yet")
    out = tmp_path / "eval"
    assert main(["evaluate", "--data", str(data), "--predictions", str(preds),
                 "--setting", "event", "--out", str(out)]) == 0  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    assert summary["samples"] == 3
