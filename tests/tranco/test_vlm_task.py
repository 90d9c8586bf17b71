"""The TRANCO task of `tvr vlm`: reading clip numbers from replies, the items and their clip
sheets, and the whole path against a local scripted server: run, export, `tvr tranco evaluate`."""

import base64
import io
import json

import pytest
from PIL import Image

from tests.tranco.tiny_dataset import make_tiny_dataset
from tests.vlm.chat_server import ChatServer
from tvr.cli import main
from tvr.core.errors import UserError
from tvr.tranco.clip_sheet import GAP, ROW_HEIGHT
from tvr.tranco.vlm_task import TrancoTask, clip_images_text, parse_clip_numbers
from tvr.vlm.images import image_ref_data_url
from tvr.vlm.tasks import make_adapter, task_names
from tvr.vlm.templates import load_template


@pytest.fixture(scope="module")
def dataset_root(tmp_path_factory):
    return make_tiny_dataset(tmp_path_factory.mktemp("tranco_vlm") / "data")


@pytest.mark.parametrize(
    ("reply", "numbers"),
    [
        ("<think>maybe [9, 9]</think><answer>[3, 1, 5]</answer>", [3, 1, 5]),
        ('<answer>{"clips": ["4", 2]}</answer>', [4, 2]),
        ("```json\n[2, 6]\n```", [2, 6]),
        ("<answer>3, 1</answer>", [3, 1]),
        ("<answer>3 -> 1 -> 2.</answer>", [3, 1, 2]),
        ("<answer>[1, 1]</answer>", [1, 1]),  # kept: the metrics count the repeat
        ("The steps are [2, 4].", [2, 4]),
    ],
)
def test_clip_numbers_are_read_from_replies(reply, numbers):
    assert parse_clip_numbers(reply, 6).answer == numbers


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("<answer>[3, 7]</answer>", "clip number 7 is not among 1..6"),
        ("<answer>[0]</answer>", "clip number 0 is not among 1..6"),
        ("<answer>clips three and one</answer>", "no list of clip numbers"),
        ("<answer>[]</answer>", "no list of clip numbers"),
        ("I think clip 3 happens after step 2", "no list of clip numbers"),
        ("", "no list of clip numbers"),
    ],
)
def test_unreadable_replies_say_why(reply, reason):
    parsed = parse_clip_numbers(reply, 6)
    assert not parsed.ok and reason in parsed.reason


def test_items_show_states_then_numbered_clip_sheets(dataset_root):
    assert "tranco" in task_names()
    task = TrancoTask(dataset_root, dataset_root, split="test", clips_per_image=4)
    items = task.items()
    assert [it.id for it in items] == ["test000", "test001", "test002"]
    item = items[0]
    sample = task.samples[0]
    assert item.images[:2] == (dataset_root / sample.initial, dataset_root / sample.final)
    sheets = item.images[2:]
    assert len(sheets) == 2  # 6 candidates, 4 per sheet
    assert sheets[1].sources == tuple(dataset_root / f for c in sample.candidates[4:]
                                      for f in task.dataset.clips[c].frames)  # fmt: skip
    url = image_ref_data_url(sheets[0])
    assert url.startswith("data:image/jpeg;base64,")
    with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as im:
        assert im.height == 4 * ROW_HEIGHT + 3 * GAP  # four rows of clips
    assert image_ref_data_url(sheets[0]) == url  # the same files give the same bytes
    text = load_template(None, task).render(dict(item.fields))
    assert "the 6 numbered candidate clips" in text and "2 to 3 steps" in text
    assert "<image3>: clips 1-4\n<image4>: clips 5-6" in text
    assert clip_images_text(11, 10).endswith("<image3>: clips 1-10\n<image4>: clip 11")
    # a reply's numbers are the sample's candidates in stored order
    assert task.parse_reply(item, "<answer>[2, 1]</answer>").answer == list(
        sample.candidates[1::-1]
    )
    with pytest.raises(UserError, match="stores no candidates"):
        make_adapter("tranco", dataset_root, dataset_root, split="train")


def _first_image_bytes(messages):
    parts = [p for p in messages[-1]["content"] if p["type"] == "image_url"]
    return base64.b64decode(parts[0]["image_url"]["url"].split(",", 1)[1])


def test_run_export_and_evaluate_against_a_scripted_server(dataset_root, tmp_path, capsys):
    task = TrancoTask(dataset_root)
    samples = task.samples
    number = {s.id: {c: i + 1 for i, c in enumerate(s.candidates)} for s in samples}
    right = [number[samples[0].id][c] for c in samples[0].clips]
    half = [number[samples[1].id][samples[1].clips[0]]]
    replies = {
        samples[0].id: f"<think>The clips match.</think><answer>{json.dumps(right)}</answer>",
        samples[1].id: f"<answer>{json.dumps(half)}</answer>",
        samples[2].id: "I cannot tell which clips these are.",
    }
    by_image = {(dataset_root / s.initial).read_bytes(): replies[s.id] for s in samples}

    def responder(messages):  # a scripted model: it knows each sample by its initial image
        return by_image[_first_image_bytes(messages)]

    results = tmp_path / "results.jsonl"
    with ChatServer({}, responder=responder) as server:
        assert main(["vlm", "run", "--task", "tranco", "--data", str(dataset_root), "--images",
                     str(dataset_root), "--out", str(results), "--base-url", server.base_url,
                     "--model", "scripted", "--api-key", "k", "--quiet"]) == 0  # fmt: skip
    assert len(server.requests) == 3
    assert all(r.image_mimes == ["image/jpeg"] * 3 and r.images_match_mime for r in server.requests)
    preds = tmp_path / "vlm_predictions.jsonl"
    assert main(["vlm", "export", "--task", "tranco", "--data", str(dataset_root), "--images",
                 str(dataset_root), "--results", str(results), "--out", str(preds)]) == 0  # fmt: skip
    assert "3 predictions written" in capsys.readouterr().out
    lines = [json.loads(x) for x in preds.read_text().splitlines()]
    assert lines == [
        {"id": samples[0].id, "clips": list(samples[0].clips)},
        {"id": samples[1].id, "clips": [samples[1].clips[0]]},
        {"id": samples[2].id, "clips": []},
    ]
    unparsed = [json.loads(x) for x in (tmp_path / "vlm_predictions.unparsed.jsonl").read_text()
                .splitlines()]  # fmt: skip
    assert [u["id"] for u in unparsed] == [samples[2].id]
    assert unparsed[0]["reason"] == "no list of clip numbers found"
    out = tmp_path / "eval"
    assert main(["tranco", "evaluate", "--data", str(dataset_root / "test.jsonl"),
                 "--predictions", str(preds), "--out", str(out)]) == 0  # fmt: skip
    summary = json.loads((out / "summary.json").read_text())
    assert summary["setting"] == "tiny" and summary["samples"] == 3 and summary["empty"] == 1
    assert summary["conventions"]["eq2"]["metrics"]["EMR"] == pytest.approx(1 / 3)
