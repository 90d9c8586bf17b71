"""The LLM judge: score parsing, Spearman on hand-computed cases (the paper's Table 5 among
them), and `tvr vtt judge` end to end against the scripted chat server, with human ratings."""

from __future__ import annotations

import json
import math

import pytest

from tests.vtt.release import make_release
from tests.vtt.samples import sample_id
from tvr.vtt.agreement import OWN, SCIPY, average_ranks, spearman, spearman_rho
from tvr.vtt.judge import TABLE5, joined, parse_score


@pytest.mark.parametrize(
    ("reply", "score"),
    [("4", 4), (" 5\n", 5), ("Score: 3", 3), ("4/5", 4), ("4.0", 4), ("<think>maybe 2</think>1", 1),
     ("10", None), ("3.5", None), ("0", None), ("", None), (None, None), ("six", None)],
)  # fmt: skip
def test_parse_score(reply, score):
    assert parse_score(reply) == score


def test_joined_as_the_released_judge():
    assert joined(["Put Steak", " ", "flip steak "]) == "put steak, flip steak"


def test_average_ranks():
    assert average_ranks([3, 1, 3]) == [2.5, 1.0, 2.5]
    assert average_ranks([2, 2, 2, 1]) == [3.0, 3.0, 3.0, 1.0]


def test_spearman_reproduces_table5():
    """Table 5: people against Gemini-1.5 over 8 models. Rank differences 0, 2, 1, 0, 2, 1, 0,
    0 (as d = -2, +1, -1, +2 on LLaVA, DenseCap, LLaVA-LoRA, GLACNet): sum d^2 = 10, so
    rho = 1 - 6 * 10 / (8 * 63) = 37 / 42 = 0.881 (the paper's 88.1, p = 0.004)."""
    people, judge = zip(*TABLE5.values(), strict=True)
    assert spearman_rho(people, judge) == pytest.approx(37 / 42, abs=1e-12)
    result = spearman(people, judge)
    assert result.n == 8 and result.rho == pytest.approx(37 / 42, abs=1e-12)
    if result.method == SCIPY:
        assert round(result.p_value, 3) == 0.004


def test_spearman_with_ties_by_hand():
    """x ranks 1, 2.5, 2.5, 4 and y ranks 1, 3, 2, 4: deviations (-1.5, 0, 0, 1.5) and
    (-1.5, .5, -.5, 1.5), so rho = 4.5 / sqrt(4.5 * 5) = 3 / sqrt(10)."""
    x, y = [1, 2, 2, 3], [1, 3, 2, 4]
    own = spearman(x, y, use_scipy=False)
    assert own.rho == pytest.approx(3 / math.sqrt(10), abs=1e-12)
    assert own.p_value is None and own.method == OWN
    assert spearman(x, y).rho == pytest.approx(own.rho, abs=1e-12)
    assert spearman([1, 2, 3], [3, 2, 1]).rho == pytest.approx(-1.0)
    assert spearman([1, 1, 1], [1, 2, 3]).rho is None
    assert spearman([4], [2]).rho is None


# --- tvr vtt judge end to end ------------------------------------------------------------------
S0, S1, S2 = sample_id(0), sample_id(1), sample_id(2)
GOOD = {S0: ["put steak on grill", "flip steak", "remove steak"],
        S1: ["add whipped cream", "pour coffee"], S2: ["cut mango"]}  # fmt: skip
BAD = {S0: ["remove steak", "put steak on grill", "flip steak"],
       S1: ["pour coffee", "add whipped cream"]}  # fmt: skip
#: the judge's replies, told apart by the joined sequence in the prompt
REPLIES = {
    "sequence: put steak on grill, flip steak, remove steak": "5",
    "sequence: add whipped cream, pour coffee": "Score: 4",
    "sequence: cut mango": "4/5",
    "sequence: remove steak, put steak on grill, flip steak": "2",
    "sequence: pour coffee, add whipped cream": "It is hard to say.",
}
HUMAN = [("good", S0, 5), ("good", S0, 5), ("good", S1, 4), ("good", S1, 3), ("good", S2, 4),
         ("good", S2, 5), ("bad", S0, 1), ("bad", S0, 2), ("bad", S1, 3), ("bad", S1, None),
         ("other", S0, 3)]  # fmt: skip


def write_predictions(path, predictions):
    path.write_text("".join(json.dumps({"id": k, "transformations": v}) + "\n"
                            for k, v in predictions.items()))  # fmt: skip
    return path


