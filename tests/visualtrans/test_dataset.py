"""Loading a VisualTrans file: validation messages, ids, formats, duplicates, the summary."""

import json

import pytest

from tests.visualtrans.make_data import DUPLICATED, make_visualtrans
from tvr.cli import main
from tvr.core.errors import InputError, UserError
from tvr.visualtrans.data.dataset import infer_answer_format, item_id, load_dataset

GOOD = {
    "task_type": "count",
    "scene": "sort_beads",
    "images": ["sort_beads/sort_beads_1_start.jpg", "sort_beads/sort_beads_1_end.jpg"],
    "question": "How many?",
    "label": "2",
}


def write(tmp_path, items):
    path = tmp_path / "vt.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "change,field,message",
    [
        ({"task_type": "count_things"}, "[1].task_type", "is not one of"),
        ({"label": 2}, "[1].label", "expected a string"),
        ({"label": " "}, "[1].label", "is empty"),
        ({"images": ["only_one.jpg"]}, "[1].images", "at least two"),
        ({"images": ["a.jpg", 3]}, "[1].images[1]", "relative path string"),
        ({"images": ["a.jpg", "../b.jpg"]}, "[1].images[1]", "relative to the image folder"),
        ({"mask": "middle"}, "[1].mask", "'first' or 'last'"),
        ({"question": ""}, "[1].question", "non-empty"),
        ({"scene": None}, "[1].scene", "non-empty string"),
    ],
)
def test_bad_item_names_index_and_field(tmp_path, change, field, message):
    path = write(tmp_path, [GOOD, {**GOOD, **change}])
    with pytest.raises(InputError) as err:
        load_dataset(path)
    assert err.value.field == field
    assert message in err.value.reason


def test_missing_field_and_bad_file_shapes(tmp_path):
    bad = {k: v for k, v in GOOD.items() if k != "label"}
    with pytest.raises(InputError, match=r"field '\[0\]\.label': missing"):
        load_dataset(write(tmp_path, [bad]))
    with pytest.raises(InputError, match="expected a JSON list"):
        load_dataset(write(tmp_path, {"items": []}))
    (tmp_path / "broken.json").write_text("[{", encoding="utf-8")
    with pytest.raises(InputError, match="not valid JSON"):
        load_dataset(tmp_path / "broken.json")
    with pytest.raises(UserError, match="no such file"):
        load_dataset(tmp_path / "absent.json")


def test_cli_prints_a_message_not_a_traceback(tmp_path, capsys):
    path = write(tmp_path, [GOOD, {**GOOD, "task_type": "nope"}])
    assert main(["visualtrans", "stats", "--data", str(path)]) == 2
    err = capsys.readouterr().err
    assert "[1].task_type" in err and "Traceback" not in err


def test_ids_are_stable_and_depend_on_question_and_images():
    a = item_id("Q", ["x/1_start.jpg", "x/1_end.jpg"])
    assert a == item_id("Q", ("x/1_start.jpg", "x/1_end.jpg"))
    assert a.startswith("vt-") and len(a) == 19
    assert a != item_id("Q", ["x/1_end.jpg", "x/1_start.jpg"])
    assert a != item_id("Q2", ["x/1_start.jpg", "x/1_end.jpg"])


@pytest.mark.parametrize(
    "task,label,fmt",
    [
        ("count", "3", "count"),
        ("procedural_causal", "B", "choice"),
        ("spatial_global", "d", "choice"),
        ("spatial_fine_grained", "red block, blue block", "set"),
        ("spatial_fine_grained", "none", "set"),
        ("spatial_fine_grained", "E", "set"),
    ],
)
def test_answer_format(task, label, fmt):
    assert infer_answer_format(task, label) == fmt


def test_generated_set_summary_duplicates_and_images(tmp_path):
    data, images, items = make_visualtrans(tmp_path)
    ds = load_dataset(data)
    s = ds.summary()
    assert s["items"] == len(items) == 11 and s["unique_items"] == 10
    assert s["duplicate_groups"] == [[DUPLICATED, 10]]
    assert s["by_format"] == {"choice": 6, "count": 2, "set": 3}
    assert s["by_subtask"]["spatial_fine_grained"] == 4
    assert s["by_dimension"] == {"spatial": 5, "procedural": 4, "quantitative": 2}
    assert s["with_mask"] == 1
    assert any("duplicates" in w for w in s["warnings"])
    assert ds.missing_images(images) == []
    (images / items[3]["images"][1]).unlink()
    assert ds.missing_images(images) == [(3, items[3]["images"][1])]


def test_warnings_for_odd_but_loadable_items(tmp_path):
    odd = [
        {**GOOD, "label": "three"},
        {**GOOD, "scene": "juggling", "question": "Juggled?"},
        {**GOOD, "task_type": "procedural_interm", "label": "A", "question": "Which?"},
        {**GOOD, "question": "Same?", "label": "1"},
        {**GOOD, "question": "Same?", "label": "2"},
    ]
    s = load_dataset(write(tmp_path, odd)).summary()
    text = "\n".join(s["warnings"])
    assert "not a whole number" in text and "juggling" in text and "expected 6" in text
    assert "different labels" in text and s["conflicting_duplicates"] == [[3, 4]]


def test_stats_command(tmp_path, capsys):
    data, images, _ = make_visualtrans(tmp_path)
    assert main(["visualtrans", "stats", "--data", str(data), "--images", str(images)]) == 0
    out = capsys.readouterr().out
    assert "11 items, 10 distinct" in out and "missing images: 0" in out
    assert main(["visualtrans", "stats", "--data", str(data), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["by_format"]["set"] == 3
