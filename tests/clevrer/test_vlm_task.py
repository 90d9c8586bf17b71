"""The CLEVRER task of `tvr vlm`: reading answers and per-choice verdicts from replies, the items
(a question each, the video as evenly spaced frames), and the whole path against a local scripted
server: run, export, `tvr clevrer evaluate`."""

import base64
import io
import json

import pytest

from tests.vlm.chat_server import ChatServer
from tvr.clevrer.data.questions import read_questions
from tvr.clevrer.vlm_task import (
    ClevrerTask,
    frame_indices,
    parse_choices,
    parse_descriptive,
)
from tvr.cli import main
from tvr.core.errors import UserError
from tvr.vlm.images import image_ref_data_url
from tvr.vlm.tasks import task_names
from tvr.vlm.templates import load_template


@pytest.fixture(scope="module")
def tiny_set(tmp_path_factory):
    """Two rendered videos (raster): video 0 in train, video 1 in test."""
    pytest.importorskip("pybullet")
    pytest.importorskip("av")
    from tvr.clevrer.generate.config import GenerateConfig
    from tvr.clevrer.generate.job import generate

    out = tmp_path_factory.mktemp("clevrer-vlm") / "set"
    generate(GenerateConfig(num=2, seed=0, shard_size=2).validate(), out, progress=False)
    return out


@pytest.mark.parametrize(
    ("reply", "subtype", "answer"),
    [
        ("<think>I count them.</think><answer>2</answer>", "count", "2"),
        ("<answer> Two. </answer>", "count", "2"),
        ("<answer>none</answer>", "count", "0"),
        ("<answer>Yes</answer>", "exist", "yes"),
        ("<answer>grey</answer>", "query_color", "gray"),
        ('```json\n{"answer": "metallic"}\n```', "query_material", "metal"),
        ('<answer>"Sphere"</answer>', "query_shape", "sphere"),
        ("cube", "query_shape", "cube"),
        ("<think>hmm</think>\nThe objects move.\nAnswer: cyan", "query_color", "cyan"),
        ("<answer>red</answer>", "other", "red"),  # no program: any sub-type's answer
        ("<answer>3</answer>", "other", "3"),
    ],
)
def test_descriptive_answers_are_read(reply, subtype, answer):
    assert parse_descriptive(reply, subtype).answer == answer


@pytest.mark.parametrize(
    ("reply", "subtype", "reason"),
    [
        ("<answer>red</answer>", "count", "'red' is not a count"),
        ("<answer>purple</answer>", "query_shape", "'purple' is not a shape answer"),
        ("<answer>maybe</answer>", "exist", "'maybe' is not a exist answer"),
        ("There are two of them, I think.", "count", "no one-word answer"),
        ("<answer>the red one</answer>", "query_color", "no one-word answer"),
        ("", "count", "no one-word answer"),
    ],
)
def test_unreadable_descriptive_replies_say_why(reply, subtype, reason):
    parsed = parse_descriptive(reply, subtype)
    assert not parsed.ok and reason in parsed.reason


@pytest.mark.parametrize(
    "reply",
    [
        '<answer>{"1": "correct", "2": "wrong", "3": "correct"}</answer>',
        '<think>{"1": "wrong"}</think><answer>{"1": "Correct", "2": "incorrect", "3": true}</answer>',
        '```json\n{"choice 1": "correct", "choice 2": "wrong", "choice 3": "correct"}\n```',
        '<answer>["correct", "wrong", "correct"]</answer>',
        '<answer>{"correct": [1, 3]}</answer>',
        '<answer>{"choices": {"1": "correct", "2": "wrong", "3": "correct"}}</answer>',
        "<answer>\n1: correct\n2: wrong\n3. correct\n</answer>",
        "Option 1) correct\nOption 2) wrong\nOption 3) correct",
    ],
)
def test_choice_verdicts_are_read(reply):
    assert parse_choices(reply, 3).answer == {1: "correct", 2: "wrong", 3: "correct"}


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ('<answer>{"1": "correct", "2": "wrong"}</answer>', "no verdict for choice 3"),
        (
            '<answer>{"1": "correct", "2": "wrong", "3": "wrong", "4": "wrong"}</answer>',
            "choice 4 is not among 1..3",
        ),
        ("<answer>1 and 3</answer>", "no verdict"),
        ('<answer>{"1": "maybe", "2": "wrong", "3": "wrong"}</answer>', "no verdict"),
        ("I am not sure about any of them.", "no verdict"),
        ("", "no verdict"),
    ],
)
def test_unreadable_choice_replies_say_why(reply, reason):
    parsed = parse_choices(reply, 3)
    assert not parsed.ok and reason in parsed.reason


