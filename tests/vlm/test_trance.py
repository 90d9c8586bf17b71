"""TRANCE with VLMs: the reply parser, the adapter's items and prompt, the predictions export."""

import json

import pytest

from tests.vlm.make_trance import make_trance, sample_key
from tvr.core.errors import InputError, UserError
from tvr.trance.vlm_task import TranceTask, export_predictions, parse_trance_reply, unparsed_path
from tvr.vlm.tasks import build_messages
from tvr.vlm.templates import load_template, shipped_template


@pytest.mark.parametrize(
    "reply,steps",
    [
        ('<answer>{"steps": [{"obj": 3, "value": "color.red"}]}</answer>',
         [{"obj": 3, "value": "color.red"}]),
        ('<think>maybe {"steps": []}</think><answer>{"steps": [{"obj": 1, "value": '
         '"position.front-left.2"}, {"obj": 0, "value": "size.small"}]}</answer>',
         [{"obj": 1, "value": "position.front-left.2"}, {"obj": 0, "value": "size.small"}]),
        ('Here:\n```json\n{"steps": [{"obj": "4", "value": "Material.Glass"}]}\n```',
         [{"obj": 4, "value": "material.glass"}]),
        ('[{"object": 2, "attr": "shape", "value": "sphere"}]',
         [{"obj": 2, "value": "shape.sphere"}]),
        ('first {"steps": [{"obj": 1, "value": "color.red"}]} then '
         '{"steps": [{"obj": 2, "value": "color.blue"}]}',
         [{"obj": 2, "value": "color.blue"}]),
        ('<answer>{"steps": []}</answer>', []),
    ],
)  # fmt: skip
def test_parser_reads_steps(reply, steps):
    parsed = parse_trance_reply(reply)
    assert parsed.ok and parsed.answer == steps


@pytest.mark.parametrize(
    "reply,reason",
    [
        ("I think object 3 became red.", "no JSON step list"),
        ('<answer>{"steps": [{"obj": 10, "value": "color.red"}]}</answer>', "not an object index"),
        ('<answer>{"steps": [{"obj": true, "value": "color.red"}]}</answer>', "not an object index"),
        ('<answer>{"steps": [{"obj": 1, "value": "color.pink"}]}</answer>', "unknown value"),
        ('<answer>{"steps": [{"obj": 1, "value": "position.up.1"}]}</answer>', "unknown value"),
        ('<answer>{"steps": [{"obj": 1}]}</answer>', "not a value name"),
        ('<answer>{"steps": [{"obj": 1, "value": "color.red"}</answer>', "no JSON step list"),
    ],
)  # fmt: skip
def test_parser_rejects(reply, reason):
    parsed = parse_trance_reply(reply)
    assert not parsed.ok and reason in parsed.reason


def test_event_reply_with_five_steps_is_read_for_evaluation(tmp_path):
    """Longer answers reach `tvr evaluate`, which applies every step (issue 15, item 13)."""
    five = '<answer>{"steps": ' + json.dumps(
        [{"obj": i, "value": "color.red"} for i in range(5)]
    ) + "}</answer>"
    assert parse_trance_reply(five).ok and len(parse_trance_reply(five).answer) == 5
    data, images, _ = make_trance(tmp_path)
    event = TranceTask(data, images, "event")
    assert len(event.parse_reply(event.items()[0], five).answer) == 5
    basic = TranceTask(data, images, "basic")
    assert "at most 1" in basic.parse_reply(basic.items()[0], five).reason


def test_basic_allows_one_step():
    two = '{"steps": [{"obj": 1, "value": "color.red"}, {"obj": 2, "value": "color.red"}]}'
    assert "at most 1" in parse_trance_reply(two, max_steps=1).reason


def test_items_per_setting(tmp_path):
    data, images, samples = make_trance(tmp_path)
    event = TranceTask(data, images, "event").items()
    assert [it.id for it in event] == [s.id for s in samples]
    assert [p.name for p in event[0].images] == ["test-000-init.C.png", "test-000-fin.C.png"]
    assert [it.id for it in TranceTask(data, images, "basic").items()] == ["test-000"]
    view = TranceTask(data, images, "view", ("L", "R")).items()
    assert [it.id for it in view][:2] == ["test-000@L", "test-000@R"]
    assert view[1].images[1].name == "test-000-fin.R.png"
    assert view[1].meta == {"sample_id": "test-000", "view": "R"}


