"""Verification of a testbed build with planted errors, end to end: the scripted annotator makes
half the episodes' metadata wrong, two scripted verifiers (they answer from the truth, then flag
"wrong answer" with the fix) verify every item through the verify app's HTTP routes, and the
export stage's set has no wrong answer against the truth (the same run as
benchmarks/visualtrans_verification.py, on the tiny testbed)."""

from __future__ import annotations

import pytest

pytest.importorskip("pydantic")
pytest.importorskip("fastapi")
pytest.importorskip("sqlalchemy")

from fastapi.testclient import TestClient

from tvr.core.jsonl import iter_jsonl
from tvr.visualtrans.build import run_build
from tvr.visualtrans.build.check import check_against_truth
from tvr.visualtrans.build.config import BuildConfig
from tvr.visualtrans.testbed.verifier import true_answers, verify_from_truth
from tvr.visualtrans.web.verify_export import store_url
from tvr.web.config import ServeConfig
from tvr.web.factory import create_app


def test_verified_export_of_a_build_with_planted_errors_has_no_wrong_answer(tiny_testbed,
                                                                             tmp_path):  # fmt: skip
    tb, build = tiny_testbed, tmp_path / "build"
    config = BuildConfig(input=str(tb / "episodes"), image_size=48, annotator="scripted",
                         truth=str(tb / "truth.jsonl"), error_rate=0.5,
                         questions_per_family=3)  # fmt: skip
    run_build(config, build, ("frames", "filter", "annotate", "questions"), say=lambda s: None)
    before = check_against_truth(build, "questions")
    assert before["wrong"] > 0  # the planted errors made wrong answers
    (build / "verify").mkdir()
    serve = ServeConfig(data=(build,), db_url=store_url(build),
                        extra={"verify": True, "verifiers": 2})  # fmt: skip
    answers = true_answers(build)
    flagged = 0
    for name in ("ann", "bob"):
        client = TestClient(create_app(serve, "visualtrans"), base_url="http://localhost")
        done = verify_from_truth(client, name, answers)
        assert done["items"] == len(answers)
        flagged += done["wrong_answer"]
    assert flagged > 0
    report = run_build(config, build, ("export",), say=lambda s: None)["export"]
    assert report["note"] == "verified"
    after = check_against_truth(build, "export")
    assert after["items"] == report["exported"] > 0
    assert after["wrong"] == 0, after
    fixed = sum(bool(f.get("fixed")) for _, f in iter_jsonl(build / "export" / "families.jsonl"))
    assert fixed > 0  # wrong answers were fixed, not only dropped
    assert report["exported"] + sum(report["dropped"].values()) == report["items"]