def test_frames_are_evenly_spaced_first_to_last():
    assert frame_indices(128, 8) == [0, 18, 36, 54, 73, 91, 109, 127]
    assert frame_indices(128, 1) == [63]
    assert frame_indices(3, 5) == [0, 0, 1, 2, 2]  # a short video repeats frames
    with pytest.raises(UserError):
        frame_indices(0, 8)


def test_items_are_questions_with_sampled_frames(tiny_set):
    from PIL import Image

    assert "clevrer" in task_names()
    task = ClevrerTask(tiny_set, split="test", frames=4)
    videos = read_questions(tiny_set / "questions" / "test.json")
    items = task.items()
    assert [it.id for it in items] == [f"{v.scene_index}/{q.question_id}"
                                      for v in videos for q in v.questions]  # fmt: skip
    item = items[0]
    assert len(item.images) == 4
    urls = [image_ref_data_url(im) for im in item.images]
    assert all(u.startswith("data:image/jpeg;base64,") for u in urls)
    assert len(set(urls)) == 4  # four different frames
    with Image.open(io.BytesIO(base64.b64decode(urls[0].split(",", 1)[1]))) as im:
        assert im.size == (480, 320)
    template = load_template(None, task)
    template.check_fields(set(task.fields))
    mc = next(it for it in items if it.meta["choices"])
    text = template.render(dict(mc.fields))
    assert "4 frames of a video" in text and "Choices:\n1. " in text
    assert '"1": "correct"' in text
    # a question file gives the same items, its videos found in the set's folder
    same = ClevrerTask(tiny_set / "questions" / "test.json", frames=4).items()
    assert [it.id for it in same] == [it.id for it in items]
    assert same[0].images[0].sources == item.images[0].sources
    with pytest.raises(UserError, match="frames per video"):
        ClevrerTask(tiny_set, frames=0)


def _perfect_reply(question) -> str:
    if question.choices is None:
        return f"<think>Looking at the frames.</think><answer>{question.answer}</answer>"
    verdicts = {str(k): c.answer for k, c in enumerate(question.choices, start=1)}
    return f"<answer>{json.dumps(verdicts)}</answer>"


def _question_of(messages, by_text):
    text = "".join(p.get("text", "") for p in messages[-1]["content"] if p["type"] == "text")
    line = next(x for x in text.splitlines() if x.startswith("Question: "))
    return by_text[line.removeprefix("Question: ")]


def _run_export_evaluate(tiny_set, tmp_path, responder, name):
    results = tmp_path / f"{name}.jsonl"
    with ChatServer({}, responder=responder) as server:
        assert main(["vlm", "run", "--task", "clevrer", "--data", str(tiny_set), "--split",
                     "test", "--frames", "3", "--out", str(results), "--base-url",
                     server.base_url, "--model", "scripted", "--api-key", "k",
                     "--quiet"]) == 0  # fmt: skip
    requests = server.requests
    answers = tmp_path / f"{name}_answers.json"
    assert main(["vlm", "export", "--task", "clevrer", "--data", str(tiny_set), "--split",
                 "test", "--frames", "3", "--results", str(results), "--out",
                 str(answers)]) == 0  # fmt: skip
    out = tmp_path / f"{name}_eval"
    assert main(["clevrer", "evaluate", "--data", str(tiny_set), "--split", "test",
                 "--predictions", str(answers), "--out", str(out)]) == 0  # fmt: skip
    return requests, results, answers, json.loads((out / "summary.json").read_text())


def _accuracies(score):
    """The accuracies of a score: descriptive, and per option and per question of each
    multiple-choice type the questions have."""
    found = {"descriptive": score["descriptive"]["accuracy"]}
    for qtype in ("explanatory", "predictive", "counterfactual", "multiple_choice"):
        for level in ("per_option", "per_question"):
            if score[qtype][level]["total"]:
                found[f"{qtype} {level}"] = score[qtype][level]["accuracy"]
    return found


