"""The samples and predictions files: round trips, candidate settings, and located errors."""

import json

import pytest

from tvr.core.errors import InputError, UserError
from tvr.tranco.data.formats import (
    Prediction,
    ReferenceSample,
    candidate_pools,
    read_predictions,
    read_samples,
    write_predictions,
    write_samples,
)


def lines(path, *records):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in records))
    return path


def test_samples_and_predictions_round_trip(tmp_path):
    samples = [ReferenceSample("s1", ("a", "b"), ("a", "b", "c")), ReferenceSample("s2", ("c",))]
    write_samples(tmp_path / "s.jsonl", samples)
    back = read_samples(tmp_path / "s.jsonl")
    assert [(s.id, s.clips, s.candidates, s.line) for s in back] == [
        ("s1", ("a", "b"), ("a", "b", "c"), 1), ("s2", ("c",), None, 2),
    ]  # fmt: skip
    assert write_predictions(tmp_path / "p.jsonl", [("s2", []), ("s1", ["b", "b"])]) == 2
    assert read_predictions(tmp_path / "p.jsonl", {"s1", "s2"}) == {
        "s2": Prediction("s2", (), 1), "s1": Prediction("s1", ("b", "b"), 2),
    }  # fmt: skip


def test_extra_fields_are_ignored(tmp_path):
    path = lines(tmp_path / "s.jsonl", {"id": "v", "clips": ["a"], "split": "test", "states": {}})
    assert read_samples(path)[0].clips == ("a",)


@pytest.mark.parametrize(
    ("record", "where", "message"),
    [
        ("{not json", "line 2", "not valid JSON"),
        ("[1, 2]", "line 2", "expected a JSON object"),
        ({"clips": ["a"]}, "line 2, field 'id'", "non-empty string, got nothing"),
        ({"id": 7, "clips": ["a"]}, "line 2, field 'id'", "got int 7"),
        ({"id": "s1", "clips": ["a"]}, "line 2, field 'id'", "also on line 1"),
        ({"id": "v"}, "line 2, field 'clips'", "expected a list of clip ids"),
        ({"id": "v", "clips": "a b"}, "line 2, field 'clips'", "got str"),
        ({"id": "v", "clips": []}, "line 2, field 'clips'", "at least one clip"),
        ({"id": "v", "clips": ["a", 3]}, "line 2, field 'clips[1]'", "got int 3"),
        ({"id": "v", "clips": ["a", "b", "a"]}, "line 2, field 'clips[2]'", "listed twice"),
        ({"id": "v", "clips": ["a"], "candidates": ["b"]}, "line 2, field 'candidates'",
         "reference clip 'a' is not a candidate"),
        ({"id": "v", "clips": ["a"], "candidates": ["a", "a"]},
         "line 2, field 'candidates[1]'", "listed twice"),
    ],
)  # fmt: skip
def test_a_bad_sample_line_is_located(tmp_path, record, where, message):
    path = lines(tmp_path / "s.jsonl", {"id": "s1", "clips": ["x"]}, record)
    with pytest.raises(InputError) as err:
        read_samples(path)
    assert str(err.value).startswith(f"{path}, {where}: ")
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("record", "where", "message"),
    [
        ({"id": "s9", "clips": []}, "line 2, field 'id'", "no sample 's9' in the samples file"),
        ({"id": "s1", "clips": []}, "line 2, field 'id'", "also predicted on line 1"),
        ({"id": "s2"}, "line 2, field 'clips'", "expected a list of clip ids, got nothing"),
        ({"id": "s2", "clips": [""]}, "line 2, field 'clips[0]'", "non-empty string"),
    ],
)
def test_a_bad_prediction_line_is_located(tmp_path, record, where, message):
    path = lines(tmp_path / "p.jsonl", {"id": "s1", "clips": ["a"]}, record)
    with pytest.raises(InputError) as err:
        read_predictions(path, {"s1", "s2"})
    assert str(err.value).startswith(f"{path}, {where}: ")
    assert message in str(err.value)


def test_empty_and_missing_files_say_so(tmp_path):
    with pytest.raises(UserError, match="no sample in the file"):
        read_samples(lines(tmp_path / "s.jsonl"))
    with pytest.raises(UserError, match="no prediction in the file"):
        read_predictions(lines(tmp_path / "p.jsonl"))
    with pytest.raises(UserError, match="no such file"):
        read_samples(tmp_path / "absent.jsonl")


def test_candidate_settings():
    listed = [
        ReferenceSample("s1", ("a",), ("a", "b"), 1),
        ReferenceSample("s2", ("c",), ("c",), 2),
    ]
    assert candidate_pools(listed) == ("tiny", [("a", "b"), ("c",)])
    setting, pools = candidate_pools(listed, "full")
    assert setting == "full" and pools == [("a", "b", "c")] * 2
    mixed = [listed[0], ReferenceSample("s3", ("d", "e"), None, 3)]
    assert candidate_pools(mixed) == ("full", [("a", "b", "d", "e")] * 2)
    with pytest.raises(UserError, match=r"sample 's3' \(line 3\) lists no candidates"):
        candidate_pools(mixed, "tiny")
