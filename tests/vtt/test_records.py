"""The released-records loader: valid files load, every malformed field is named with its line,
state images are checked, and the split statistics count what Table 1 counts."""

import json

import pytest

from tests.vtt.samples import record, sample_id, small_records, write_lines
from tvr.cli import main
from tvr.core.errors import InputError, UserError
from tvr.vtt.data.records import check_states, read_records
from tvr.vtt.data.stats import group_statistics, split_statistics, stats_lines


def test_valid_records_load(tmp_path):
    records = read_records(write_lines(tmp_path / "vtt.jsonl", small_records()))
    assert [r.n for r in records] == [3, 2, 1, 2]
    first = records[0]
    assert first.labels == ["put steak on grill", "flip steak", "remove steak"]
    assert first.steps[1].segment == (10.0, 15.0)
    assert first.state_names() == [f"{sample_id(0)}_4_{i}.jpg" for i in range(4)]
    assert first.line == 1 and records[3].line == 4


def _edit(change):
    data = record(0, ["put steak on grill", "flip steak"])
    change(data)
    return data


@pytest.mark.parametrize(
    ("change", "field", "words"),
    [
        (lambda d: d.pop("topic"), "topic", "missing"),
        (lambda d: d.update(id="ABC"), "id", "16 lowercase hexadecimal"),
        (lambda d: d.update(ori="youtube"), "ori", "coin, cross"),
        (lambda d: d.update(split="dev"), "split", "train, val, test"),
        (lambda d: d.update(duration=-3), "duration", ">= 0"),
        (lambda d: d.update(duration=True), "duration", "seconds"),
        (lambda d: d.update(category=""), "category", "non-empty"),
        (lambda d: d.update(annotation=[]), "annotation", "non-empty list"),
        (lambda d: d["annotation"][1].update(clip_id="x"), "annotation[1].clip_id", "id_N_i"),
        (lambda d: d["annotation"][0].update(segment=[5, 1]), "annotation[0].segment",
         "start <= end"),
        (lambda d: d["annotation"][1].update(segment=[3, 20]), "annotation[1].segment",
         "before step 0 ends"),
        (lambda d: d["annotation"][1].update(label="  "), "annotation[1].label", "non-empty"),
        (lambda d: d["annotation"][0].pop("label"), "annotation[0].label", "missing"),
        (lambda d: d.update(frames={"other_2_0": {}}), "frames['other_2_0']", "not a clip id"),
    ],
)  # fmt: skip
def test_each_bad_field_is_named_with_its_line(tmp_path, change, field, words):
    path = write_lines(tmp_path / "vtt.jsonl", [record(5, ["a b"]), _edit(change)])
    with pytest.raises(InputError) as err:
        read_records(path)
    assert (err.value.line, err.value.field) == (2, field)
    assert words in err.value.reason
    assert str(err.value).startswith(f"{path}, line 2, field '{field}': ")


def test_more_than_twelve_steps_duplicates_and_bad_json(tmp_path):
    path = write_lines(tmp_path / "long.jsonl", [record(0, [f"step {i}" for i in range(13)])])
    with pytest.raises(InputError, match="13 steps; VTT samples have 1 to 12"):
        read_records(path)
    path = write_lines(tmp_path / "dup.jsonl", [record(0, ["a"]), record(1, ["b"]), record(0, ["c"])])
    with pytest.raises(InputError, match=r"line 3, field 'id': .* also the id of line 1"):
        read_records(path)
    path = tmp_path / "broken.jsonl"
    path.write_text(json.dumps(record(0, ["a"])) + "\n{not json\n")
    with pytest.raises(InputError, match="line 2: not valid JSON"):
        read_records(path)
    (tmp_path / "empty.jsonl").write_text("\n")
    with pytest.raises(UserError, match="no records"):
        read_records(tmp_path / "empty.jsonl")


def test_state_images_are_checked(tmp_path):
    records = read_records(write_lines(tmp_path / "vtt.jsonl", small_records()))
    states = tmp_path / "states"
    states.mkdir()
    names = [name for r in records for name in r.state_names()]
    for name in names:
        (states / name).write_bytes(b"\xff\xd8 not really a jpeg")
    assert check_states(records, states, tmp_path / "vtt.jsonl") == len(names) == 12
    (states / names[5]).unlink()  # the second state of the second record (line 2)
    (states / names[-1]).write_bytes(b"")
    with pytest.raises(InputError) as err:
        check_states(records, states, tmp_path / "vtt.jsonl")
    assert err.value.line == 2
    assert f"{names[5]}: missing; 2 of 12 state images are missing or broken" in str(err.value)


def test_verify_decodes_the_images(tmp_path):
    pil = pytest.importorskip("PIL.Image")
    records = read_records(write_lines(tmp_path / "vtt.jsonl", [record(0, ["a"])]))
    first, second = records[0].state_names()
    pil.new("RGB", (8, 8), "red").save(tmp_path / first)
    (tmp_path / second).write_bytes(b"\xff\xd8 not really a jpeg")
    assert check_states(records, tmp_path, "vtt.jsonl") == 2
    with pytest.raises(InputError, match=f"{second}: not a readable image"):
        check_states(records, tmp_path, "vtt.jsonl", verify=True)


def test_statistics_count_what_table_1_counts(tmp_path):
    records = read_records(write_lines(tmp_path / "vtt.jsonl", small_records()))
    assert group_statistics(records) == {
        "categories": 3, "topics": 3, "samples": 4, "states": 12, "transformations": 8,
        "unique_transformations": 7,
    }  # fmt: skip
    stats = split_statistics(records)
    assert stats["ours"]["CrossTask"]["samples"] == 1
    assert stats["ours"]["test"]["transformations"] == 6
    assert stats["ours"]["val"]["samples"] == 0
    assert stats["transformations_per_sample"] == {"1": 1, "2": 2, "3": 1}
    assert stats["mean_words_per_description"] == pytest.approx(19 / 8)
    text = "\n".join(stats_lines(stats))
    assert "10,759" in text and "55,482" in text and "Table 1" in text


def test_stats_command(tmp_path, capsys):
    path = write_lines(tmp_path / "vtt.jsonl", small_records())
    assert main(["vtt", "stats", "--data", str(path)]) == 0
    out = capsys.readouterr().out
    assert "4 records, valid" in out
    assert any(line.startswith("samples") and "3 (1,436)" in line for line in out.splitlines())
    (tmp_path / "states").mkdir()
    assert main(["vtt", "stats", "--data", str(path), "--images", str(tmp_path / "states")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"tvr vtt stats: error: {path}, line 1: state image ")
    assert "12 of 12 state images" in err and "\n" not in err
