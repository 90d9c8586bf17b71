"""Each benchmark's PyTorch Dataset, and the example in its guide (issue 29: "Loaders for every
benchmark ... each has an example in its guide that a test runs").

For TRANCE, CLEVRER, VTT and TRANCO the test runs the `tvr` commands of the guide's section (a
small generated set under data/) and then its Python example, as written, from the same folder;
for VisualTrans, which has no generator, it writes a small file in the release's layout first.
Then each loader's items, splits and error messages are checked.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import pickle
import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("torchvision")

import torch

from tvr.core.errors import UserError

DOCS = Path(__file__).resolve().parent.parent / "docs"
#: the guide and the heading of its section with the loader's example
SECTIONS = {
    "trance": ("datasets.md", "## PyTorch Datasets"),
    "clevrer": ("clevrer.md", "## Loading in PyTorch"),
    "vtt": ("vtt.md", "## Loading in PyTorch"),
    "tranco": ("tranco.md", "## Loading in PyTorch"),
    "visualtrans": ("visualtrans.md", "## Loading in PyTorch"),
}


def guide_section(bench: str) -> tuple[list[list[str]], str]:
    """(the `tvr` commands of the bash blocks, the Python example) of a guide's section."""
    name, heading = SECTIONS[bench]
    text = (DOCS / name).read_text(encoding="utf-8")
    starts = [m.start() for m in re.finditer(rf"^{re.escape(heading)}", text, re.M)]
    assert len(starts) == 1, f"{name}: expected one section {heading!r}"
    section = re.split(r"^## ", text[starts[0] + 3 :], maxsplit=1, flags=re.M)[0]
    commands = [
        shlex.split(line, comments=True)[1:]
        for block in re.findall(r"```bash\n(.*?)```", section, re.S)
        for line in block.splitlines()
        if line.startswith("tvr ")
    ]
    code = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(code) == 1, f"{name}: expected one python example in {heading!r}"
    return commands, code[0]


@contextlib.contextmanager
def inside(folder: Path):
    before = os.getcwd()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)


def make_data(bench: str, folder: Path) -> None:
    """Run the guide's `tvr` commands in `folder`."""
    from tvr.cli import main
    from tvr.core.output_lock import release_all

    commands, _ = guide_section(bench)
    assert commands, f"{bench}: the guide's section shows no command making the data"
    with inside(folder):
        for argv in commands:
            assert main(argv) == 0, argv
            release_all()


def run_example(bench: str, folder: Path, capsys) -> str:
    """Run the guide's Python example in `folder`; what it printed."""
    _, code = guide_section(bench)
    name = SECTIONS[bench][0]
    capsys.readouterr()
    with inside(folder):
        exec(compile(code, str(DOCS / name), "exec"), {"__name__": "__guide__"})
    return capsys.readouterr().out


@pytest.fixture(scope="module")
def guides(tmp_path_factory) -> Path:
    """The folder the examples run in (their data under data/)."""
    return tmp_path_factory.mktemp("guides")


@pytest.fixture(scope="module")
def trance_data(guides) -> Path:
    pytest.importorskip("moderngl")
    make_data("trance", guides)
    return guides / "data" / "ev"


@pytest.fixture(scope="module")
def clevrer_data(guides) -> Path:
    pytest.importorskip("pybullet")
    pytest.importorskip("av")
    pytest.importorskip("moderngl")
    make_data("clevrer", guides)
    return guides / "data" / "clevrer"


@pytest.fixture(scope="module")
def vtt_data(guides) -> Path:
    pytest.importorskip("moderngl")
    make_data("vtt", guides)
    return guides / "data" / "vtt"


@pytest.fixture(scope="module")
def tranco_data(guides) -> Path:
    pytest.importorskip("moderngl")
    make_data("tranco", guides)
    return guides / "data" / "tranco"


@pytest.fixture(scope="module")
def visualtrans_data(guides) -> Path:
    from tests.visualtrans.make_data import make_visualtrans

    data, _, _ = make_visualtrans(guides / "data" / "visualtrans")
    data.rename(data.with_name("VisualTrans.json"))
    return guides / "data" / "visualtrans"


