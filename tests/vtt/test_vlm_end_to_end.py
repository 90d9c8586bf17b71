"""End to end against the local scripted chat server: `tvr vlm run --task vtt` (strip, sep,
multiturn) -> `tvr vlm export` -> `tvr vtt evaluate`."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("httpx")
pytest.importorskip("PIL")

from tests.vlm.chat_server import ChatServer
from tests.vtt.release import default_records, make_release
from tests.vtt.samples import needs_java
from tvr.cli import main

LABELS = {len(r["annotation"]): [a["label"] for a in r["annotation"]]
          for r in default_records() if r["split"] == "test"}  # fmt: skip
#: the strip replies, told apart by "There are N+1 pictures": right JSON in a fence, one numbered
#: line of two, and no description at all
STRIP_REPLIES = {
    "There are 4 pictures": '```json\n{"topic": "Grill Steak", "transformations": '
    + json.dumps(LABELS[3])
    + "}\n```",
    "There are 3 pictures": "1. add whipped cream\n",
    "There are 2 pictures": "I am not sure what happens here.",
}


def vlm(server, *args):
    return main(["vlm", *map(str, args), "--base-url", server.base_url, "--model", "scripted",
                 "--quiet", "--retries", "1", "--backoff", "0.01", "--timeout", "5"])  # fmt: skip


def lines(path):
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


@needs_java
def test_strip_run_export_evaluate(tmp_path, capsys):
    root = make_release(tmp_path / "rel")
    results, preds = tmp_path / "strip.jsonl", tmp_path / "preds.jsonl"
    data = ["--task", "vtt", "--data", root, "--images", root / "states"]
    with ChatServer(STRIP_REPLIES) as server:
        assert vlm(server, "run", *data, "--out", results) == 0
        assert len(server.requests) == 3
        assert all(r.image_mimes == ["image/jpeg"] and r.images_match_mime for r in server.requests)
        assert vlm(server, "run", *data, "--out", results) == 0  # resumed: nothing left to ask
        assert len(server.requests) == 3
    assert "3 already answered, 0 asked" in capsys.readouterr().out
    assert (
        main(["vlm", "export", *map(str, data), "--results", str(results), "--out", str(preds)])
        == 0
    )
    out = capsys.readouterr().out
    assert "3 predictions written" in out and "2 read (json 1, numbered 1), 1 unreadable" in out
    assert "2 of 6 descriptions missing" in out
    by_id = {p["id"]: p for p in lines(preds)}
    steak = next(p for p in by_id.values() if p["form"] == "json")
    assert steak["transformations"] == LABELS[3] and steak["topic"] == "Grill Steak"
    (unread,) = lines(preds.with_name("preds.unparsed.jsonl"))
    assert by_id[unread["id"]]["transformations"] == []
    assert "I am not sure" in unread["reply_excerpt"]

    evaluation = tmp_path / "eval"
    assert main(["vtt", "evaluate", "--data", str(root / "meta" / "vtt.jsonl"),
                 "--predictions", str(preds), "--out", str(evaluation), "--no-bertscore"]) == 0  # fmt: skip
    summary = json.loads((evaluation / "summary.json").read_text())
    assert summary["samples"] == 3 and summary["descriptions"] == 6
    assert summary["missing"] == {"samples": 0, "descriptions": 2}
    detail = lines(evaluation / "detail.jsonl")
    right = [d for d in detail if d["id"] == steak["id"]]
    assert [d["prediction"] for d in right] == LABELS[3]
    assert all(d["METEOR"] == pytest.approx(100.0) for d in right)
    assert all(d["BLEU_4"] == 0 and d["CIDEr"] == 0 for d in detail if d["missing"])


def _conversation_reply(messages):
    """The multiturn script: the event first, then turn k's reference description of the sample
    whose first message showed N + 1 pictures."""
    n = sum(p["type"] == "image_url" for p in messages[0]["content"]) - 1
    text = "".join(p.get("text", "") for p in messages[-1]["content"] if p["type"] == "text")
    if "Describe the event" in text:
        return f"An event in {n + 1} pictures."
    k = int(re.search(r"No\.(\d+) transformation", text).group(1))
    return f"No.{k} transformation: {LABELS[n][k - 1]}."


def test_multiturn_conversation_and_sep(tmp_path, capsys):
    root = make_release(tmp_path / "rel")
    data = ["--task", "vtt", "--data", root, "--images", root / "states"]
    results, preds = tmp_path / "multi.jsonl", tmp_path / "multi-preds.jsonl"
    with ChatServer({}, responder=_conversation_reply) as server:
        assert vlm(server, "run", *data, "--variant", "multiturn", "--out", results,
                   "--concurrency", "1") == 0  # fmt: skip
    # N = 3, 2, 1: N + 1 requests each, every one carrying the conversation so far
    assert [r.messages for r in server.requests] == [1, 3, 5, 7, 1, 3, 5, 1, 3]
    assert [len(r.image_mimes) for r in server.requests] == [4, 2, 2, 2, 3, 2, 2, 2, 2]
    records = {r["meta"]["n"]: r for r in lines(results)}
    assert records[3]["replies"][0] == "An event in 4 pictures."
    assert records[3]["usage"]["completion_tokens"] == 4 * 7  # summed over the turns
    assert main(["vlm", "export", *map(str, data), "--variant", "multiturn", "--results",
                 str(results), "--out", str(preds)]) == 0  # fmt: skip
    assert "3 read (turns 3)" in capsys.readouterr().out
    for p in lines(preds):
        assert p["form"] == "turns"
        assert p["transformations"] == LABELS[len(p["transformations"])]

    with ChatServer({"There are": '{"transformations": ["x"]}'}) as server:
        assert vlm(server, "run", *data, "--variant", "sep", "--out", tmp_path / "sep.jsonl") == 0
    assert sorted(len(r.image_mimes) for r in server.requests) == [2, 3, 4]
    assert all(set(r.image_mimes) == {"image/jpeg"} for r in server.requests)


def test_a_failed_turn_fails_the_item_and_is_asked_again(tmp_path, capsys):
    root = make_release(tmp_path / "rel")
    data = ["--task", "vtt", "--data", root, "--images", root / "states", "--variant",
            "multiturn", "--out", tmp_path / "r.jsonl", "--concurrency", "1"]  # fmt: skip
    # the second turn answers 400 (not retried) the first time it is asked
    with ChatServer({"No.1 transformation": "x"}, script={"No.1 transformation": ["400"]},
                    responder=_conversation_reply) as server:  # fmt: skip
        assert vlm(server, "run", *data) == 1
        assert vlm(server, "run", *data) == 0
    out = capsys.readouterr().out
    assert "2 answered, 1 failed" in out and "1 asked (1 had failed before), 1 answered" in out
    done = {r["id"]: r for r in lines(tmp_path / "r.jsonl") if r["error"] is None}
    assert len(done) == 3 and all(len(r["replies"]) == r["meta"]["n"] + 1 for r in done.values())
