"""`tvr clevrer compare` (two evaluations of the same questions, question by question and option
by option), `tvr clevrer stats` (a set's counts), and `tvr clevrer baseline KIND`; bad input
gives one line and exit 2."""

import json
import subprocess
import sys

import pytest

from tests.clevrer.data.samples import annotation_dict, question_file, random_question_file
from tvr.clevrer.data.questions import read_questions
from tvr.clevrer.data.submission import submission_from_questions, write_submission
from tvr.cli import main


@pytest.fixture
def evaluations(tmp_path, capsys):
    """Evaluation folders of the true answers, the random and the frequent baseline."""
    questions = tmp_path / "validation.json"
    questions.write_text(json.dumps(random_question_file(n_videos=6, seed=2)))
    truth = tmp_path / "truth.json"
    write_submission(truth, submission_from_questions(read_questions(questions)))
    assert main(["clevrer", "baseline", "random", "--data", str(questions), "--seed", "1",
                 "--out", str(tmp_path / "random.json")]) == 0  # fmt: skip
    out = {"questions": questions}
    for name in ("truth", "random"):
        out[name] = tmp_path / f"eval-{name}"
        assert main(["clevrer", "evaluate", "--data", str(questions), "--predictions",
                     str(tmp_path / f"{name}.json"), "--out", str(out[name])]) == 0  # fmt: skip
    capsys.readouterr()
    return out


def _compare(capsys, *args):
    capsys.readouterr()
    assert main(["clevrer", "compare", *map(str, args)]) == 0
    return capsys.readouterr().out


def test_evaluate_writes_one_detail_line_per_question(evaluations):
    lines = [
        json.loads(x) for x in (evaluations["random"] / "detail.jsonl").read_text().splitlines()
    ]
    assert len(lines) == 6 * 13
    summary = json.loads((evaluations["random"] / "summary.json").read_text())["score"]
    descriptive = [x for x in lines if x["type"] == "descriptive"]
    assert sum(x["correct"] for x in descriptive) == summary["descriptive"]["correct"]
    options = [o for x in lines if x["type"] == "explanatory" for o in x["options"]]
    assert sum(o["correct"] for o in options) == summary["explanatory"]["per_option"]["correct"]
    assert lines[0]["id"] == "0/0" and lines[0]["subtype"] and lines[0]["answered"]


def test_an_evaluation_against_itself_differs_by_nothing(evaluations, capsys):
    run = evaluations["random"]
    doc = json.loads(_compare(capsys, run, run / "detail.jsonl", "--json"))
    assert (doc["benchmark"], doc["questions"]) == ("clevrer", 78)
    assert [r["metric"] for r in doc["metrics"]] == [
        "descriptive",
        "explanatory.per_option", "explanatory.per_question",
        "predictive.per_option", "predictive.per_question",
        "counterfactual.per_option", "counterfactual.per_question",
        "multiple_choice.per_option", "multiple_choice.per_question",
    ]  # fmt: skip
    for r in doc["metrics"]:
        assert r["difference"] == 0 and r["p"] == 1.0 and r["only_a"] == r["only_b"] == 0


def test_the_true_answers_beat_the_random_baseline(evaluations, capsys, tmp_path):
    truth, random = evaluations["truth"], evaluations["random"]
    out = tmp_path / "cmp"
    printed = _compare(capsys, f"truth={truth}", random, "--out", out)
    doc = json.loads((out / "compare.json").read_text())
    assert (doc["a"]["label"], doc["b"]["label"]) == ("truth", "eval-random")
    rows = {r["metric"]: r for r in doc["metrics"]}
    summary = json.loads((random / "summary.json").read_text())["score"]
    assert rows["descriptive"]["b"] == summary["descriptive"]["accuracy"]
    assert rows["predictive.per_option"]["b"] == summary["predictive"]["per_option"]["accuracy"]
    assert rows["multiple_choice.per_question"]["n"] == 18
    for r in rows.values():
        assert r["a"] == 1.0 and r["difference"] > 0 and r["only_b"] == 0
    assert sum(r["samples"] for r in doc["descriptive_by_subtype"]) == rows["descriptive"]["n"]
    assert "| explanatory per option |" in printed
    assert (out / "compare.md").read_text().splitlines() == printed.splitlines()[:-1]
    back = json.loads(_compare(capsys, random, truth, "--json"))
    back_rows = {r["metric"]: r for r in back["metrics"]}
    assert back_rows["descriptive"]["difference"] == -rows["descriptive"]["difference"]
    assert back_rows["descriptive"]["p"] == rows["descriptive"]["p"]


