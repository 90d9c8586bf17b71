"""Scoring on hand-made cases (per option vs per question, missing answers), and the language-only
answerers against their expected levels."""

import numpy as np
import pytest

from tests.clevrer.data.samples import question_file, random_question_file
from tvr.clevrer.data.questions import VideoQuestions
from tvr.clevrer.data.submission import (
    SubmittedQuestion,
    SubmittedVideo,
    submission_from_questions,
)
from tvr.clevrer.eval.baselines import chance_level, frequent_answers, random_answers
from tvr.clevrer.eval.score import score
from tvr.core.errors import UserError


def _questions(data=None):
    return [VideoQuestions.from_json(v) for v in (data or question_file())]


def test_the_oracle_scores_everything_right():
    qs = _questions()
    s = score(qs, submission_from_questions(qs)).to_json()
    assert s["videos"] == 2 and s["questions"] == 12
    assert s["descriptive"] == {"correct": 6, "total": 6, "accuracy": 1.0,
                                "subtypes": {"count": {"correct": 2, "total": 2, "accuracy": 1.0},
                                             "exist": {"correct": 2, "total": 2, "accuracy": 1.0},
                                             "query_color": {"correct": 2, "total": 2,
                                                             "accuracy": 1.0}}}  # fmt: skip
    for t, n in (("explanatory", 4), ("predictive", 2), ("counterfactual", 3)):
        assert s[t]["per_option"] == {"correct": 2 * n, "total": 2 * n, "accuracy": 1.0}
        assert s[t]["per_question"] == {"correct": 2, "total": 2, "accuracy": 1.0}
    assert s["missing"] == {"videos": 0, "questions": 0, "options": 0}


def _answers(scene, **by_qid):
    out = []
    for qid, a in sorted(by_qid.items()):
        qid = int(qid[1:])
        out.append(SubmittedQuestion(qid, answer=a) if isinstance(a, str) else
                   SubmittedQuestion(qid, choices=a))  # fmt: skip
    return SubmittedVideo(scene, tuple(out))


def test_per_option_and_per_question_differ():
    qs = _questions(question_file(n_videos=1))
    # explanatory gold: correct, wrong, correct, wrong; predictive: wrong, correct;
    # counterfactual: correct, wrong, wrong
    sub = [_answers(10000, q0="2", q1="no", q2="blue",
                    q3={0: "correct", 1: "wrong", 2: "correct", 3: "correct"},  # 3 of 4
                    q4={0: "wrong", 1: "correct"},  # all right
                    q5={0: "wrong", 1: "correct", 2: "correct"})]  # none right  # fmt: skip
    s = score(qs, sub).to_json()
    assert s["descriptive"]["correct"] == 2 and s["descriptive"]["total"] == 3
    assert s["descriptive"]["subtypes"]["exist"]["accuracy"] == 0.0
    assert s["explanatory"]["per_option"]["accuracy"] == 0.75
    assert s["explanatory"]["per_question"]["accuracy"] == 0.0
    assert s["predictive"]["per_option"]["accuracy"] == 1.0
    assert s["predictive"]["per_question"]["accuracy"] == 1.0
    assert s["counterfactual"]["per_option"]["accuracy"] == 0.0
    assert s["multiple_choice"]["per_option"] == {"correct": 5, "total": 9, "accuracy": 5 / 9}
    assert s["multiple_choice"]["per_question"] == {"correct": 1, "total": 3, "accuracy": 1 / 3}