# --- the guides' examples ----------------------------------------------------------------------
def test_trance_guide_example_runs(trance_data, guides, capsys):
    out = run_example("trance", guides, capsys)
    assert "samples; init_image (120, 160, 3) steps" in out
    assert "batch (4, 120, 160, 3)" in out


def test_clevrer_guide_example_runs(clevrer_data, guides, capsys):
    out = run_example("clevrer", guides, capsys)
    assert "2 videos; frames (8, 320, 480, 3) [8, 24, 40, 56, 72, 88, 104, 120]" in out
    assert "batch of scenes [0, 1]" in out
    assert "counterfactual questions;" in out


def test_vtt_guide_example_runs(vtt_data, guides, capsys):
    out = run_example("vtt", guides, capsys)
    assert re.search(r"\d+ samples; states \(\d, 240, 320, 3\)", out)
    assert "state 0 -> state 1: " in out
    assert re.search(r"batch \[\(\d, 3, 60, 80\)", out)


def test_tranco_guide_example_runs(tranco_data, guides, capsys):
    out = run_example("tranco", guides, capsys)
    assert re.search(r"\d+ samples; clips \(\d, 3, 48, 64, 3\) initial \(48, 64, 3\)", out)
    assert re.search(r"of 5 candidates \(5, 3, 48, 64, 3\)", out)
    assert "batch of [" in out


def test_visualtrans_guide_example_runs(visualtrans_data, guides, capsys):
    out = run_example("visualtrans", guides, capsys)
    assert out.splitlines()[:2] == [
        "11 items",
        "procedural_causal | [Q03] Which operation most likely occurred? | images [(8, 6), (8, 6)]",
    ]
    assert "  B. Stack the purple bowl." in out and out.rstrip().endswith("answer B")


# --- CLEVRER -----------------------------------------------------------------------------------
def test_clevrer_videos(clevrer_data):
    from tvr.clevrer.data.torch_data import ClevrerVideoDataset

    val = ClevrerVideoDataset(clevrer_data, "val", frames=3)
    assert len(val) == 1 and len(ClevrerVideoDataset(clevrer_data, "validation")) == 1
    assert len(ClevrerVideoDataset(clevrer_data, "train")) == 2
    item = val[0]
    assert item["scene_index"] == 2 and item["video"].endswith("video_00002.mp4")
    assert item["frames"].shape == (3, 320, 480, 3) and item["frames"].dtype == torch.uint8
    from tvr.clevrer.report.frames import read_frames
    from tvr.video.frames import sample_indices

    assert item["frame_indices"] == [int(i) for i in sample_indices(128, 3)]
    decoded = read_frames(Path(item["video"]), item["frame_indices"])  # each frame by its index
    for k, index in enumerate(item["frame_indices"]):
        assert torch.equal(item["frames"][k], torch.from_numpy(decoded[index]))
    assert item["annotation"]["scene_index"] == 2 and item["annotation"]["object_property"]
    q = item["questions"]
    assert set(q[0]) == {"question_id", "question", "question_type", "program", "answer", "choices"}
    mc = [x for x in q if x["choices"] is not None]
    assert mc and all(x["answer"] is None for x in mc)
    assert {c["answer"] for x in mc for c in x["choices"]} <= {"correct", "wrong"}
    whole = ClevrerVideoDataset(clevrer_data, "test", transform=lambda f: f.permute(0, 3, 1, 2))
    assert whole[0]["frames"].shape == (128, 3, 320, 480)
    assert len(pickle.loads(pickle.dumps(val))) == 1  # DataLoader workers get a copy


