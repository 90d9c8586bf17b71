"""`tvr export hf` on data in each benchmark's RELEASED layout (docs/data.md), not tvr's own:
a tiny folder made here in the release's names, exported, read back by
`datasets.load_dataset(FOLDER)` offline, and oracle predictions built from the loaded rows scored
through the benchmark's evaluator on the same release data.

- TRANCE: the release folder (`data.jsonl` without tvr's fields, `image/img_NNNNNN-*.png`),
  exported directly; scored on `tvr convert --from-release data.jsonl` (the documented reading).
- CLEVRER: the unpacked archives under one root (`train.json`, `validation.json`, `test.json`
  without answers, `video_10000-11000/video_10000.mp4`, `annotation_10000-11000/...`), directly.
- VTT: the release folder (`meta/vtt.jsonl` with `ori` coin/cross and `frames`, `states/`), directly.
- TRANCO: no files are released; `tvr tranco build` on a COIN.json and local videos (the
  documented reading always builds a tvr set first), then exported.
- VisualTrans: the published `VisualTrans.json` and `images/<scene>/...`, directly.
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

datasets = pytest.importorskip("datasets")
pytest.importorskip("pyarrow")

from tests.ecosystem.test_export_hf import _export, _load, _score, _show  # noqa: E402

from tvr.cli import main  # noqa: E402

os.environ["HF_HUB_OFFLINE"] = "1"


def test_trance_release_folder(tmp_path, capsys):
    gen = tmp_path / "gen"
    assert main(["generate", "--setting", "event", "--split-sizes", "test=3", "--shard-size",
                 "3", "--out", str(gen), "--preset", "preview", "--image-size", "96x72",
                 "--small-size", "48x36", "--quiet"]) == 0  # fmt: skip
    release = tmp_path / "trance"
    assert main(["convert", "--to-release", str(gen), "--split", "test", "--out", str(release),
                 "--quiet"]) == 0  # fmt: skip
    # the public release's lines carry no tvr_* fields: ids become img_{idx:06d}
    lines = [json.loads(x) for x in (release / "data.jsonl").read_text().splitlines()]
    (release / "data.jsonl").write_text("".join(
        json.dumps({k: v for k, v in d.items() if not k.startswith("tvr_")}) + "\n"
        for d in lines))  # fmt: skip
    assert sorted(p.name for p in release.iterdir()) == ["data.jsonl", "image"]
    out = tmp_path / "hf"
    _export("trance", release, out, "--split", "test")
    test = _load(out, "event", tmp_path)["test"]
    row = _show(test)
    assert [r["id"] for r in test] == ["img_000000", "img_000001", "img_000002"]
    assert row["init_C"].size == (96, 72) and row["fin_C"] and row["fin_L"] and row["fin_R"]
    assert row["steps"] and len(row["objects"]) == 10
    # the data.jsonl file itself exports the same rows
    out2 = tmp_path / "hf2"
    _export("trance", release / "data.jsonl", out2)
    assert _load(out2, "event", tmp_path)["test"]["id"] == test["id"]
    samples = tmp_path / "test.jsonl"
    assert main(["convert", "--from-release", str(release / "data.jsonl"), "--out",
                 str(samples)]) == 0  # fmt: skip
    preds = tmp_path / "oracle.jsonl"
    preds.write_text("".join(json.dumps({"id": r["id"], "steps": [
        {"obj": s["obj"], "value": s["value"]} for s in r["steps"]]}) + "\n" for r in test))
    summary = _score(capsys, ["evaluate", "--data", str(samples), "--predictions", str(preds)])
    assert summary["samples"] == summary["predicted"] == 3 and summary["missing"] == 0
    assert summary["metrics"]["Acc"] == 1.0 and summary["metrics"]["AD"] == 0.0


def _clevrer_release(tmp_path):
    """A generated set moved into the release's names: scene 0 stays train, scene 1 becomes
    validation 10000, scene 2 test 15000 (its questions without answers, no annotation)."""
    gen = tmp_path / "cg"
    assert main(["clevrer", "generate", "--out", str(gen), "--num", "3", "--split-sizes",
                 "train=1,val=1,test=1", "--preset", "preview", "--no-dynamics", "--quiet"]) == 0
    root = tmp_path / "clevrer"
    root.mkdir()
    for split, base in (("train", 0), ("validation", 10000), ("test", 15000)):
        scenes = json.loads((gen / "questions" / f"{split}.json").read_text())
        for k, scene in enumerate(scenes):
            old, new = scene["scene_index"], base + k
            chunk = f"{new // 1000 * 1000:05d}-{new // 1000 * 1000 + 1000:05d}"
            scene["scene_index"], scene["video_filename"] = new, f"video_{new:05d}.mp4"
            video = root / f"video_{chunk}" / f"video_{new:05d}.mp4"
            video.parent.mkdir(exist_ok=True)
            shutil.copy(gen / "videos" / "video_00000-01000" / f"video_{old:05d}.mp4", video)
            if split != "test":
                a = json.loads((gen / "annotations" / "annotation_00000-01000" /
                                f"annotation_{old:05d}.json").read_text())  # fmt: skip
                a["scene_index"], a["video_filename"] = new, scene["video_filename"]
                path = root / f"annotation_{chunk}" / f"annotation_{new:05d}.json"
                path.parent.mkdir(exist_ok=True)
                path.write_text(json.dumps(a))
            else:
                for q in scene["questions"]:
                    q.pop("answer", None)
                    for c in q.get("choices", []):
                        c.pop("answer", None)
        (root / f"{split}.json").write_text(json.dumps(scenes))
    return root


def test_clevrer_release_archives(tmp_path, capsys):
    root = _clevrer_release(tmp_path)
    out = tmp_path / "hf"
    _export("clevrer", root, out)
    q = _load(out, "questions", tmp_path)
    assert set(q) == {"train", "validation", "test"}
    val = q["validation"]
    row = _show(val)
    assert row["scene_index"] == 10000 and row["id"].startswith("10000/")
    assert all(r["answer"] is None for r in q["test"] if r["choices"] is None)
    v = _load(out, "videos", tmp_path)
    v = {s: v[s].cast_column("video", datasets.Video(decode=False)) for s in v}
    assert v["validation"][0]["file_name"] == "video_10000.mp4"
    assert v["validation"][0]["video"]["bytes"][4:8] == b"ftyp"
    assert json.loads(v["validation"][0]["annotation"])["scene_index"] == 10000
    assert v["test"][0]["scene_index"] == 15000 and v["test"][0]["annotation"] is None
    scenes: dict[int, list] = {}
    for r in val:
        scene, question = (int(x) for x in r["id"].split("/"))
        a = ({"question_id": question, "answer": r["answer"]} if r["choices"] is None else
             {"question_id": question, "choices": [
                 {"choice_id": c["choice_id"], "answer": c["answer"]} for c in r["choices"]]})
        scenes.setdefault(scene, []).append(a)
    preds = tmp_path / "answers.json"
    preds.write_text(json.dumps([{"scene_index": s, "questions": qs} for s, qs in scenes.items()]))
    score = _score(capsys, ["clevrer", "evaluate", "--data", str(root / "validation.json"),
                            "--predictions", str(preds)])["score"]  # fmt: skip
    assert score["questions"] == len(val) and score["videos"] == 1
    assert score["missing"] == {"videos": 0, "questions": 0, "options": 0}
    assert score["descriptive"]["accuracy"] == 1.0
    assert score["multiple_choice"]["per_question"]["accuracy"] == 1.0


def test_vtt_release_folder(tmp_path, capsys):
    tb = tmp_path / "tb"
    assert main(["vtt", "testbed", "--out", str(tb), "--num", "30", "--image-size", "64x48",
                 "--preset", "preview", "--quiet"]) == 0  # fmt: skip
    # the release has meta/vtt.jsonl and states/ only, records of COIN and CrossTask videos:
    # a YouTube id, segments in seconds, the optional `frames`, no testbed `trance` fields
    root = tmp_path / "vtt"
    (root / "meta").mkdir(parents=True)
    shutil.copytree(tb / "states", root / "states")
    records = []
    for n, line in enumerate((tb / "meta" / "vtt.jsonl").read_text().splitlines()):
        r = json.loads(line)
        r["ori"] = ("coin", "cross")[n % 2]
        r["youtube_id"] = f"yt{n:09d}"
        r["duration"] = 10.0 * len(r["annotation"]) + 5
        for i, step in enumerate(r["annotation"]):
            step.pop("trance", None)
            step["segment"] = [10.0 * i + 1.5, 10.0 * i + 8.25]
        r["frames"] = {s["clip_id"]: {"n": 3} for s in r["annotation"]}
        records.append(r)
    (root / "meta" / "vtt.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    out = tmp_path / "hf"
    _export("vtt", root, out)
    ds = _load(out, None, tmp_path)
    assert {s: len(ds[s]) for s in ds} == {"train": 24, "validation": 3, "test": 3}
    test = ds["test"]
    row = _show(test)
    assert row["ori"] in ("coin", "cross") and row["segments"][0] == [1.5, 8.25]
    assert len(row["states"]) == len(row["transformations"]) + 1
    preds = tmp_path / "exported.jsonl"
    preds.write_text("".join(json.dumps({"id": r["id"], "transformations": r["transformations"]})
                             + "\n" for r in test))  # fmt: skip
    m = _score(capsys, ["vtt", "evaluate", "--data", str(root), "--split", "test",
                        "--no-bertscore", "--quiet", "--predictions", str(preds)])  # fmt: skip
    assert m["samples"] == 3 and m["missing"] == {"samples": 0, "descriptions": 0}
    assert m["metrics"]["METEOR"] == m["metrics"]["ROUGE_L"] == 100.0


def test_tranco_built_from_coin(tmp_path, capsys):
    pytest.importorskip("av")
    from tests.tranco.tiny_coin import VIDEOS, make_coin

    coin, videos = make_coin(tmp_path / "coin", {k: VIDEOS[k] for k in ("a2", "a3", "a4", "b2",
                                                                         "b3", "c5")})  # fmt: skip
    data = tmp_path / "tr"
    assert main(["tranco", "build", "--coin", str(coin), "--videos", str(videos), "--out",
                 str(data), "--image-size", "32", "--frames-per-clip", "2", "--split-sizes",
                 "train=2,val=2,test=2", "--tiny-candidates", "4", "--quiet"]) == 0  # fmt: skip
    out = tmp_path / "hf"
    _export("tranco", data, out)
    ds = _load(out, None, tmp_path)
    assert sum(len(ds[s]) for s in ds) == 6 and "test" in ds
    test = ds["test"]
    row = _show(test)
    assert row["task"].startswith("task ") and min(row["initial"].size) == 32
    assert len(row["clips"][0]["frames"]) == 2 and " step " in row["clips"][0]["label"]
    preds = tmp_path / "oracle.jsonl"
    preds.write_text("".join(json.dumps({"id": r["id"], "clips": [c["id"] for c in r["clips"]]})
                             + "\n" for r in test))  # fmt: skip
    summary = _score(capsys, ["tranco", "evaluate", "--data", str(data), "--split", "test",
                              "--predictions", str(preds)])  # fmt: skip
    assert summary["samples"] == summary["predicted"] == len(test) and summary["missing"] == 0
    for convention in summary["conventions"].values():
        assert convention["metrics"]["EMR"] == 1.0


def test_visualtrans_published_layout(tmp_path, capsys):
    from tests.visualtrans.make_data import make_visualtrans

    data, images, items = make_visualtrans(tmp_path / "made")
    root = tmp_path / "VisualTrans"  # the Hugging Face dataset's names, images.zip unpacked
    root.mkdir()
    shutil.copy(data, root / "VisualTrans.json")
    shutil.copytree(images, root / "images")
    out = tmp_path / "hf"
    _export("visualtrans", root, out)
    test = _load(out, None, tmp_path)["test"]
    row = _show(test)
    assert len(test) == len(items) and row["images"][0].size == (8, 6)
    assert test["image_paths"][0][0] == items[0]["images"][0]
    preds = tmp_path / "replies.jsonl"
    preds.write_text("".join(json.dumps({"id": r["id"], "reply": r["label"], "error": None}) + "\n"
                             for r in test))  # fmt: skip
    summary = _score(capsys, ["visualtrans", "evaluate", "--data", str(root / "VisualTrans.json"),
                              "--predictions", str(preds), "--mode", "normalized"])  # fmt: skip
    assert summary["overall"] == {"items": len(items), "correct": len(items), "accuracy": 1.0}