def test_shipped_prompt_fills_every_placeholder(tmp_path):
    data, images, _ = make_trance(tmp_path)
    task = TranceTask(data, images, "view", ("L",))
    template = shipped_template(task.default_prompt, task.prompt_package)
    template.check_fields(set(task.fields))
    (message,) = build_messages(task.items()[0], template)
    text = message["content"][0]["text"]
    assert sample_key(0) in text and "position.behind-right.2" in text and "$" not in text
    assert "seen from the left camera" in text and "1 to 4 steps" in text
    assert [p["image_url"]["url"][:22] for p in message["content"][1:]] == [
        "data:image/png;base64,"
    ] * 2
    basic = TranceTask(data, images, "basic")
    assert "exactly one step" in template.render(dict(basic.items()[0].fields))


def test_user_template_with_an_unknown_placeholder_is_refused(tmp_path):
    data, images, _ = make_trance(tmp_path)
    (tmp_path / "mine.txt").write_text("Table:\n$objects_table\n$colour\n", encoding="utf-8")
    template = load_template(tmp_path / "mine.txt", "trance.txt")
    with pytest.raises(UserError, match=r"\$colour"):
        template.check_fields(set(TranceTask(data, images).fields))


def test_bad_samples_file_names_line_and_field(tmp_path):
    path = tmp_path / "samples.jsonl"
    path.write_text('{"format": "tvr.trance.sample/1", "id": "a", "objects": [], "steps": [], "final": []}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"line 1, field 'objects'"):
        TranceTask(path, tmp_path)
    with pytest.raises(UserError, match="setting"):
        TranceTask(path, tmp_path, "hard")


def test_export_writes_a_line_per_item_and_lists_the_unreadable(tmp_path):
    data, images, _ = make_trance(tmp_path, n=4)
    task = TranceTask(data, images, "event")
    results = tmp_path / "results.jsonl"
    lines = [
        {"id": "test-000", "reply": '<answer>{"steps": [{"obj": 1, "value": "color.yellow"}]}'
         "</answer>", "error": None},
        {"id": "test-001", "reply": "Object 1 turned yellow.", "error": None},
        {"id": "test-002", "reply": None, "error": "HTTP 500: boom"},
    ]  # fmt: skip
    results.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    out = tmp_path / "pred.jsonl"
    summary = export_predictions(task, results, out)
    assert (summary.items, summary.parsed, summary.unparsed, summary.without_reply) == (4, 1, 1, 2)
    preds = [json.loads(x) for x in out.read_text().splitlines()]
    assert preds == [
        {"id": "test-000", "steps": [{"obj": 1, "value": "color.yellow"}]},
        {"id": "test-001", "steps": []},
        {"id": "test-002", "steps": []},
        {"id": "test-003", "steps": []},
    ]
    listed = [json.loads(x) for x in unparsed_path(out).read_text().splitlines()]
    assert [(x["id"], x["reason"][:14]) for x in listed] == [
        ("test-001", "no JSON step l"),
        ("test-002", "request failed"),
        ("test-003", "no result line"),
    ]
    assert unparsed_path(out).name == "pred.unparsed.jsonl"


def test_export_in_view_setting_writes_the_view(tmp_path):
    data, images, _ = make_trance(tmp_path, n=1)
    task = TranceTask(data, images, "view", ("L", "C"))
    results = tmp_path / "results.jsonl"
    results.write_text(
        json.dumps({"id": "test-000@L", "reply": '{"steps": [{"obj": 1, "value": "color.yellow"}]}',
                    "error": None}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    export_predictions(task, results, tmp_path / "pred.jsonl")
    preds = [json.loads(x) for x in (tmp_path / "pred.jsonl").read_text().splitlines()]
    assert preds == [
        {"id": "test-000", "view": "L", "steps": [{"obj": 1, "value": "color.yellow"}]},
        {"id": "test-000", "view": "C", "steps": []},
    ]
