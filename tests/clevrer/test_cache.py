"""The caches beside CLEVRER's data (`tvr.clevrer.data.cache`): `tvr clevrer execute` and
`evaluate` give the same files cold (no cache: it is built), warm (read from it) and without
it; a changed question or dynamics file rebuilds its cache."""

from __future__ import annotations

import json
import time

import pytest

from tests.clevrer.data.samples import question_file
from tests.clevrer.test_dynamics import layout
from tvr.clevrer.data import cache as cache_module
from tvr.clevrer.data.cache import facts_cache_path, questions_cache_path
from tvr.clevrer.data.questions import read_questions
from tvr.cli import main


def _set(tmp_path):
    """Three videos' questions and a dynamics file for two of them (one video has none)."""
    questions = tmp_path / "questions" / "validation.json"
    questions.parent.mkdir()
    data = question_file(n_videos=3)
    for video in data:  # a count the dynamics answer (the sample's own program fails on them)
        video["questions"][0]["program"] = ["events", "objects", "filter_collision", "count"]
    questions.write_text(json.dumps(data))
    dynamics = tmp_path / "dynamics"
    dynamics.mkdir()
    one = layout()
    for k, scene in enumerate((10000, 10002)):
        if k:  # the second video: blue is never listed after frame 10 in the factual run
            one = json.loads(json.dumps(one))
            one["predictions"][0]["trajectory"][4]["objects"][1]["x"] = 10
        (dynamics / f"sim_{scene:05d}.json").write_text(json.dumps(one))
    time.sleep(0.05)  # the files settle before the first build (the cache's rule)
    return questions, dynamics


def _execute(questions, dynamics, out, capsys) -> tuple[bytes, str]:
    assert main(["clevrer", "execute", "--data", str(questions), "--dynamics", str(dynamics),
                 "--out", str(out), "--quiet"]) == 0  # fmt: skip
    return out.read_bytes(), capsys.readouterr().out.replace(str(out), "OUT")


def _evaluate(questions, answers, out, capsys) -> tuple[dict[str, bytes], str]:
    assert main(["clevrer", "evaluate", "--data", str(questions), "--predictions", str(answers),
                 "--out", str(out), "--overwrite"]) == 0  # fmt: skip
    files = {f: (out / f).read_bytes() for f in ("summary.json", "summary.md", "detail.jsonl")}
    return files, capsys.readouterr().out


def test_execute_and_evaluate_cold_warm_and_uncached_agree(tmp_path, capsys, monkeypatch):
    questions, dynamics = _set(tmp_path)
    # without any cache: the readers of before
    monkeypatch.setattr(cache_module, "_build", lambda cpath, fmt, sources, make: make()[0])
    monkeypatch.setattr(cache_module, "_read", lambda cpath, fmt: None)
    plain = _execute(questions, dynamics, tmp_path / "answers.json", capsys)
    plain_eval = _evaluate(questions, tmp_path / "answers.json", tmp_path / "e0", capsys)
    assert not questions_cache_path(questions).exists()
    monkeypatch.undo()

    cold = _execute(questions, dynamics, tmp_path / "cold.json", capsys)
    assert questions_cache_path(questions).is_file()
    assert facts_cache_path(dynamics, "given").is_file()
    # warm: the JSON readers must not run again
    for name in ("read_questions", "read_dynamics"):
        monkeypatch.setattr(f"tvr.clevrer.eval.execute.{name}" if name == "read_dynamics"
                            else "tvr.clevrer.data.questions.read_questions",
                            lambda *a, **k: pytest.fail("read the JSON again"), raising=False)  # fmt: skip
    warm = _execute(questions, dynamics, tmp_path / "warm.json", capsys)
    assert plain == cold == warm
    assert "no dynamics file for 1 videos (scene 10001)" in warm[1]
    monkeypatch.undo()
    questions_cache_path(questions).unlink()
    cold_eval = _evaluate(questions, tmp_path / "answers.json", tmp_path / "e0", capsys)
    assert questions_cache_path(questions).is_file()
    monkeypatch.setattr("tvr.clevrer.data.questions.read_questions",
                        lambda *a, **k: pytest.fail("read the JSON again"))  # fmt: skip
    warm_eval = _evaluate(questions, tmp_path / "answers.json", tmp_path / "e0", capsys)
    assert plain_eval == cold_eval == warm_eval


def test_a_changed_question_file_rebuilds_its_cache(tmp_path):
    questions, _ = _set(tmp_path)
    first = cache_module.cached_questions(questions, read_questions)
    assert questions_cache_path(questions).is_file()
    data = json.loads(questions.read_text())
    data[0]["questions"][0]["answer"] = "3"  # same size: only the stat tells
    questions.write_text(json.dumps(data))
    time.sleep(0.05)
    again = cache_module.cached_questions(questions, read_questions)
    assert first[0].questions[0].answer == "2" and again[0].questions[0].answer == "3"
    assert again == read_questions(questions)
    # and the rebuilt cache is what a warm read gives
    warm = cache_module.cached_questions(questions, lambda p: pytest.fail("not cached"))
    assert warm == again


def test_a_changed_dynamics_file_rebuilds_the_facts_cache(tmp_path, capsys):
    questions, dynamics = _set(tmp_path)
    before, _ = _execute(questions, dynamics, tmp_path / "a.json", capsys)
    one = layout()
    one["predictions"][0]["collisions"] = []  # no collision any more
    (dynamics / "sim_10000.json").write_text(json.dumps(one))
    time.sleep(0.05)
    after, _ = _execute(questions, dynamics, tmp_path / "b.json", capsys)
    assert before != after
    assert json.loads(before)[0]["questions"][0] == {"question_id": 0, "answer": "1"}
    assert json.loads(after)[0]["questions"][0] == {"question_id": 0, "answer": "0"}
    # a new dynamics file (the missing video's) also rebuilds it
    (dynamics / "sim_10001.json").write_text(json.dumps(layout()))
    time.sleep(0.05)
    third, out = _execute(questions, dynamics, tmp_path / "c.json", capsys)
    assert "no dynamics file" not in out and len(json.loads(third)) == 3


def test_a_broken_cache_file_is_rebuilt(tmp_path, capsys):
    questions, dynamics = _set(tmp_path)
    good, _ = _execute(questions, dynamics, tmp_path / "a.json", capsys)
    questions_cache_path(questions).write_bytes(b"not an npz")
    facts_cache_path(dynamics, "given").write_bytes(b"PK\x03\x04 broken")
    again, _ = _execute(questions, dynamics, tmp_path / "b.json", capsys)
    assert again == good
    assert questions_cache_path(questions).read_bytes()[:2] == b"PK"
