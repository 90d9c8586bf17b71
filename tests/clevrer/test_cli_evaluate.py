"""`tvr clevrer evaluate` and `tvr clevrer baseline` end to end; bad files give one line, exit 2."""

import json
import subprocess
import sys

from tests.clevrer.data.samples import question_file
from tvr.clevrer.data.questions import read_questions
from tvr.clevrer.data.submission import submission_from_questions, write_submission
from tvr.cli import main


def _files(tmp_path):
    questions = tmp_path / "validation.json"
    questions.write_text(json.dumps(question_file(n_videos=3)))
    answers = tmp_path / "answers.json"
    write_submission(answers, submission_from_questions(read_questions(questions)))
    return questions, answers


def test_evaluate_prints_the_table_and_writes_the_summary(tmp_path, capsys):
    questions, answers = _files(tmp_path)
    out = tmp_path / "eval"
    code = main(["clevrer", "evaluate", "--data", str(questions), "--predictions",
                 str(answers), "--out", str(out)])  # fmt: skip
    assert code == 0
    text = capsys.readouterr().out
    lines = text.splitlines()
    ours = next(line for line in lines if line.startswith("ours: answers.json"))
    assert ours.split()[2:5] == ["100.0", "100.0", "/"]
    assert any(line.startswith("NS-DR ") and "88.1" in line and "Table 3" in line
               for line in lines)  # fmt: skip
    assert any(line.startswith("Q-type (random)") and "29.2" in line for line in lines)
    assert "descriptive sub-types (questions): count 100.0 (3), exist 100.0 (3)" in text
    summary = json.loads((out / "summary.json").read_text())
    assert summary["score"]["descriptive"]["accuracy"] == 1.0
    assert summary["score"]["counterfactual"]["per_question"]["total"] == 3
    assert summary["chance"]["predictive"]["per_question"] == 0.25
    assert {r["model"] for r in summary["published"]} >= {"MAC (V+)", "NS-DR", "VRDP"}
    assert (out / "summary.md").is_file()


def test_baselines_write_submissions_that_evaluate(tmp_path, capsys):
    questions, _ = _files(tmp_path)
    random_file = tmp_path / "random.json"
    assert main(["clevrer", "baseline", "--data", str(questions), "random",
                 "--seed", "4", "--out", str(random_file)]) == 0  # fmt: skip
    frequent_file = tmp_path / "frequent.json"
    assert main(["clevrer", "baseline", "--data", str(questions), "frequent",
                 "--train", str(questions), "--out", str(frequent_file)]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["clevrer", "evaluate", "--data", str(questions), "--predictions",
                 str(frequent_file), "--json"]) == 0  # fmt: skip
    summary = json.loads(capsys.readouterr().out)
    assert summary["score"]["descriptive"]["accuracy"] == 1.0  # one answer per sub-type here
    assert summary["score"]["predictive"]["per_question"]["accuracy"] == 0.0
    assert main(["clevrer", "baseline", "--data", str(questions), "frequent",
                 "--out", str(frequent_file)]) == 2  # fmt: skip
    assert "needs --train" in capsys.readouterr().err


def test_a_malformed_answer_file_gives_one_line_and_exit_2(tmp_path):
    questions, answers = _files(tmp_path)
    data = json.loads(answers.read_text())
    data[1]["questions"][4]["choices"][0]["answer"] = "yes"
    answers.write_text(json.dumps(data))
    run = subprocess.run(
        [sys.executable, "-m", "tvr", "clevrer", "evaluate", "--data", str(questions),
         "--predictions", str(answers)],
        capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert run.stderr.strip().splitlines() == [
        f"tvr clevrer evaluate: error: {answers}, field '[1].questions[4].choices[0].answer': unknown "
        "value 'yes' (expected one of: correct, error, wrong)"
    ]


def test_a_test_split_question_file_is_refused_clearly(tmp_path, capsys):
    questions = tmp_path / "test.json"
    questions.write_text(json.dumps(question_file(answers=False)))
    answers = tmp_path / "answers.json"
    answers.write_text("[]")
    code = main(["clevrer", "evaluate", "--data", str(questions), "--predictions",
                 str(answers)])  # fmt: skip
    assert code == 2
    assert "no answers (the test split?)" in capsys.readouterr().err


def _shift(videos, by):
    for v in videos:
        v["scene_index"] += by
        v["video_filename"] = f"video_{v['scene_index']:05d}.mp4"
    return videos


def test_answers_of_another_split_are_refused_naming_it(tmp_path, capsys):
    """Issue 42: answers that share no video with the question file scored 0.0 everywhere with
    exit 0; now one line names the split their videos are of (and the option that picks it)."""
    data = tmp_path / "set" / "questions"
    data.mkdir(parents=True)
    (data / "validation.json").write_text(json.dumps(question_file(n_videos=2)))
    train = _shift(question_file(n_videos=3), 20000)  # past the release's ranges: tvr's indices
    (data / "train.json").write_text(json.dumps(train))
    answers = tmp_path / "train_answers.json"
    write_submission(answers, submission_from_questions(read_questions(data / "train.json")))
    assert main(["clevrer", "evaluate", "--data", str(data.parent), "--split", "val",
                 "--predictions", str(answers)]) == 2  # fmt: skip
    err = capsys.readouterr().err.strip()
    assert err == (f"tvr clevrer evaluate: error: {answers}: none of its 3 ids is a val video "
                   f"(scene index) of {data / 'validation.json'}; 3 of them are train ids: "
                   "predictions for another split? (score them with --split train)")
    # a file of the release's test range, given the question file itself: named by the range
    test = _shift(question_file(n_videos=1), 5000)
    other = tmp_path / "t.json"
    other.write_text(json.dumps(test))
    write_submission(answers, submission_from_questions(read_questions(other)))
    assert main(["clevrer", "evaluate", "--data", str(data / "validation.json"),
                 "--predictions", str(answers)]) == 2  # fmt: skip
    assert "1 of them are test ids" in capsys.readouterr().err


def test_partial_answers_are_scored_and_counted_before_the_table(tmp_path, capsys):
    questions, answers = _files(tmp_path)
    data = json.loads(answers.read_text())
    data[0]["scene_index"] = 20000  # one video not in the question file: ignored, counted
    answers.write_text(json.dumps(data))
    assert main(["clevrer", "evaluate", "--data", str(questions), "--predictions",
                 str(answers)]) == 0  # fmt: skip
    lines = capsys.readouterr().out.splitlines()
    ignored = next(i for i, x in enumerate(lines) if x.startswith("ignored (not in the question"))
    missing = next(i for i, x in enumerate(lines) if x.startswith("missing (counted wrong): 1 videos"))
    ours = next(i for i, x in enumerate(lines) if x.startswith("ours: answers.json"))
    assert missing < ours and ignored < ours
