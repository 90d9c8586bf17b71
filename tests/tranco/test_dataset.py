"""The dataset reader: a valid layout opens; each kind of bad file names its file, line and field."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from tvr.core.errors import InputError, UserError
from tvr.tranco.data.dataset import open_dataset

SAMPLES = {"train": {"a": 2, "b": 3, "c": 2}, "val": {"d": 2}, "test": {"e": 3, "f": 2}}


def _write_layout(root: Path) -> None:
    """A valid dataset: empty image files, candidates = the split's clips."""
    clips, lines = [], {}
    for split, samples in SAMPLES.items():
        split_clips = [f"{s}_{i}" for s, n in samples.items() for i in range(n)]
        lines[split] = []
        for s, n in samples.items():
            ids = [f"{s}_{i}" for i in range(n)]
            record = {"id": s, "clips": ids, "initial": f"states/{s}_initial.jpg",
                      "final": f"states/{s}_final.jpg", "steps": n, "task": "make tea",
                      "domain": "drink"}  # fmt: skip
            if split != "train":
                record["candidates"] = split_clips
            lines[split].append(record)
            for i, c in enumerate(ids):
                clips.append({"id": c, "split": split, "sample": s, "index": i, "label": f"step {i}",
                              "segment": [i, i + 0.5], "frames": [f"clips/{c}/{j:02d}.jpg" for j in range(3)]})  # fmt: skip
    for split, records in lines.items():
        _dump(root / f"{split}.jsonl", records)
    _dump(root / "clips.jsonl", clips)
    info = {"format": "tvr-tranco/1", "source": "coin", "config": {"seed": 0}, "frames_per_clip": 3,
            "splits": {s: len(v) for s, v in SAMPLES.items()},
            "clips": {s: sum(v.values()) for s, v in SAMPLES.items()},
            "skipped_videos": [{"id": "zz", "reason": "no local video file"}]}  # fmt: skip
    (root / "dataset.json").write_text(json.dumps(info))
    for records in lines.values():
        for r in records:
            for key in ("initial", "final"):
                _touch(root / r[key])
    for c in clips:
        for f in c["frames"]:
            _touch(root / f)


def _dump(path: Path, records: list[dict]) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))


def _touch(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"")


def _edit(name: str, line: int, change: Callable[[dict], None]):
    def apply(root: Path) -> None:
        path = root / name
        records = [json.loads(x) for x in path.read_text().splitlines()]
        change(records[line - 1])
        _dump(path, records)

    return apply


def _edit_info(change: Callable[[dict], None]):
    def apply(root: Path) -> None:
        info = json.loads((root / "dataset.json").read_text())
        change(info)
        (root / "dataset.json").write_text(json.dumps(info))

    return apply


@pytest.fixture
def layout(tmp_path) -> Path:
    _write_layout(tmp_path)
    return tmp_path


def test_a_valid_layout_opens(layout):
    ds = open_dataset(layout)
    assert [s.id for s in ds.split("train")] == ["a", "b", "c"]
    assert ds.split("test")[0].candidates == ("e_0", "e_1", "e_2", "f_0", "f_1")
    assert ds.split("train")[0].candidates is None and ds.frames_per_clip == 3
    assert [c.id for c in ds.clips_of("val")] == ["d_0", "d_1"]
    assert ds.frames("b_2")[1] == layout / "clips/b_2/01.jpg"
    assert ds.clips["e_1"].segment == (1.0, 1.5) and ds.source == "coin"


def _pop(key: str) -> Callable[[dict], None]:
    return lambda r: r.pop(key)


def _set(key: str, value) -> Callable[[dict], None]:
    return lambda r: r.__setitem__(key, value)