def test_missing_and_misplaced_answers_count_wrong_and_are_counted():
    qs = _questions()
    sub = [
        # scene 10000: q0 of the wrong kind, q3 lacks option 3, q4 answered "error", q5 absent,
        # q1/q2 right; an answer to an unknown question 99 and an unknown choice 7
        _answers(10000, q0={0: "correct"}, q1="yes", q2="blue",
                 q3={0: "correct", 1: "wrong", 2: "correct", 7: "wrong"},
                 q4={0: "error", 1: "correct"}, q99="1"),
        _answers(12345, q0="1"),  # not in the question file
    ]  # scene 10001 missing  # fmt: skip
    s = score(qs, sub).to_json()
    assert s["missing"] == {"videos": 1, "questions": 1 + 6, "options": 1}
    assert s["wrong_kind"] == 1 and s["error_options"] == 1
    assert s["ignored"] == {"videos": 1, "questions": 2, "options": 1}
    assert s["descriptive"]["correct"] == 2 and s["descriptive"]["total"] == 6
    assert s["explanatory"]["per_option"]["correct"] == 3  # option 3 missing
    assert s["explanatory"]["per_question"]["correct"] == 0
    assert s["predictive"]["per_option"]["correct"] == 1
    assert s["counterfactual"]["per_option"] == {"correct": 0, "total": 6, "accuracy": 0.0}


def test_a_question_file_without_answers_cannot_be_scored():
    with pytest.raises(UserError, match="no answers"):
        score(_questions(question_file(answers=False)), [])


def test_the_random_answerer_scores_at_chance_level():
    qs = _questions(random_question_file(1500, seed=3))
    expected = chance_level(qs)
    # 15000 descriptive questions, uniform over sub-types: mean of 1/6, 1/2, 1/8, 1/3, 1/2
    assert expected["descriptive"] == pytest.approx(np.mean([1 / 6, 1 / 2, 1 / 8, 1 / 3, 1 / 2]),
                                                    abs=0.01)  # fmt: skip
    assert expected["predictive"]["per_question"] == 0.25
    s = score(qs, random_answers(qs, seed=11)).to_json()
    n_desc = s["descriptive"]["total"]
    sd = np.sqrt(0.25 / n_desc)  # the standard error is at most this
    assert abs(s["descriptive"]["accuracy"] - expected["descriptive"]) < 4 * sd
    for t in ("explanatory", "predictive", "counterfactual"):
        opt = s[t]["per_option"]
        assert abs(opt["accuracy"] - 0.5) < 4 * np.sqrt(0.25 / opt["total"])
        per_q = s[t]["per_question"]
        assert abs(per_q["accuracy"] - expected[t]["per_question"]) < 4 * np.sqrt(
            0.25 / per_q["total"]
        )
    again = random_answers(qs, seed=11)
    assert again == random_answers(qs, seed=11) and again != random_answers(qs, seed=12)


def test_the_frequent_answerer_gives_each_types_most_frequent_answer():
    train = _questions(question_file(n_videos=3))
    qs = _questions(question_file(n_videos=1))
    sub = frequent_answers(train, qs)
    answers = {q.question_id: q for q in sub[0].questions}
    assert answers[0].answer == "2" and answers[1].answer == "yes"
    # explanatory labels: correct x2, wrong x2 per question -> tie broken by name: "correct"
    assert set(answers[3].choices.values()) == {"correct"}
    # counterfactual: wrong x2, correct x1 -> "wrong"; predictive: tie -> "correct"
    assert set(answers[5].choices.values()) == {"wrong"}
    s = score(qs, sub).to_json()
    assert s["predictive"]["per_question"]["accuracy"] == 0.0  # one right, one wrong label
    assert s["descriptive"]["accuracy"] == 1.0


def test_a_question_without_choices_is_refused_not_scored_right():
    """Scoring "right unless a choice is wrong" would count a question with no choices as right;
    the scorer refuses such a question, naming it (the reader refuses the file before)."""
    import dataclasses

    qs = _questions()
    video = qs[0]
    index = next(i for i, q in enumerate(video.questions) if q.choices)
    emptied = dataclasses.replace(video.questions[index], choices=())
    broken = [dataclasses.replace(
        video, questions=(*video.questions[:index], emptied, *video.questions[index + 1:])),
        *qs[1:]]
    with pytest.raises(UserError, match=f"question {emptied.question_id} of scene "
                                        f"{video.scene_index} has no choices"):
        score(broken, submission_from_questions(qs))