def test_clevrer_questions(clevrer_data):
    from tvr.clevrer.data.questions import read_questions
    from tvr.clevrer.data.torch_data import ClevrerQuestionDataset

    videos = read_questions(clevrer_data / "questions" / "train.json")
    every = ClevrerQuestionDataset(clevrer_data, "train")
    assert len(every) == sum(len(v.questions) for v in videos)
    assert every[0]["scene_index"] == 0 and every[0]["video_filename"] == "video_00000.mp4"
    descriptive = ClevrerQuestionDataset(clevrer_data, "train", ["descriptive"])
    assert 0 < len(descriptive) < len(every)
    assert all(x["question_type"] == "descriptive" and x["answer"] for x in descriptive)


def test_clevrer_release_test_split_without_answers_or_annotations(clevrer_data, tmp_path):
    """The release's test split: questions without programs or answers, no annotations."""
    from tvr.clevrer.data.torch_data import ClevrerVideoDataset

    root = tmp_path / "release"
    (root / "questions").mkdir(parents=True)
    entries = json.loads((clevrer_data / "questions" / "train.json").read_text())
    for video in entries:
        for q in video["questions"]:
            q.pop("program", None)
            q.pop("answer", None)
            for c in q.get("choices", []):
                c.pop("program", None)
                c.pop("answer", None)
    (root / "test.json").write_text(json.dumps(entries))
    (root / "videos").symlink_to(clevrer_data / "videos")
    ds = ClevrerVideoDataset(root, "test", frames=1)
    assert (
        len(ds) == 2 and ds[1]["annotation"] is None and ds[1]["frames"].shape == (1, 320, 480, 3)
    )
    assert all(q["program"] is None and q["answer"] is None for q in ds[1]["questions"])
    # a split with annotations that lacks one of them says which
    (root / "annotations").mkdir()
    shutil.copy(next(clevrer_data.rglob("annotation_00000.json")), root / "annotations")
    with pytest.raises(UserError, match=r"release: no annotation for scene 1 \(looked for "):
        ClevrerVideoDataset(root, "test")


def test_clevrer_wrong_arguments_are_one_sentence(clevrer_data, tmp_path):
    from tvr.clevrer.data.torch_data import ClevrerQuestionDataset, ClevrerVideoDataset

    cases = [
        (lambda: ClevrerVideoDataset(clevrer_data, "dev"),
         "ClevrerVideoDataset: split is 'train', 'val' or 'test' ('validation' is 'val'), got 'dev'"),
        (lambda: ClevrerQuestionDataset(clevrer_data, None),
         "ClevrerQuestionDataset: split is 'train', 'val' or 'test' ('validation' is 'val'), got None"),
        (lambda: ClevrerVideoDataset(tmp_path / "nope", "val"),
         f"{tmp_path / 'nope'}: no such folder (a CLEVRER set: make one with `tvr clevrer "
         f"generate --out {tmp_path / 'nope'}`, or unpack the release there)"),
        (lambda: ClevrerVideoDataset(tmp_path, "val"),
         f"{tmp_path}: no question file for split 'validation' (looked for "
         "questions/validation.json and validation.json)"),
        (lambda: ClevrerVideoDataset(clevrer_data, "val", frames=0),
         "ClevrerVideoDataset: frames is how many frames to take from each video (1 or more), "
         "or None for all of them, got 0"),
        (lambda: ClevrerQuestionDataset(clevrer_data, "val", ["why"]),
         "ClevrerQuestionDataset: question_types are among descriptive, explanatory, "
         "predictive, counterfactual, got 'why'"),
    ]  # fmt: skip
    for make, message in cases:
        with pytest.raises(UserError) as err:
            make()
        assert str(err.value) == message


