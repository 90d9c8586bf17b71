"""`tvr export hf`: each benchmark's export is read back by `datasets.load_dataset(FOLDER)`
offline (features printed and their types checked, one row printed and its fields checked), and
oracle predictions built from the loaded rows, keyed by the exported `id`, score 100% (VTT: the
references' own scores) through each benchmark's own `evaluate` command."""

from __future__ import annotations

import json
import os

import pytest

datasets = pytest.importorskip("datasets")
pytest.importorskip("pyarrow")

from datasets import Image, List, Value, Video  # noqa: E402

from tvr.cli import main  # noqa: E402

os.environ["HF_HUB_OFFLINE"] = "1"


def _load(folder, config=None, tmp_path=None):
    return datasets.load_dataset(str(folder), config, cache_dir=str(tmp_path / "hf-cache"))


def _export(bench, data, out, *extra):
    assert main(["export", "hf", "--benchmark", bench, "--data", str(data), "--out", str(out),
                 "--quiet", *extra]) == 0  # fmt: skip
    card = (out / "README.md").read_text()
    assert card.startswith("---\n") and "configs:" in card and "dataset_info:" in card
    assert "## Scoring with tvr" in card and "@" in card.split("## Citation")[1]
    assert not list(out.rglob("*.py"))  # no loading script