BAD = [
    # (what, edit, file, line, field, words of the message)
    ("format", _edit_info(_set("format", "tvr-tranco/0")), "dataset.json", None, "format", "expected"),
    ("count", _edit_info(lambda i: i["splits"].__setitem__("test", 3)), "dataset.json", None,
     "splits.test", "test.jsonl holds 2"),
    ("clip count", _edit_info(lambda i: i["clips"].__setitem__("val", 9)), "dataset.json", None,
     "clips.val", "clips.jsonl holds 2"),
    ("skipped", _edit_info(_set("skipped_videos", [{"id": "zz"}])), "dataset.json", None,
     "skipped_videos[0]", "reason"),
    ("no clips", _edit("train.jsonl", 2, _set("clips", [])), "train.jsonl", 2, "clips", "at least one"),
    ("steps", _edit("train.jsonl", 2, _set("steps", 2)), "train.jsonl", 2, "steps", "expected 3"),
    ("repeat", _edit("train.jsonl", 1, _set("clips", ["a_0", "a_0"])), "train.jsonl", 1,
     "clips[1]", "listed twice"),
    ("no task", _edit("val.jsonl", 1, _pop("task")), "val.jsonl", 1, "task", "non-empty string"),
    ("path", _edit("test.jsonl", 2, _set("final", "../f_final.jpg")), "test.jsonl", 2, "final",
     "inside the dataset folder"),
    ("unknown clip", _edit("train.jsonl", 3, _set("clips", ["c_0", "q_1"])), "train.jsonl", 3,
     "clips[1]", "'q_1' is not in clips.jsonl"),
    ("train clip in test", _edit("test.jsonl", 2, lambda r: r.update(clips=["f_0", "a_1"],
     candidates=[*r["candidates"], "a_1"])), "test.jsonl", 2, "clips[1]", "is a train clip"),
    ("foreign candidate", _edit("val.jsonl", 1, _set("candidates", ["d_0", "d_1", "e_0"])),
     "val.jsonl", 1, "candidates[2]", "is a test clip"),
    ("no candidates", _edit("test.jsonl", 1, _pop("candidates")), "test.jsonl", 1, "candidates",
     "stored candidate set"),
    ("own clip not a candidate", _edit("test.jsonl", 1, _set("candidates", ["e_0", "e_1"])),
     "test.jsonl", 1, "candidates", "'e_2' is not a candidate"),
    ("train candidates", _edit("train.jsonl", 1, _set("candidates", ["a_0", "a_1"])),
     "train.jsonl", 1, "candidates", "drawn per epoch"),
    ("clip split", _edit("clips.jsonl", 4, _set("split", "dev")), "clips.jsonl", 4, "split",
     "expected one of"),
    ("clip index", _edit("clips.jsonl", 2, _set("index", 0)), "clips.jsonl", 2, "index",
     "step 1 of sample 'a'"),
    ("segment", _edit("clips.jsonl", 1, _set("segment", [3, 1])), "clips.jsonl", 1, "segment",
     "start <= end"),
    ("frames", _edit("clips.jsonl", 1, _set("frames", ["clips/a_0/00.jpg"])), "clips.jsonl", 1,
     "frames", "list of 3 frame paths"),
    ("duplicate clip", _edit("clips.jsonl", 2, _set("id", "a_0")), "clips.jsonl", 2, "id",
     "also on line 1"),
]  # fmt: skip


@pytest.mark.parametrize(("edit", "name", "line", "field", "words"),
                         [b[1:] for b in BAD], ids=[b[0] for b in BAD])  # fmt: skip
def test_a_bad_file_names_file_line_and_field(layout, edit, name, line, field, words):
    edit(layout)
    with pytest.raises(InputError) as err:
        open_dataset(layout)
    assert Path(err.value.path).name == name
    assert (err.value.line, err.value.field) == (line, field)
    assert words in err.value.reason


def test_a_missing_image_is_found_and_the_check_can_be_skipped(layout):
    (layout / "clips" / "e_1" / "02.jpg").unlink()
    with pytest.raises(
        InputError, match=r"clips\.jsonl, line 11, field 'frames\[2\]': no such file"
    ):
        open_dataset(layout)
    assert open_dataset(layout, check_images=False).clips["e_1"].frames[2] == "clips/e_1/02.jpg"
    (layout / "states" / "b_final.jpg").unlink()
    with pytest.raises(InputError, match=r"train\.jsonl, line 2, field 'final'"):
        open_dataset(layout)


def test_a_sample_id_in_two_splits_and_missing_files(layout):
    _edit("test.jsonl", 1, _set("id", "a"))(layout)
    with pytest.raises(
        InputError,
        match=r"test\.jsonl, line 1, field 'id': sample 'a' is also on line 1 of train\.jsonl",
    ):
        open_dataset(layout)
    (layout / "val.jsonl").unlink()
    with pytest.raises(UserError, match=r"val\.jsonl: no such file"):
        open_dataset(layout)
    with pytest.raises(UserError, match="no such folder"):
        open_dataset(layout / "nope")


def test_split_files_are_valid_evaluate_samples_files(layout):
    from tvr.tranco.data.formats import read_samples

    samples = read_samples(layout / "test.jsonl")
    assert [s.id for s in samples] == ["e", "f"] and samples[0].candidates[:2] == ("e_0", "e_1")
