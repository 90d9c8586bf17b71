"""Verification catches planted wrong answers: two verifiers, driven through the API, answer a
build whose labels are partly wrong; `verified_items` keeps the right items, applies the agreed
fixes, drops the rest and counts why. The rule on its own, and the store read without FastAPI."""

from __future__ import annotations

import json
import subprocess
import sys

from tests.visualtrans.web.build import PLANTED, make_build, truth
from tests.visualtrans.web.test_routes import answer_of, start
from tvr.visualtrans.data.dataset import load_dataset
from tvr.visualtrans.web.verify_export import (
    DROP_REASONS,
    Verdict,
    decide,
    verified_items,
)

AMBIGUOUS = 8  # both verifiers flag this (right) item as ambiguous
CARELESS = 9  # one verifier answers this one wrongly and flags nothing


def verify_all(client, name: str, careless: bool = False) -> int:
    """A verifier who answers the truth and flags what differs; the number of items done."""
    start(client, name)
    done = 0
    while not (nxt := client.get("/api/next").json())["finished"]:
        n = int(nxt["item"]["question"][2:4]) - 1
        answer = answer_of(nxt)
        if careless and n == CARELESS:
            answer = "C"  # the truth is B
        r = client.post("/api/answer", json={"serving": nxt["serving"], "answer": answer,
                                             "key": f"{name}-{n:08d}"})  # fmt: skip
        assert r.status_code == 200, r.text
        body: dict = {"serving": nxt["serving"], "flags": []}
        if not r.json()["agrees"] and not (careless and n == CARELESS):
            body = {**body, "flags": ["wrong_answer"], "fix": truth()[n]}  # shown wrong: fix it
        if n == AMBIGUOUS:
            body["flags"] = ["ambiguous"]
        assert client.post("/api/review", json=body).status_code == 200
        done += 1
    return done


def test_planted_wrong_answers_are_caught_and_fixed(make_client, build):
    items = json.loads((build / "questions" / "VisualTrans.json").read_text())
    assert verify_all(make_client(), "ann") == 10
    assert verify_all(make_client(), "bob", careless=True) == 10
    kept, dropped = verified_items(build, items)
    assert dropped == {**dict.fromkeys(DROP_REASONS, 0), "ambiguous": 1, "disagreement": 1}
    assert len(kept) == 8
    by_question = {it["question"][:5]: it["label"] for it in kept}
    for n, label in enumerate(truth()):
        marker = f"[Q{n + 1:02d}]"
        if n in (AMBIGUOUS, CARELESS):
            assert marker not in by_question
        else:  # the planted ones carry the verifiers' fix: every exported answer is true
            assert by_question[marker] == label, n
    assert sum(items[n]["label"] != truth()[n] for n in PLANTED) == len(PLANTED)
    # the export is in the release format: the reader takes it as it is
    out = build / "export.json"
    out.write_text(json.dumps(kept))
    assert len(load_dataset(out).items) == 8


def test_one_verifier_of_two_leaves_items_unverified(make_client, build):
    items = json.loads((build / "questions" / "VisualTrans.json").read_text())
    verify_all(make_client(), "ann")
    kept, dropped = verified_items(build, items)
    assert kept == [] and dropped["unverified"] == 10
    # with one verifier wanted (the server's --verifiers 1, saved in BUILD/verify/), they count
    make_client(verifiers=1)
    kept, dropped = verified_items(build, items)
    assert len(kept) == 9 and dropped["ambiguous"] == 1


def test_without_a_store_every_item_is_unverified(tmp_path):
    build, items = make_build(tmp_path / "b")
    kept, dropped = verified_items(build, items)
    assert kept == [] and dropped["unverified"] == len(items)


def test_a_verdict_on_an_answer_a_later_build_changed_does_not_count(make_client, build):
    items = json.loads((build / "questions" / "VisualTrans.json").read_text())
    verify_all(make_client(verifiers=1), "ann")
    items[1] = {**items[1], "label": "5"}  # rebuilt with another answer
    kept, dropped = verified_items(build, items)
    assert dropped["unverified"] == 1 and len(kept) == 8


def v(agrees=True, flags=(), fix=None, who=1) -> Verdict:
    return Verdict(who, "x", agrees, tuple(flags), fix)


def test_the_rule():
    assert decide("B", [v()], 2).reason == "unverified"
    assert decide("B", [v(), v()], 2).outcome == "verified"
    assert decide("B", [v(), v(), v(False)], 2).outcome == "verified"  # a majority is clean
    assert decide("B", [v(), v(False)], 2).reason == "disagreement"  # a tie is no majority
    fixed = decide("a, b", [v(False, ["wrong_answer"], "B, A"), v(False, ["wrong_answer"], "b,a")],
                   2)  # fmt: skip
    assert fixed.reason == "wrong_answer"  # the fix equals the label: nothing to fix, dropped
    fixed = decide("B", [v(False, ["wrong_answer"], "C"), v(False, ["wrong_answer"], "c")], 2)
    assert (fixed.outcome, fixed.label) == ("fixed", "C")
    also = decide("B", [v(False, ["wrong_answer", "ambiguous"], "C")], 1)
    assert (also.outcome, also.reason) == ("dropped", "wrong_answer")  # no label repairs it
    split = decide("B", [v(False, ["wrong_answer"], "C"), v(False, ["wrong_answer"], "D")], 2)
    assert (split.outcome, split.reason) == ("dropped", "wrong_answer")
    both = decide("B", [v(True, ["missing_option"]), v(True, ["ambiguous"])], 2)
    assert both.reason == "missing_option"  # ties in the order of the flags


def test_the_store_is_read_without_fastapi(make_client, build):
    verify_all(make_client(verifiers=1), "ann")
    code = (
        "import sys, json, pathlib; sys.modules['fastapi'] = None; sys.modules['starlette'] = None\n"
        "from tvr.visualtrans.web.verify_export import verified_items\n"
        f"b = pathlib.Path({str(build)!r})\n"
        "items = json.loads((b / 'questions' / 'VisualTrans.json').read_text())\n"
        "kept, dropped = verified_items(b, items)\n"
        "assert 'fastapi' not in [m for m in sys.modules if sys.modules[m] is not None]\n"
        "print(len(kept), dropped['ambiguous'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["9", "1"]
