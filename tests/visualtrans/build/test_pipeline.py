"""`tvr visualtrans build` end to end on the tiny testbed with the scripted annotator: the
answers against the truth, failed and malformed replies counted, resume, refusals, export."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path

import pytest

pytest.importorskip("pydantic")

from tvr.core.errors import UserError
from tvr.core.jsonl import iter_jsonl, read_json
from tvr.visualtrans.build import run_build
from tvr.visualtrans.build.config import BuildConfig


def config(tb: Path, **kw) -> BuildConfig:
    base = dict(input=str(tb / "episodes"), image_size=48, annotator="scripted",
                truth=str(tb / "truth.jsonl"))  # fmt: skip
    return BuildConfig(**{**base, **kw})


def build(tb: Path, out: Path, **kw):
    return run_build(config(tb, **kw), out, say=lambda line: None)


def truth_answers(tb: Path, out: Path, seed: int = 0) -> dict[str, str]:
    from tvr.visualtrans.build.check import truth_answers as answers

    return answers(out, tb / "truth.jsonl", seed)


def test_end_to_end_answers_equal_the_truth(testbed_copy, tmp_path, capsys):
    out = tmp_path / "build"
    reports = build(testbed_copy, out, malformed_rate=0.3)
    assert reports["frames"]["with_keyframes"] == 8
    assert reports["filter"]["kept"] == 8
    assert reports["annotate"]["annotated"] == 8
    assert reports["filter"]["retried"] + reports["annotate"]["retried"] > 0  # malformed, asked again
    fams = [r for _, r in iter_jsonl(out / "questions" / "families.jsonl")]
    assert len(fams) == reports["questions"]["items"] > 20
    truth = truth_answers(testbed_copy, out)
    assert all(truth[f["key"]] == f["answer"] for f in fams)
    from tvr.visualtrans.build.check import check_against_truth

    assert check_against_truth(out)["wrong"] == 0
    items = read_json(out / "export" / "VisualTrans.json")
    assert len(items) == len(fams)
    assert read_json(out / "export" / "report.json")["note"].startswith("not verified")
    # every existing command reads the export as the release
    from tvr.cli import main

    assert main(["visualtrans", "stats", "--data", str(out / "export"), "--images",
                 str(out / "export" / "images")]) == 0  # fmt: skip
    pred = tmp_path / "oracle.jsonl"
    assert main(["visualtrans", "baseline", "oracle", "--data", str(out / "export"),
                 "--out", str(pred)]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["visualtrans", "evaluate", "--data", str(out / "export"), "--predictions",
                 str(pred), "--json"]) == 0  # fmt: skip
    assert json.loads(capsys.readouterr().out)["overall"]["accuracy"] == 1.0


def test_error_rate_gives_wrong_answers(testbed_copy, tmp_path):
    out = tmp_path / "build"
    build(testbed_copy, out, error_rate=0.5)
    from tvr.visualtrans.build.check import check_against_truth

    check = check_against_truth(out)
    assert 0 < check["wrong"] < check["items"]
    assert check_against_truth(out, "export")["wrong"] == check["wrong"]


def test_malformed_replies_are_counted_never_dropped(testbed_copy, tmp_path):
    out = tmp_path / "b"
    run_build(config(testbed_copy, malformed_rate=1.0, parse_retries=1), out,
              stages=("frames", "filter"), say=lambda line: None)  # fmt: skip
    lines = [r for _, r in iter_jsonl(out / "filter" / "verdicts.jsonl")]
    assert len(lines) == 8 and all(r["status"] == "failed" for r in lines)
    assert all(r["reason"].startswith("invalid: (reply): no JSON") and r["attempts"] == 2
               for r in lines)  # fmt: skip
    assert read_json(out / "filter" / "report.json")["failed"] == 8


def test_failed_requests_are_recorded_with_the_error(testbed_copy, tmp_path):
    from tvr.visualtrans.build.filter import run_filter
    from tvr.visualtrans.build.vlm_stage import Asker

    out = tmp_path / "b"
    run_build(config(testbed_copy), out, stages=("frames",), say=lambda line: None)
    counts = run_filter(out, Asker("http://127.0.0.1:9/v1", "m", retries=0, timeout_s=2), 1)
    assert counts["failed"] == 8
    assert all("failed:" in r for r in counts["failed_reasons"].values())


def test_human_metadata_file_is_validated_with_file_line_field(testbed_copy, tmp_path):
    bad = tmp_path / "meta.jsonl"
    good = json.loads((testbed_copy / "truth.jsonl").read_text().splitlines()[0])["metadata"]
    broken = {**good, "episode": "x_1", "stack": ["no such block", "x"]}
    bad.write_text(json.dumps(good) + "\n" + json.dumps(broken) + "\n")
    from tvr.visualtrans.build.schemas import read_human_metadata

    with pytest.raises(UserError, match=r"meta.jsonl, line 2, field '\(record\)'|meta.jsonl, line 2"):
        read_human_metadata(bad)
    broken = {**good, "episode": "x_1", "direction": "sideways"}
    bad.write_text(json.dumps(good) + "\n" + json.dumps(broken) + "\n")
    with pytest.raises(UserError, match=r"meta.jsonl, line 2, field 'direction'"):
        read_human_metadata(bad)


def test_human_metadata_replaces_the_model(testbed_copy, tmp_path):
    meta = tmp_path / "meta.jsonl"
    lines = [json.loads(x)["metadata"] for x in (testbed_copy / "truth.jsonl").read_text().splitlines()]
    meta.write_text("".join(json.dumps(m) + "\n" for m in lines[:3]))
    out = tmp_path / "b"
    reports = run_build(config(testbed_copy, metadata=str(meta)), out,
                        stages=("frames", "filter", "annotate"), say=lambda line: None)  # fmt: skip
    assert reports["annotate"]["from_human_file"] == 3
    assert reports["annotate"]["from_model"] == 5


def test_two_builds_into_one_folder_one_is_refused(testbed_copy, tmp_path):
    out = tmp_path / "b"
    run_build(config(testbed_copy), out, stages=("frames",), say=lambda line: None)
    with pytest.raises(UserError, match=r"another config.*differs in seed"):
        run_build(config(testbed_copy, seed=1), out, stages=("frames",), say=lambda line: None)


def _files(out: Path) -> dict[str, bytes]:
    keep = ("frames/episodes.jsonl", "filter/verdicts.jsonl", "annotate/metadata.jsonl",
            "questions/VisualTrans.json", "questions/families.jsonl", "export/VisualTrans.json",
            "export/families.jsonl")  # fmt: skip
    out_files = {k: (out / k).read_bytes() for k in keep if (out / k).is_file()}
    for stage in ("frames", "questions", "export"):
        for p in sorted((out / stage / "images").rglob("*.jpg")):
            out_files[str(p.relative_to(out))] = p.read_bytes()
    return out_files


@pytest.fixture(scope="module")
def whole_build(tiny_testbed, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("vt-whole") / "build"
    build(tiny_testbed, out)
    return out


@pytest.mark.parametrize("stage", ["frames", "filter", "annotate", "questions", "export"])
def test_resume_after_a_kill_at_each_stage_gives_identical_files(stage, tiny_testbed,
                                                                 whole_build, tmp_path):  # fmt: skip
    """A killed stage leaves what kill -9 leaves: part of its outputs, a torn results line,
    temporary files, and no report; the rerun finishes it with the same files."""
    import shutil

    whole = whole_build
    killed = tmp_path / "killed"
    shutil.copytree(whole, killed)
    (killed / stage / "report.json").unlink()
    later = ("frames", "filter", "annotate", "questions", "export")
    for s in later[later.index(stage) + 1 :]:
        shutil.rmtree(killed / s)
    if stage == "frames":
        shards = sorted((killed / "frames" / "shards").glob("*.json"))
        for p in shards[:3]:
            p.unlink()
        (killed / "frames" / "shards" / ".x.json.tmp-1-abc").write_text("{")
        (killed / "frames" / "episodes.jsonl").unlink()
    elif stage in ("filter", "annotate"):
        replies = sorted((killed / stage / "replies").glob("*.1.jsonl"))[0]
        text = replies.read_text().splitlines()
        replies.write_text("\n".join(text[:2]) + "\n" + text[2][: len(text[2]) // 2])
    else:
        (killed / stage / "VisualTrans.json").unlink()
    build(tiny_testbed, killed)
    assert _files(killed) == _files(whole)


def test_export_uses_the_verification_store(testbed_copy, tmp_path, monkeypatch):
    out = tmp_path / "b"
    build(testbed_copy, out)
    seen = {}

    def verified_items(build_dir: Path, items: list[dict]):
        seen["build"] = build_dir
        fixed = [{**items[0], "label": "A"}]
        return fixed + items[2:], {"wrong answer": 1}

    fake = types.ModuleType("tvr.visualtrans.web.verify_export")
    fake.verified_items = verified_items  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tvr.visualtrans.web.verify_export", fake)
    (out / "verify").mkdir()
    (out / "verify" / "verify.sqlite").write_bytes(b"")
    import shutil

    shutil.rmtree(out / "export")
    reports = build(testbed_copy, out)
    r = reports["export"]
    assert seen["build"] == out
    assert r["note"] == "verified" and r["dropped"] == {"wrong answer": 1}
    items = read_json(out / "export" / "VisualTrans.json")
    assert len(items) == r["items"] - 1 and items[0]["label"] == "A"
    fams = [f for _, f in iter_jsonl(out / "export" / "families.jsonl")]
    before = next(iter_jsonl(out / "questions" / "families.jsonl"))[1]
    if read_json(out / "questions" / "VisualTrans.json")[0]["label"] != "A":
        assert fams[0]["fixed"] is True and fams[0]["answer"] != before["answer"]
    from tvr.visualtrans.build.export import answer_of

    for it, f in zip(items[1:], fams[1:], strict=True):  # unfixed: the answer as generated
        assert answer_of(it) == f["answer"] or f["answer"] == it["label"]


def test_export_is_read_by_tvr_export_hf(whole_build, tmp_path):
    pytest.importorskip("datasets")
    from tvr.cli import main

    out = tmp_path / "hf"
    assert main(["export", "hf", "--benchmark", "visualtrans", "--data",
                 str(whole_build / "export"), "--out", str(out)]) == 0  # fmt: skip
    assert list(out.rglob("*.parquet"))


def test_stats_families_on_a_release_file(whole_build, tmp_path, capsys):
    from tvr.cli import main

    items = read_json(whole_build / "export" / "VisualTrans.json")
    odd = {**items[0], "question": "What colour is the sky?"}
    data = tmp_path / "VisualTrans.json"
    data.write_text(json.dumps([*items, odd]))
    assert main(["visualtrans", "stats", "--data", str(data), "--families", "--json"]) == 0
    cov = json.loads(capsys.readouterr().out)["families"]
    assert cov["matched"] == len(items) and cov["items"] == len(items) + 1
    assert cov["unmatched_items"] == [{"index": len(items), "task_type": odd["task_type"],
                                       "scene": odd["scene"], "question": odd["question"],
                                       "reason": "no family's question stem matches"}]  # fmt: skip


def test_a_plain_folder_of_videos_with_a_task_name(tiny_testbed, tmp_path):
    from tvr.visualtrans.build.frames import find_episodes

    cfg = config(tiny_testbed, input=str(tiny_testbed / "episodes" / "pick_place_food"),
                 task="pick_place_food")  # fmt: skip
    episodes, _ = find_episodes(cfg)
    assert [e.id for e in episodes] == [f"pick_place_food_{i}" for i in range(4)]
    assert all(e.hdf5 is not None for e in episodes)
    with pytest.raises(UserError, match="no task folder"):
        find_episodes(config(tiny_testbed, input=str(tiny_testbed / "episodes" / "pick_place_food")))


KILLED_RUN = """
import sys, time
import tvr.visualtrans.build.scripted as a
reply = a.ScriptedAnnotator.reply
def slow(self, text):
    time.sleep(0.15)
    return reply(self, text)