@pytest.mark.parametrize(
    ("case", "words"),
    [
        ("other questions", "line 1, field 'id': question '99/0' is not in"),
        ("bad line", "line 2, field 'correct': expected true or false"),
        ("bad option", "line 11, field 'options[0].correct': expected true or false"),
        ("other type", "line 1, field 'type': question '0/0' is predictive here"),
    ],
)
def test_bad_input_is_one_line(evaluations, capsys, case, words):
    a, b = evaluations["truth"], evaluations["random"]
    detail = b / "detail.jsonl"
    lines = [json.loads(x) for x in detail.read_text().splitlines()]
    if case == "other questions":
        lines[0]["id"] = "99/0"
    elif case == "bad line":
        lines[1]["correct"] = "yes"
    elif case == "bad option":
        lines[10]["options"][0]["correct"] = 1
    else:
        lines[0]["type"] = "predictive"
        lines[0]["options"] = [{"choice_id": 0, "correct": True}]
    detail.write_text("".join(json.dumps(x) + "\n" for x in lines))
    capsys.readouterr()
    assert main(["clevrer", "compare", str(a), str(b)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("tvr clevrer compare: error: ") and words in err


def test_a_missing_evaluation_exits_2_without_a_traceback(tmp_path, evaluations):
    done = subprocess.run([sys.executable, "-m", "tvr", "clevrer", "compare",
                           str(evaluations["truth"]), str(tmp_path / "nowhere")],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr == f"tvr clevrer compare: error: {tmp_path / 'nowhere'}: no such file or folder\n"


def _set_folder(tmp_path):
    root = tmp_path / "set"
    (root / "questions").mkdir(parents=True)
    (root / "questions" / "validation.json").write_text(json.dumps(question_file(n_videos=2)))
    (root / "questions" / "test.json").write_text(json.dumps(question_file(1, answers=False)))
    for k in (10000, 10001):
        folder = root / "annotations" / "annotation_10000-11000"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"annotation_{k}.json").write_text(json.dumps(annotation_dict(k)))
    return root


def test_stats_of_a_set_folder(tmp_path, capsys):
    root = _set_folder(tmp_path)
    assert main(["clevrer", "stats", "--data", str(root), "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    # two answered videos and one test video, six questions each
    assert (stats["videos"], stats["questions"]) == (3, 18)
    assert [f["answers"] for f in stats["question_files"]] == [True, False]
    assert stats["types"]["descriptive"]["count"] == 9
    assert stats["types"]["descriptive"]["share"] == 0.5
    count = stats["descriptive_subtypes"]["count"]
    assert count["questions"] == 2 and count["answers"] == {"2": 1.0}
    # the test split has no programs (sub-type "other") and no answers; its exist question
    # carries a question_subtype
    other = stats["descriptive_subtypes"]["other"]
    assert other["questions"] == 2 and other["answers"] == {} and other["most_frequent"] is None
    assert stats["descriptive_subtypes"]["exist"]["answers"] == {"yes": 1.0}
    mc = stats["multiple_choice"]["explanatory"]
    assert (mc["questions"], mc["options"], mc["correct_share"]) == (3, 12, 0.5)
    assert stats["events"]["videos"] == 2
    assert stats["events"]["per_video"]["collision"]["mean"] == 2
    assert stats["video_files"] == 0
    assert main(["clevrer", "stats", "--data", str(root)]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"{root}: 3 videos with questions, 18 questions")
    assert "(without answers: the test split?)" in text
    assert "per annotated video (2 videos): objects 3.00 (min 3, max 3)" in text


def test_stats_of_a_question_file(tmp_path, capsys):
    questions = tmp_path / "train.json"
    questions.write_text(json.dumps(question_file(n_videos=4)))
    assert main(["clevrer", "stats", "--data", str(questions)]) == 0
    text = capsys.readouterr().out
    assert text.startswith(f"{questions}: 4 videos with questions, 24 questions")
    assert "query_color              4  blue 100.0%" in text
    assert "per annotated video" not in text


@pytest.mark.parametrize("case", ["missing", "empty folder", "not a question file"])
def test_stats_of_bad_data_is_one_line(tmp_path, case):
    bad = tmp_path / "data"
    if case == "empty folder":
        bad.mkdir()
    elif case == "not a question file":
        bad = tmp_path / "x.json"
        bad.write_text('{"a": 1}')
    done = subprocess.run([sys.executable, "-m", "tvr", "clevrer", "stats", "--data", str(bad)],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("tvr clevrer stats: error: ")


def test_baseline_kind_is_positional(tmp_path, capsys):
    questions = tmp_path / "q.json"
    questions.write_text(json.dumps(question_file(n_videos=2)))
    new = tmp_path / "new.json"
    assert main(["clevrer", "baseline", "random", "--data", str(questions), "--seed", "3",
                 "--out", str(new)]) == 0  # fmt: skip
    assert "--kind" not in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["clevrer", "baseline", "--data", str(questions), "--out", str(new)])
    assert "required: KIND" in capsys.readouterr().err
