"""COIN.json reader: typed records from a valid file; one clear line for each kind of mistake."""

from __future__ import annotations

import copy
import json

import pytest

from tvr.core.errors import InputError, UserError
from tvr.video.coin import read_coin

DATABASE = {
    "abcDEF12345": {
        "duration": 92.5,
        "class": "MakeSandwich",
        "video_url": "https://www.youtube.com/embed/abcDEF12345",
        "start": 10.0,
        "end": 80.0,
        "subset": "training",
        "recipe_type": 7,
        "annotation": [
            {"id": "101", "segment": [10.0, 20.5], "label": "cut bread"},
            {"id": "102", "segment": [20.5, 40.0], "label": "spread butter"},
            {"id": "103", "segment": [45.0, 80.0], "label": "put ham on bread"},
        ],
    },
    "zz_-0": {
        "class": "ChangeTire",
        "subset": "testing",
        "recipe_type": "12",
        "duration": None,
        "annotation": [
            {"id": 5, "segment": [3, 9], "label": "loosen nuts "},
            {"id": 6, "segment": [8, 12], "label": "jack up the car"},
        ],
    },
}


def _write(tmp_path, data, name="COIN.json"):
    path = tmp_path / name
    path.write_text(json.dumps(data))
    return path


def test_reads_typed_records_in_file_order(tmp_path):
    videos = read_coin(_write(tmp_path, {"database": DATABASE, "version": "1.0"}))
    assert [v.video_id for v in videos] == ["abcDEF12345", "zz_-0"]
    a, b = videos
    assert (a.source, a.task, a.task_id, a.subset, a.duration) == (
        "coin",
        "MakeSandwich",
        "7",
        "training",
        92.5,
    )
    assert a.url.endswith("abcDEF12345") and a.n_steps == 3
    assert [(s.label, s.start, s.end, s.step_id) for s in a.steps] == [
        ("cut bread", 10.0, 20.5, "101"),
        ("spread butter", 20.5, 40.0, "102"),
        ("put ham on bread", 45.0, 80.0, "103"),
    ]
    assert a.steps[0].duration == 10.5
    assert not a.has_overlap() and a.in_time_order()  # touching segments do not overlap
    assert (b.task_id, b.duration, b.url, b.steps[0].label, b.steps[0].step_id) == (
        "12",
        None,
        None,
        "loosen nuts",
        "5",
    )
    assert b.has_overlap()


def _broken(change):
    data = {"database": copy.deepcopy(DATABASE)}
    change(data["database"])
    return data


def _set(key, value, step=None):
    def change(db):
        target = db["abcDEF12345"] if step is None else db["abcDEF12345"]["annotation"][step]
        if value is KeyError:
            del target[key]
        else:
            target[key] = value

    return change


CASES = [
    (
        _set("segment", [9.0, 4.0], step=2),
        'database["abcDEF12345"].annotation[2].segment',
        "0 <= start <= end, got [9.0,4.0]",
    ),
    (_set("segment", [-1, 4.0], step=0), ".annotation[0].segment", "0 <= start <= end"),
    (_set("segment", [1.0], step=1), ".annotation[1].segment", "got [1.0]"),
    (_set("segment", ["1", 2], step=1), ".annotation[1].segment", 'expected a number, got "1"'),
    (_set("segment", KeyError, step=1), ".annotation[1].segment", "got nothing"),
    (_set("label", "  ", step=0), ".annotation[0].label", "non-empty string"),
    (_set("id", None, step=0), ".annotation[0].id", "expected a step id, got null"),
    (_set("annotation", {"a": 1}), '"abcDEF12345"].annotation', "expected a list of steps"),
    (_set("annotation", KeyError), '"abcDEF12345"].annotation', "got nothing"),
    (
        _set("subset", "train"),
        ".subset",
        'expected one of training, validation, testing, got "train"',
    ),
    (_set("class", 3), ".class", "expected a non-empty string, got 3"),
    (_set("recipe_type", True), ".recipe_type", "expected a task id"),
    (_set("duration", -2), ".duration", "expected a number >= 0"),
    (_set("duration", "long"), ".duration", "expected a number"),
    (_set("video_url", 5), ".video_url", "expected a string"),
    (lambda db: db.__setitem__("bad", [1, 2]), 'database["bad"]', "expected an object"),
    (
        _set("segment", [1, float("inf")], step=0),
        None,
        "not valid JSON",
    ),  # json.dumps writes Infinity
]


@pytest.mark.parametrize(("change", "field", "message"), CASES)
def test_each_mistake_gives_one_line_naming_file_and_field(tmp_path, change, field, message):
    path = _write(tmp_path, _broken(change))
    with pytest.raises(InputError) as caught:
        read_coin(path)
    text = str(caught.value)
    assert text.startswith(f"{path}") and "\n" not in text
    assert message in text
    if field is not None:
        assert field in caught.value.field
        assert f"field '{caught.value.field}'" in text


def test_file_level_mistakes(tmp_path):
    with pytest.raises(UserError, match="no such file"):
        read_coin(tmp_path / "none.json")
    bad = tmp_path / "bad.json"
    bad.write_text('{"database": {\n  "a": x}}')
    with pytest.raises(InputError, match=r"bad\.json, line 2: not valid JSON"):
        read_coin(bad)
    with pytest.raises(InputError, match="field 'database'"):
        read_coin(_write(tmp_path, {"videos": {}}))
    with pytest.raises(InputError, match="field 'database'"):
        read_coin(_write(tmp_path, [1, 2]))