def _short(value):
    """A row's value as printed: images as their size, bytes as their length."""
    if hasattr(value, "size") and hasattr(value, "mode"):
        return f"<image {value.size[0]}x{value.size[1]}>"
    if isinstance(value, (bytes, bytearray)):
        return f"<{len(value)} bytes>"
    if isinstance(value, dict):
        return {k: _short(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_short(v) for v in value]
    if isinstance(value, str) and len(value) > 120:
        return value[:120] + "..."
    return value


def _show(split):
    print(split.features)
    row = split[0]
    print(json.dumps(_short(row), indent=1))
    return row


def _types(features, expected):
    """Each named column has the expected feature (a class, or an equal feature)."""
    for name, want in expected.items():
        got = features[name]
        if isinstance(want, type):
            assert isinstance(got, want), (name, got)
        else:
            assert got == want, (name, got, want)


def _score(capsys, argv):
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_trance_round_trip(tmp_path, capsys):
    data = tmp_path / "gen"
    assert main(["generate", "--setting", "event", "--split-sizes", "train=2,val=2,test=4",
                 "--shard-size", "2", "--out", str(data), "--preset", "preview",
                 "--image-size", "96x72", "--small-size", "48x36", "--quiet"]) == 0  # fmt: skip
    out = tmp_path / "hf"
    _export("trance", data, out)
    ds = _load(out, "event", tmp_path)
    assert set(ds) == {"train", "validation", "test"}
    assert [len(ds[s]) for s in ("train", "validation", "test")] == [2, 2, 4]
    test = ds["test"]
    _types(test.features, {"id": Value("string"), "num_visible": Value("int32"),
                           "init_C": Image, "fin_C": Image, "steps": List, "objects": List})
    assert test.features["steps"].feature["obj"] == Value("int32")
    row = _show(test)
    assert row["init_C"].size == (96, 72) and row["fin_C"] is not None
    assert row["steps"] and {"obj", "value", "attr", "type"} <= set(row["steps"][0])
    assert row["objects"] and {"shape", "size", "color", "material"} <= set(row["objects"][0])
    preds = tmp_path / "oracle.jsonl"
    preds.write_text("".join(json.dumps({"id": r["id"], "steps": [
        {"obj": s["obj"], "value": s["value"]} for s in r["steps"]]}) + "\n" for r in test))
    summary = _score(capsys, ["evaluate", "--data", str(data), "--split", "test",
                              "--predictions", str(preds)])  # fmt: skip
    assert summary["samples"] == summary["predicted"] == 4
    assert summary["missing"] == 0 and summary["invalid"] == 0
    assert summary["metrics"]["Acc"] == 1.0 and summary["metrics"]["AD"] == 0.0


def test_visualtrans_round_trip(tmp_path, capsys):
    from tests.visualtrans.make_data import make_visualtrans

    data = make_visualtrans(tmp_path / "vt")[0]
    out = tmp_path / "hf"
    _export("visualtrans", data, out)
    test = _load(out, None, tmp_path)["test"]
    assert len(test) == 11
    _types(test.features, {"id": Value("string"), "index": Value("int32"),
                           "question": Value("string"), "label": Value("string"),
                           "images": List(Image()), "image_paths": List(Value("string"))})
    row = _show(test)
    assert row["id"].startswith("vt-") and row["images"] and row["images"][0].size
    assert len(row["images"]) == len(row["image_paths"]) and row["question"] and row["label"]
    preds = tmp_path / "replies.jsonl"
    preds.write_text("".join(json.dumps({"id": r["id"], "reply": r["label"], "error": None}) + "\n"
                             for r in test))  # fmt: skip
    summary = _score(capsys, ["visualtrans", "evaluate", "--data", str(data),
                              "--predictions", str(preds), "--mode", "normalized"])  # fmt: skip
    assert summary["overall"] == {"items": 11, "correct": 11, "accuracy": 1.0}


def test_tranco_round_trip(tmp_path, capsys):
    data = tmp_path / "tr"
    assert main(["tranco", "testbed", "--out", str(data), "--split-sizes", "train=2,val=2,test=4",
                 "--image-size", "64x48", "--frames-per-clip", "2", "--preset", "preview",
                 "--quiet"]) == 0  # fmt: skip
    out = tmp_path / "hf"
    _export("tranco", data, out)
    ds = _load(out, None, tmp_path)
    assert {s: len(ds[s]) for s in ds} == {"train": 2, "validation": 2, "test": 4}
    test = ds["test"]
    _types(test.features, {"id": Value("string"), "task": Value("string"), "initial": Image,
                           "final": Image, "candidates": List(Value("string")), "clips": List})
    assert isinstance(test.features["clips"].feature["frames"].feature, Image)
    row = _show(test)
    assert len(row["clips"][0]["frames"]) == 2 and row["initial"].size == (64, 48)
    assert all(c["id"] in row["candidates"] for c in row["clips"])
    preds = tmp_path / "oracle.jsonl"
    preds.write_text("".join(json.dumps({"id": r["id"], "clips": [c["id"] for c in r["clips"]]})
                             + "\n" for r in test))  # fmt: skip
    summary = _score(capsys, ["tranco", "evaluate", "--data", str(data), "--split", "test",
                              "--predictions", str(preds)])  # fmt: skip
    assert summary["samples"] == summary["predicted"] == 4 and summary["missing"] == 0
    assert summary["unknown_clips"] == 0 and summary["empty"] == 0
    for convention in summary["conventions"].values():
        assert convention["metrics"]["EMR"] == 1.0
        assert convention["metrics"]["R"] == convention["metrics"]["P"] == 1.0


def test_vtt_round_trip(tmp_path, capsys):
    data = tmp_path / "vt"
    # 30 samples: Table 1's shares give test 3 of them
    assert main(["vtt", "testbed", "--out", str(data), "--num", "30", "--image-size", "64x48",
                 "--preset", "preview", "--quiet"]) == 0  # fmt: skip
    out = tmp_path / "hf"
    _export("vtt", data, out)
    ds = _load(out, None, tmp_path)
    assert set(ds) == {"train", "validation", "test"}
    test = ds["test"]
    assert len(test) == 3
    _types(test.features, {"id": Value("string"), "transformations": List(Value("string")),
                           "states": List(Image()), "segments": List(List(Value("float64")))})
    row = _show(test)
    assert len(row["states"]) == len(row["transformations"]) + 1
    assert row["states"][0].size == (64, 48) and all(row["transformations"])
    # the oracle from the export's rows, and the references scored against themselves
    preds = tmp_path / "exported.jsonl"
    preds.write_text("".join(json.dumps({"id": r["id"], "transformations": r["transformations"]})
                             + "\n" for r in test))  # fmt: skip
    own = tmp_path / "references.jsonl"
    with own.open("w") as f:
        for line in (data / "meta" / "vtt.jsonl").read_text().splitlines():
            r = json.loads(line)
            if r["split"] == "test":
                labels = [a["label"] for a in r["annotation"]]
                f.write(json.dumps({"id": r["id"], "transformations": labels}) + "\n")
    argv = ["vtt", "evaluate", "--data", str(data), "--split", "test", "--no-bertscore", "--quiet"]
    exported = _score(capsys, [*argv, "--predictions", str(preds)])
    oracle = _score(capsys, [*argv, "--predictions", str(own)])
    print(exported["metrics"])
    assert exported["samples"] == 3 and exported["missing"] == {"samples": 0, "descriptions": 0}
    assert exported["predictions_ignored"] == {"other_split": 0, "unknown_id": 0}
    assert exported["metrics"] == oracle["metrics"]
    m = exported["metrics"]
    assert m["METEOR"] == m["ROUGE_L"] == 100.0 and m["CIDEr"] == pytest.approx(1000.0)


def test_clevrer_round_trip(tmp_path, capsys):
    data = tmp_path / "cg"
    assert main(["clevrer", "generate", "--out", str(data), "--num", "3", "--split-sizes",
                 "train=1,val=1,test=1", "--preset", "preview", "--no-dynamics", "--quiet"]) == 0
    out = tmp_path / "hf"
    _export("clevrer", data, out, "--split", "val")
    q = _load(out, "questions", tmp_path)["validation"]
    _types(q.features, {"id": Value("string"), "scene_index": Value("int32"),
                        "question_id": Value("int32"), "question": Value("string"),
                        "question_type": Value("string"), "program": List(Value("string")),
                        "answer": Value("string"), "choices": List})
    row = _show(q)
    assert row["id"] == f"{row['scene_index']}/{row['question_id']}" and row["question"]
    kinds = {r["question_type"] for r in q}
    assert "descriptive" in kinds and kinds - {"descriptive"}  # multiple-choice ones too
    v = _load(out, "videos", tmp_path)["validation"]
    _types(v.features, {"scene_index": Value("int32"), "file_name": Value("string"),
                        "video": Video, "annotation": Value("string")})
    v = v.cast_column("video", datasets.Video(decode=False))
    _show(v)
    assert v[0]["video"]["bytes"][4:8] == b"ftyp" and v[0]["file_name"].endswith(".mp4")
    # the submission built from the exported ids alone
    scenes: dict[int, list] = {}
    for r in q:
        scene, question = (int(x) for x in r["id"].split("/"))
        a = ({"question_id": question, "answer": r["answer"]} if r["choices"] is None else
             {"question_id": question, "choices": [
                 {"choice_id": c["choice_id"], "answer": c["answer"]} for c in r["choices"]]})
        scenes.setdefault(scene, []).append(a)
    preds = tmp_path / "answers.json"
    preds.write_text(json.dumps([{"scene_index": s, "questions": qs} for s, qs in scenes.items()]))
    summary = _score(capsys, ["clevrer", "evaluate", "--data", str(data), "--split", "val",
                              "--predictions", str(preds)])  # fmt: skip
    score = summary["score"]
    print({k: v for k, v in score.items() if k != "descriptive"})
    assert score["questions"] == len(q) and score["videos"] == 1
    assert score["missing"] == {"videos": 0, "questions": 0, "options": 0}
    assert score["wrong_kind"] == 0 and score["error_options"] == 0
    assert score["descriptive"]["total"] > 0 and score["descriptive"]["accuracy"] == 1.0
    assert score["multiple_choice"]["per_question"]["total"] > 0
    for kind in ("explanatory", "predictive", "counterfactual", "multiple_choice"):
        if score[kind]["per_option"]["total"]:
            assert score[kind]["per_option"]["accuracy"] == 1.0
            assert score[kind]["per_question"]["accuracy"] == 1.0