def test_a_perfect_replier_scores_every_option_and_question(tiny_set, tmp_path, capsys):
    videos = read_questions(tiny_set / "questions" / "test.json")
    questions = [q for v in videos for q in v.questions]
    by_text = {q.question: q for q in questions}
    assert len(by_text) == len(questions)  # the scripted model knows a question by its text
    assert any(q.choices for q in questions) and any(q.choices is None for q in questions)

    def responder(messages):
        return _perfect_reply(_question_of(messages, by_text))

    requests, results, _, summary = _run_export_evaluate(tiny_set, tmp_path, responder,
                                                               "perfect")  # fmt: skip
    assert len(requests) == len(questions)
    assert all(r.image_mimes == ["image/jpeg"] * 3 and r.images_match_mime for r in requests)
    assert f"{len(questions)} answers written" in capsys.readouterr().out
    score = summary["score"]
    assert score["questions"] == len(questions) and score["missing"]["questions"] == 0
    accuracies = _accuracies(score)
    assert "multiple_choice per_option" in accuracies
    assert set(accuracies.values()) == {1.0}, accuracies
    assert (tmp_path / "perfect_answers.unparsed.jsonl").read_text() == ""
    # resume: a second run asks nothing again
    with ChatServer({}, responder=responder) as server:
        assert main(["vlm", "run", "--task", "clevrer", "--data", str(tiny_set), "--frames",
                     "3", "--out", str(results), "--base-url", server.base_url, "--model",
                     "scripted", "--api-key", "k", "--quiet"]) == 0  # fmt: skip
    assert server.requests == []


def test_garbled_replies_are_unparsed_and_scored_wrong(tiny_set, tmp_path, capsys):
    videos = read_questions(tiny_set / "questions" / "test.json")
    questions = [q for v in videos for q in v.questions]
    by_text = {q.question: q for q in questions}
    first = questions[0]

    def responder(messages):  # right about the first question, garbled about the others
        q = _question_of(messages, by_text)
        return _perfect_reply(q) if q is first else "I think it is the second one, probably."

    _, _, answers, summary = _run_export_evaluate(tiny_set, tmp_path, responder, "garbled")
    out = capsys.readouterr().out
    assert "1 answers written" in out and f"{len(questions) - 1} unreadable" in out
    submitted = json.loads(answers.read_text())
    assert [[q["question_id"] for q in v["questions"]] for v in submitted] == [[first.question_id]]
    unparsed = [json.loads(x) for x in
                (tmp_path / "garbled_answers.unparsed.jsonl").read_text().splitlines()]  # fmt: skip
    assert len(unparsed) == len(questions) - 1
    assert all(u["reason"] and "reply_excerpt" in u for u in unparsed)
    # the export record beside the answers: the results file read and the counts (tvr vlm report)
    record = json.loads((tmp_path / "garbled_answers.export.json").read_text())
    assert record == {"task": "clevrer", "results": str((tmp_path / "garbled.jsonl").resolve()),
                      "items": len(questions), "parsed": 1, "unparsed": len(questions) - 1,
                      "without_reply": 0}  # fmt: skip
    score = summary["score"]
    assert score["missing"]["questions"] == len(questions) - 1  # unanswered: scored wrong
    right = score["descriptive"]["correct"] + score["multiple_choice"]["per_question"]["correct"]
    assert right == 1  # only the parsed one
    assert score["multiple_choice"]["per_option"]["correct"] == len(first.choices or ())


def test_the_video_itself_for_endpoints_that_take_video(tiny_set, tmp_path):
    from tvr.vlm.tasks import build_messages

    task = ClevrerTask(tiny_set, video="path")
    item = task.items()[0]
    parts = build_messages(item, load_template(None, task))[0]["content"]
    video = task.video(int(item.meta["scene_index"]))
    assert parts[1:] == [{"type": "video_url", "video_url": {"url": video.resolve().as_uri()}}]
    assert "You will see a video." in parts[0]["text"]
    results = tmp_path / "inline.jsonl"
    with ChatServer({}, default_reply="<answer>2</answer>") as server:
        assert main(["vlm", "run", "--task", "clevrer", "--data", str(tiny_set), "--video",
                     "inline", "--limit", "1", "--out", str(results), "--base-url",
                     server.base_url, "--model", "scripted", "--api-key", "k",
                     "--quiet"]) == 0  # fmt: skip
    (request,) = server.requests
    sent = json.loads(request.body)["messages"][-1]["content"][1]
    assert sent["type"] == "video_url"
    head, data = sent["video_url"]["url"].split(",", 1)
    assert head == "data:video/mp4;base64" and base64.b64decode(data) == video.read_bytes()
    with pytest.raises(UserError, match="video must be one of"):
        ClevrerTask(tiny_set, video="gif")


def test_question_ids_are_scene_slash_question_and_old_results_still_export():
    """Issue 42: one id everywhere (`tvr vlm run`'s results, the HF export, the evaluator):
    SCENE/QUESTION; results written with the former SCENE-QUESTION ids are still read."""
    from tvr.clevrer.vlm_task import item_id, legacy_id

    assert item_id(10000, 3) == "10000/3"
    assert legacy_id("10000-3") == "10000/3" and legacy_id("10000/3") == "10000/3"
    assert legacy_id("vt-abc") == "vt-abc"