def test_judge_end_to_end_with_human_ratings(tmp_path, capsys):
    pytest.importorskip("httpx")
    pytest.importorskip("PIL")
    from tests.vlm.chat_server import ChatServer
    from tvr.cli import main

    root = make_release(tmp_path / "rel")
    good = write_predictions(tmp_path / "good.jsonl", GOOD)
    bad = write_predictions(tmp_path / "bad.jsonl", BAD)
    human = tmp_path / "human.jsonl"
    human.write_text("".join(json.dumps({"sample_id": s, "model": m, "rater": k,
                                         "logical_soundness": v}) + "\n"
                             for k, (m, s, v) in enumerate(HUMAN)))  # fmt: skip
    out = tmp_path / "judge"
    args = ["vtt", "judge", "--data", str(root), "--predictions", f"good={good}",
            "--predictions", f"bad={bad}", "--out", str(out), "--ratings", str(human),
            "--model", "judge-llm", "--quiet", "--retries", "0", "--timeout", "5"]  # fmt: skip
    with ChatServer(REPLIES) as server:
        assert main([*args, "--base-url", server.base_url]) == 0
        assert len(server.requests) == 5  # bad has no prediction for S2: not asked
        assert main([*args, "--base-url", server.base_url]) == 0  # resumed: nothing to ask
        assert len(server.requests) == 5
    body = json.loads(server.requests[0].body)
    assert body["temperature"] == 0 and body["messages"][0]["content"][0]["type"] == "text"
    assert len(body["messages"][0]["content"]) == 1  # text only, no images

    summary = json.loads((out / "summary.json").read_text())
    good_m, bad_m = summary["models"]["good"], summary["models"]["bad"]
    assert good_m["mean"] == pytest.approx(13 / 3) and good_m["rated"] == 3
    assert (bad_m["mean"], bad_m["rated"], bad_m["unreadable"], bad_m["no_descriptions"]) == (
        2, 1, 1, 1)  # fmt: skip
    ratings = {(r["model"], r["id"]): r for r in map(json.loads, (out / "ratings.jsonl").open())}
    assert ratings[("bad", S1)]["status"] == "unreadable" and ratings[("bad", S1)]["score"] is None
    assert ratings[("good", S2)]["score"] == 4
    # pairs: people 1.5, 5, 3.5, 4.5 against the judge 2, 5, 4, 4 -> rho = 3 / sqrt(10)
    agree = summary["agreement"]
    assert agree["pairs"]["n"] == 4
    assert agree["pairs"]["rho"] == pytest.approx(3 / math.sqrt(10), abs=1e-9)
    assert agree["unmatched_human_ratings"] == 2  # ("bad", S1) was not scored; "other" not judged
    assert agree["model_means"]["good"] == {"human": pytest.approx(26 / 6),
                                            "judge": pytest.approx(13 / 3), "samples": 3,
                                            "human_ratings": 6}  # fmt: skip
    assert agree["models"]["n"] == 2 and agree["models"]["p_value"] is None
    printed = capsys.readouterr().out
    assert "5 to judge: 5 judged before, 0 asked" in printed and "| good | 4.33 |" in printed

    other = write_predictions(tmp_path / "other.jsonl", GOOD)
    args[args.index(f"bad={bad}")] = f"bad={other}"
    assert main([*args, "--base-url", "http://127.0.0.1:9/v1"]) == 2  # other inputs: refused
    assert "holds a judge run of other inputs (predictions" in capsys.readouterr().err


def test_judge_input_errors_are_one_line(tmp_path, capsys):
    from tvr.cli import main

    root = make_release(tmp_path / "rel")
    base = ["vtt", "judge", "--data", str(root), "--out", str(tmp_path / "o"), "--base-url",
            "http://127.0.0.1:9/v1", "--model", "m"]  # fmt: skip
    assert main([*base, "--predictions", "a=missing.jsonl"]) == 2
    assert "--predictions a=missing.jsonl: no such file" in capsys.readouterr().err
    preds = write_predictions(tmp_path / "p.jsonl", GOOD)
    assert main([*base, "--predictions", f"a={preds}", "--predictions", f"a={preds}"]) == 2
    assert "the name 'a' is given twice" in capsys.readouterr().err
    bad_human = tmp_path / "h.jsonl"
    bad_human.write_text('{"sample_id": "x", "model": "a", "logical_soundness": 7}\n')
    assert main([*base, "--predictions", f"a={preds}", "--ratings", str(bad_human)]) == 2
    err = capsys.readouterr().err
    assert "h.jsonl, line 1, field 'logical_soundness'" in err and "7" in err