a.ScriptedAnnotator.reply = slow
from tvr.visualtrans.build import run_build
from tvr.visualtrans.build.config import BuildConfig
tb = sys.argv[1]
run_build(BuildConfig(input=tb + "/episodes", image_size=48, annotator="scripted",
                      truth=tb + "/truth.jsonl"), sys.argv[2], say=print)
"""


@pytest.mark.slow
@pytest.mark.parametrize("stage", ["filter", "annotate"])
def test_kill_9_during_a_model_stage_then_resume(stage, tiny_testbed, whole_build, tmp_path):
    """A real SIGKILL while the stage's requests are in flight; the rerun gives the same files."""
    import os
    import signal
    import subprocess
    import time

    out = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-c", KILLED_RUN, str(tiny_testbed), str(out)],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    replies = out / stage / "replies"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        lines = sum(len(p.read_text().splitlines()) for p in replies.glob("*.jsonl")
                    if not p.name.endswith(".runs.jsonl")) if replies.is_dir() else 0  # fmt: skip
        if lines >= 2:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the build ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (out / stage / "report.json").exists()
    build(tiny_testbed, out)
    assert _files(out) == _files(whole_build)


KILLED_AT_STAGE = """
import sys, time
from pathlib import Path
stage = sys.argv[3]
import tvr.visualtrans.build.frames as frames
import tvr.visualtrans.build.questions as questions
extract, link = frames.FramesWorker.extract, questions._link_or_copy
def slow_extract(self, ep):
    time.sleep(0.3)
    return extract(self, ep)
def slow_link(src, dst):
    if Path(dst).is_relative_to(Path(sys.argv[2]) / stage):
        time.sleep(0.1)
    return link(src, dst)
if stage == "frames":
    frames.FramesWorker.extract = slow_extract
questions._link_or_copy = slow_link
from tvr.visualtrans.build import run_build
from tvr.visualtrans.build.config import BuildConfig
tb = sys.argv[1]
run_build(BuildConfig(input=tb + "/episodes", image_size=48, annotator="scripted",
                      truth=tb + "/truth.jsonl"), sys.argv[2], say=print)
"""


@pytest.mark.parametrize("stage", ["frames", "questions", "export"])
def test_kill_9_during_a_writing_stage_then_resume(stage, tiny_testbed, whole_build, tmp_path):
    """A real SIGKILL once the stage's first output is on disk (frames: a finished episode's
    shard; questions and export: an image of the set, before its VisualTrans.json); the rerun
    gives the same files as the build that was never killed."""
    import os
    import signal
    import subprocess
    import time

    out = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, "-c", KILLED_AT_STAGE, str(tiny_testbed), str(out),
                             stage], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)  # fmt: skip
    first = out / stage / ("shards" if stage == "frames" else "images")
    pattern = "*.json" if stage == "frames" else "*.jpg"
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if first.is_dir() and any(first.rglob(pattern)):
            break
        time.sleep(0.02)
    assert proc.poll() is None, "the build ended before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert not (out / stage / "report.json").exists()
    if stage != "frames":  # killed before the set's file: the stage's outputs are partial
        assert not (out / stage / "VisualTrans.json").exists()
    build(tiny_testbed, out)
    assert _files(out) == _files(whole_build)
