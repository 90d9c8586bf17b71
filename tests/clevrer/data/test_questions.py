"""Question files: round trip (unknown fields kept), the test split without answers, faults."""

import copy
import json

import pytest

from tests.clevrer.data.samples import question_file
from tvr.clevrer.data.questions import (
    VideoQuestions,
    has_answers,
    read_questions,
    write_questions,
)
from tvr.core.errors import InputError


def test_round_trip_keeps_the_content(tmp_path):
    data = question_file()
    path = tmp_path / "validation.json"
    assert write_questions(path, data) == 2  # dicts in the released layout are checked, written
    assert json.loads(path.read_text()) == data
    videos = read_questions(path)
    assert [v.scene_index for v in videos] == [10000, 10001]
    q = videos[0].questions
    assert q[0].answer == "2" and q[0].subtype == "count"
    assert q[1].extra == {"question_subtype": "exist"} and q[1].subtype == "exist"
    assert q[3].choices[2].answer == "correct" and q[3].program == ("events", "filter_collision",
                                                                     "unique")  # fmt: skip
    assert has_answers(videos)
    write_questions(tmp_path / "again.json", videos)
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()


def test_the_test_split_has_no_programs_and_no_answers(tmp_path):
    path = tmp_path / "test.json"
    path.write_text(json.dumps(question_file(answers=False)))
    videos = read_questions(path)
    assert videos[0].questions[0].answer is None and videos[0].questions[0].program is None
    assert videos[0].questions[3].choices[0].answer is None
    assert not has_answers(videos)
    write_questions(tmp_path / "again.json", videos)
    assert json.loads((tmp_path / "again.json").read_text()) == question_file(answers=False)


CASES = [
    (lambda d: d[0]["questions"][3].update(answer="yes"), "[0].questions[3].answer",
     "answers per choice"),
    (lambda d: d[0]["questions"][3].pop("choices"), "[0].questions[3].choices", "missing"),
    # an empty list would score as right where "right unless a choice is wrong" is the rule
    (lambda d: d[0]["questions"][3].update(choices=[]), "[0].questions[3].choices",
     "question 3 of scene 10000 has no choices"),
    (lambda d: d[0]["questions"][0].update(choices=[]), "[0].questions[0].choices",
     "not choices"),
    (lambda d: d[1]["questions"][4]["choices"][1].update(answer="yes"),
     "[1].questions[4].choices[1].answer", "unknown value 'yes'"),
    (lambda d: d[1]["questions"][4]["choices"][1].update(choice_id=0),
     "[1].questions[4].choices[1].choice_id", "appears twice"),
    (lambda d: d[1]["questions"][2].update(question_id=1), "[1].questions[2].question_id",
     "appears twice"),
    (lambda d: d[0]["questions"][2].update(question_type="causal"),
     "[0].questions[2].question_type", "unknown value 'causal'"),
    (lambda d: d[0]["questions"][2].update(program=["objects", 3]),
     "[0].questions[2].program[1]", "expected a string"),
    (lambda d: d[0]["questions"][2].update(answer=2), "[0].questions[2].answer",
     "expected a string, got a number"),
    (lambda d: d[1].update(scene_index=10000), "[1].scene_index", "also entry [0]"),
    (lambda d: d[1].pop("questions"), "[1].questions", "missing"),
]


@pytest.mark.parametrize("change,field,message", CASES)
def test_a_fault_names_the_file_and_the_field(tmp_path, change, field, message):
    data = copy.deepcopy(question_file())
    change(data)
    path = tmp_path / "train.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as err:
        read_questions(path)
    assert err.value.field == field and message in err.value.reason
    assert str(err.value).startswith(f"{path}, field '{field}': ")


def test_the_writer_checks_dicts_before_writing(tmp_path):
    data = question_file()
    data[0]["questions"][0]["question_type"] = "other"
    with pytest.raises(InputError, match=r"\[0\].questions\[0\].question_type"):
        write_questions(tmp_path / "q.json", data)
    assert not (tmp_path / "q.json").exists()


def test_a_file_that_is_not_a_list_is_refused(tmp_path):
    path = tmp_path / "q.json"
    path.write_text('{"questions": []}')
    with pytest.raises(InputError, match="expected a list, got an object"):
        read_questions(path)


def test_subtype_falls_back_to_the_program():
    v = VideoQuestions.from_json(question_file()[0])
    assert [q.subtype for q in v.questions[:3]] == ["count", "exist", "query_color"]