# --- VTT ---------------------------------------------------------------------------------------
def test_vtt_samples(vtt_data):
    from tvr.vtt.data.records import read_records
    from tvr.vtt.data.torch_data import VttDataset

    records = read_records(vtt_data / "meta" / "vtt.jsonl")
    sizes = {s: len(VttDataset(vtt_data, s)) for s in ("train", "val", "test")}
    assert sizes == {s: sum(r.split == s for r in records) for s in sizes}
    assert sum(sizes.values()) == 12 and min(sizes.values()) >= 1
    ds = VttDataset(vtt_data / "meta" / "vtt.jsonl", "val")  # the records file does too
    item, record = ds[0], next(r for r in records if r.split == "val")
    assert item["id"] == record.id and item["descriptions"] == record.labels
    assert (item["topic"], item["category"]) == (record.topic, record.category)
    assert item["states"].shape == (record.n + 1, 240, 320, 3)
    assert item["states"].dtype == torch.uint8
    from torchvision import transforms

    small = VttDataset(vtt_data, "val", transform=transforms.Compose(
        [transforms.Resize((24, 32)), transforms.ToTensor()]))[0]  # fmt: skip
    assert small["states"].shape == (record.n + 1, 3, 24, 32)
    assert len(pickle.loads(pickle.dumps(ds))) == len(ds)


def test_vtt_wrong_arguments_are_one_sentence(vtt_data, tmp_path):
    from tvr.vtt.data.torch_data import VttDataset

    with pytest.raises(UserError) as err:
        VttDataset(vtt_data, "validation")
    assert str(err.value) == "VttDataset: split is 'train', 'val' or 'test', got 'validation'"
    with pytest.raises(UserError) as err:
        VttDataset(tmp_path, "val")
    assert (
        str(err.value)
        == f"{tmp_path}: no meta/vtt.jsonl in this folder (a VTT release folder has one)"
    )
    with pytest.raises(UserError) as err:
        VttDataset(tmp_path / "nope", "val")
    assert str(err.value) == f"{tmp_path / 'nope'}: no such records file or release folder"


# --- TRANCO ------------------------------------------------------------------------------------
def test_tranco_samples(tranco_data):
    from tvr.tranco.data.dataset import open_dataset
    from tvr.tranco.data.torch_data import TrancoSampleDataset

    opened = open_dataset(tranco_data)
    test = TrancoSampleDataset(tranco_data / "dataset.json", "test", candidate_frames=True)
    assert len(test) == len(opened.split("test"))
    item, sample = test[0], opened.split("test")[0]
    assert item["id"] == sample.id and item["clip_ids"] == list(sample.clips)
    assert item["labels"] == [opened.clips[c].label for c in sample.clips]
    assert item["initial"].shape == item["final"].shape == (48, 64, 3)
    assert item["clips"].shape == (sample.steps, 3, 48, 64, 3)
    assert [item["candidates"][k] for k in item["targets"]] == item["clip_ids"]
    assert item["candidate_clips"].shape == (len(item["candidates"]), 3, 48, 64, 3)
    k = item["targets"][0]
    assert torch.equal(item["candidate_clips"][k], item["clips"][0])
    train = TrancoSampleDataset(tranco_data, "train")[0]
    assert (
        train["candidates"] is None and train["targets"] is None and "candidate_clips" not in train
    )
    assert len(pickle.loads(pickle.dumps(test))) == len(test)


def test_tranco_wrong_arguments_are_one_sentence(tranco_data, tmp_path):
    from tvr.tranco.data.torch_data import TrancoSampleDataset

    with pytest.raises(UserError) as err:
        TrancoSampleDataset(tranco_data, "dev")
    assert str(err.value) == "TrancoSampleDataset: split is 'train', 'val' or 'test', got 'dev'"
    with pytest.raises(UserError) as err:
        TrancoSampleDataset(tmp_path, "test")
    assert (
        str(err.value)
        == f"{tmp_path / 'dataset.json'}: no such file (a TRANCO dataset has dataset.json)"
    )
    with pytest.raises(UserError) as err:
        TrancoSampleDataset(tmp_path / "nope", "test")
    assert str(err.value) == f"{tmp_path / 'nope'}: no such folder (a TRANCO dataset)"


