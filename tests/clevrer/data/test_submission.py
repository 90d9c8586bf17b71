"""The challenge's answer file: round trip, the oracle's answers, faults."""

import json

import pytest

from tests.clevrer.data.samples import question_file
from tvr.clevrer.data.questions import VideoQuestions
from tvr.clevrer.data.submission import (
    SubmittedQuestion,
    SubmittedVideo,
    read_submission,
    submission_from_questions,
    write_submission,
)
from tvr.core.errors import InputError, UserError


def test_round_trip_keeps_the_content(tmp_path):
    videos = [
        SubmittedVideo(15000, (SubmittedQuestion(0, answer="3"),
                               SubmittedQuestion(7, choices={0: "correct", 1: "wrong"}))),
        SubmittedVideo(15001, ()),
    ]  # fmt: skip
    path = tmp_path / "answers.json"
    assert write_submission(path, videos) == 2
    assert json.loads(path.read_text()) == [
        {"scene_index": 15000, "questions": [
            {"question_id": 0, "answer": "3"},
            {"question_id": 7, "choices": [{"choice_id": 0, "answer": "correct"},
                                           {"choice_id": 1, "answer": "wrong"}]}]},
        {"scene_index": 15001, "questions": []},
    ]  # fmt: skip
    assert read_submission(path) == videos


def test_the_oracle_answers_are_the_question_files_own():
    videos = [VideoQuestions.from_json(v) for v in question_file()]
    sub = submission_from_questions(videos)
    assert sub[0].questions[0] == SubmittedQuestion(0, answer="2")
    assert sub[0].questions[4] == SubmittedQuestion(4, choices={0: "wrong", 1: "correct"})
    no_answers = [VideoQuestions.from_json(v) for v in question_file(answers=False)]
    with pytest.raises(UserError, match="no answer"):
        submission_from_questions(no_answers)


def test_the_executors_error_token_is_read_for_a_choice(tmp_path):
    path = tmp_path / "nsdr_pred.json"
    path.write_text(json.dumps([{"scene_index": 1, "questions": [
        {"question_id": 0, "choices": [{"choice_id": 0, "answer": "error"}]}]}]))  # fmt: skip
    assert read_submission(path)[0].questions[0].choices == {0: "error"}


CASES = [
    ([{"scene_index": 1, "questions": [{"question_id": 0, "answer": "2", "choices": []}]}],
     "[0].questions[0]", "either 'answer'"),
    ([{"scene_index": 1, "questions": [{"question_id": 0}]}], "[0].questions[0]", "either"),
    ([{"scene_index": 1, "questions": [{"question_id": 0, "answer": 2}]}],
     "[0].questions[0].answer", "expected a string"),
    ([{"scene_index": 1, "questions": [
        {"question_id": 0, "choices": [{"choice_id": 0, "answer": "maybe"}]}]}],
     "[0].questions[0].choices[0].answer", "unknown value 'maybe'"),
    ([{"scene_index": 1, "questions": [
        {"question_id": 0, "choices": [{"choice_id": 0, "answer": "wrong"},
                                       {"choice_id": 0, "answer": "wrong"}]}]}],
     "[0].questions[0].choices[1].choice_id", "answered twice"),
    ([{"scene_index": 1, "questions": [{"question_id": 0, "answer": "no"},
                                       {"question_id": 0, "answer": "no"}]}],
     "[0].questions[1].question_id", "answered twice"),
    ([{"scene_index": 1, "questions": []}, {"scene_index": 1, "questions": []}],
     "[1].scene_index", "also entry [0]"),
    ([{"scene_index": 1}], "[0].questions", "missing"),
    ([{"scene_index": -1, "questions": []}], "[0].scene_index", ">= 0"),
]  # fmt: skip


@pytest.mark.parametrize("data,field,message", CASES)
def test_a_fault_names_the_file_and_the_field(tmp_path, data, field, message):
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InputError) as err:
        read_submission(path)
    assert err.value.field == field and message in err.value.reason
    assert str(err.value).startswith(f"{path}, field '{field}': ")