# --- VisualTrans -------------------------------------------------------------------------------
def test_visualtrans_items(visualtrans_data, tmp_path):
    from tvr.visualtrans.data.torch_data import VisualTransDataset

    ds = VisualTransDataset(visualtrans_data)
    assert len(ds) == 11 and len(VisualTransDataset(visualtrans_data, unique=True)) == 10
    assert len(VisualTransDataset(visualtrans_data / "VisualTrans.json", "test")) == 11
    assert len(VisualTransDataset(visualtrans_data, task_type="count")) == 2
    assert len(VisualTransDataset(visualtrans_data, task_type="spatial")) == 5
    by_type: dict = {}
    for it in ds:
        by_type.setdefault(it["task_type"], it)  # the first item of each type
    count = by_type["count"]
    assert (count["answer"], count["answer_format"], count["options"]) == ("2", "count", [])
    assert (
        count["dimension"] == "quantitative" and [im.size for im in count["images"]] == [(8, 6)] * 2
    )
    interm = by_type["procedural_interm"]
    assert len(interm["images"]) == 6 and interm["options"] == [
        "image3",
        "image4",
        "image5",
        "image6",
    ]
    subset = next(it for it in ds if it["answer_format"] == "set")
    assert subset["options"] == ["green block", "white block", "red block"]
    assert by_type["procedural_plan"]["mask"] == "first"
    from torchvision import transforms

    tensors = VisualTransDataset(visualtrans_data, transform=transforms.ToTensor())[0]["images"]
    assert [tuple(t.shape) for t in tensors] == [(3, 6, 8)] * 2
    # images beside the JSON file rather than in images/
    flat = tmp_path / "flat"
    shutil.copytree(visualtrans_data / "images", flat)
    shutil.copy(visualtrans_data / "VisualTrans.json", flat)
    assert len(VisualTransDataset(flat)) == 11
    assert len(pickle.loads(pickle.dumps(ds))) == 11


def test_visualtrans_wrong_arguments_are_one_sentence(visualtrans_data, tmp_path):
    from tvr.visualtrans.data.torch_data import VisualTransDataset

    broken = tmp_path / "broken"
    shutil.copytree(visualtrans_data, broken)
    (broken / "images" / "sort_beads" / "sort_beads_101_end.jpg").unlink()
    cases = [
        (lambda: VisualTransDataset(visualtrans_data, "train"),
         "VisualTransDataset: split is 'test', got 'train' (VisualTrans is one evaluation set: "
         "the release has no train or val split)"),
        (lambda: VisualTransDataset(visualtrans_data, task_type="fine"),
         "VisualTransDataset: task_type is a subtask (spatial_fine_grained, spatial_global, "
         "procedural_interm, procedural_causal, procedural_plan, count) or a dimension "
         "(spatial, procedural, quantitative), got 'fine'"),
        (lambda: VisualTransDataset(tmp_path / "nope"),
         f"{tmp_path / 'nope'}: no such file or folder (VisualTrans: the folder holding "
         "VisualTrans.json and images/, or VisualTrans.json itself)"),
        (lambda: VisualTransDataset(tmp_path),
         f"{tmp_path}: no VisualTrans.json in this folder (a VisualTrans folder holds the "
         "questions file and the images/ folder)"),
        (lambda: VisualTransDataset(broken),
         f"{broken / 'images' / 'sort_beads' / 'sort_beads_101_end.jpg'}: no such image (item 1 "
         "of VisualTrans.json; 1 missing in all)"),
    ]  # fmt: skip
    for make, message in cases:
        with pytest.raises(UserError) as err:
            make()
        assert str(err.value) == message


# --- without torch -----------------------------------------------------------------------------
@pytest.mark.parametrize("module", ["tvr.clevrer.data.torch_data", "tvr.vtt.data.torch_data",
                                    "tvr.tranco.data.torch_data", "tvr.visualtrans.data.torch_data"])  # fmt: skip
def test_without_torch_the_import_says_which_extra(module, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.delitem(sys.modules, module, raising=False)
    with pytest.raises(ModuleNotFoundError) as err:
        importlib.import_module(module)
    assert str(err.value) == (f"{module} needs the train extra (torch is not installed): "
                              "pip install 'tvr[train]'")  # fmt: skip
