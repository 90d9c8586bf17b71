"""`tvr visualtrans stats|evaluate|baseline|compare`: output on a small made-up set, --json,
bad input as one line."""

import json
import subprocess
import sys

import pytest

from tests.visualtrans.make_data import CORRECT_REPLIES, make_visualtrans
from tvr.cli import main
from tvr.visualtrans.data.dataset import load_dataset, question_options
from tvr.visualtrans.eval.baselines import baseline_predictions


@pytest.fixture
def data(tmp_path):
    path, _, _ = make_visualtrans(tmp_path / "vt")
    return path


def _replies(tmp_path, data, reply=None):
    """A predictions file: the correct reply of every item, or `reply` for all."""
    path = tmp_path / "replies.jsonl"
    lines = [{"id": it.id, "reply": reply or CORRECT_REPLIES[it.question[:5]], "error": None}
             for it in load_dataset(data).unique_items()]  # fmt: skip
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _run(capsys, *argv):
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_the_help_lists_the_new_names_only(capsys):
    with pytest.raises(SystemExit):
        main(["visualtrans", "--help"])
    text = capsys.readouterr().out
    for name in ("stats", "evaluate", "baseline", "compare"):
        assert f"    {name} " in text
    assert "    summary" not in text and "    score" not in text
    assert text.startswith("usage: tvr visualtrans [-h] SUBCOMMAND ...")


def test_stats_takes_the_file_or_its_folder(data, capsys):
    code, out, err = _run(capsys, "visualtrans", "stats", "--data", data, "--json")
    assert code == 0 and err == ""
    stats = json.loads(out)
    assert (stats["items"], stats["unique_items"]) == (11, 10)
    assert stats["by_format"] == {"choice": 6, "count": 2, "set": 3}
    code, text, _ = _run(capsys, "visualtrans", "stats", "--data", data.parent)
    assert code == 0 and text.startswith(f"{data}: 11 items, 10 distinct")
    assert "  count                                2" in text
    code, text, _ = _run(capsys, "visualtrans", "stats", "--data", data,
                         "--images", data.parent / "nowhere")  # fmt: skip
    images = sum(len(it.images) for it in load_dataset(data).items)
    assert code == 1 and f"missing images: {images}" in text


def test_evaluate_prints_without_out_and_writes_with_it(data, tmp_path, capsys):
    replies = _replies(tmp_path, data)
    code, out, err = _run(capsys, "visualtrans", "evaluate", "--data", data, "--predictions",
                          replies, "--mode", "normalized")  # fmt: skip
    assert code == 0 and err == ""
    assert out.splitlines()[1] == "normalized scoring of 11 items (accuracy %):"
    assert out.splitlines()[0].startswith("without an answer (counted wrong): 0 no final answer")
    assert "  Overall            100.00" in out and "wrote" not in out
    assert not (tmp_path / "score").exists()
    code, out, _ = _run(capsys, "visualtrans", "evaluate", "--data", data.parent,
                        "--predictions", replies, "--json")  # fmt: skip
    summary = json.loads(out)
    assert summary["predictions"] == str(replies) and summary["data"] == str(data)
    assert summary["overall"]["items"] == 11
    out_dir = tmp_path / "eval"
    code, out, _ = _run(capsys, "visualtrans", "evaluate", "--data", data, "--predictions",
                        replies, "--out", out_dir)  # fmt: skip
    assert code == 0 and out.splitlines()[-1].startswith(f"wrote {out_dir}/summary.json")
    assert len((out_dir / "detail.jsonl").read_text().splitlines()) == 11


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--predictions", "{missing}"], "missing.jsonl"),
        (["--predictions", "{torn}"], "line 2: not valid JSON"),
        (["--data", "{nowhere}", "--predictions", "{replies}"], "nowhere: no such file or folder"),
    ],
)
def test_bad_input_to_evaluate_is_one_line(data, tmp_path, argv, words):
    replies = _replies(tmp_path, data)
    torn = tmp_path / "torn.jsonl"
    torn.write_text(replies.read_text().splitlines()[0] + "\n{torn\n")
    names = {"missing": tmp_path / "missing.jsonl", "torn": torn, "replies": replies,
             "nowhere": tmp_path / "nowhere"}  # fmt: skip
    argv = [a.format(**names) for a in argv]
    if "--data" not in argv:
        argv = ["--data", str(data), *argv]
    done = subprocess.run([sys.executable, "-m", "tvr", "visualtrans", "evaluate", *argv],
                          capture_output=True, text=True)  # fmt: skip
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and words in done.stderr


def test_predictions_sharing_no_id_or_without_reply_are_refused(data, tmp_path, capsys):
    """Issue 42: unknown ids only scored Overall 0.00 with exit 0, and a line without its
    `reply` was taken as a failed request; both are one line, exit 2. Partial overlap is scored,
    its counts printed before the table."""
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"id": "0123456789abcdef", "reply": "A", "error": None}) + "\n")
    code, out, err = _run(capsys, "visualtrans", "evaluate", "--data", data, "--predictions", other)
    assert code == 2 and out == ""
    assert err == (f"tvr visualtrans evaluate: error: {other}: none of its 1 ids is a VisualTrans "
                   f"item of {data} (e.g. '0123456789abcdef'): predictions for other data?\n")
    replies = _replies(tmp_path, data)
    lines = replies.read_text().splitlines()
    first = json.loads(lines[0])
    no_reply = tmp_path / "no_reply.jsonl"
    no_reply.write_text("\n".join([json.dumps({"id": first["id"], "answer": "A"}), *lines[1:]]) + "\n")
    code, out, err = _run(capsys, "visualtrans", "evaluate", "--data", data, "--predictions",
                          no_reply)  # fmt: skip
    assert code == 2
    assert err == (f"tvr visualtrans evaluate: error: {no_reply}, line 1, field 'reply': missing (a "
                   "result line holds the model's reply, null for a failed request) (--lenient skips bad "
                   "lines, scoring them as wrong)\n")
    partial = tmp_path / "partial.jsonl"
    partial.write_text("\n".join([*lines[1:], json.dumps({"id": "f" * 16, "reply": "A"})]) + "\n")
    code, out, err = _run(capsys, "visualtrans", "evaluate", "--data", data, "--predictions",
                          partial)  # fmt: skip
    assert code == 0
    head = out.splitlines()[0]
    assert head.endswith("missing; ignored: 1 predictions of unknown ids") and " 0 missing" not in head


def test_baselines_answer_from_the_question(data, tmp_path, capsys):
    dataset = load_dataset(data)
    random = baseline_predictions(dataset, "random", seed=3)
    assert [r["id"] for r in random] == [it.id for it in dataset.unique_items()]
    assert random == baseline_predictions(dataset, "random", seed=3)
    for item, line in zip(dataset.unique_items(), random, strict=True):
        answer = line["reply"].removeprefix("<answer>").removesuffix("</answer>")
        if item.answer_format == "choice":
            assert answer in "ABCD"[: len(question_options(item))]
        elif item.answer_format == "set":
            assert answer == "none" or set(answer.split(", ")) <= set(question_options(item))
        else:
            assert answer in ("0", "2")  # the file's count labels
    frequent = {r["id"]: r["reply"] for r in baseline_predictions(dataset, "frequent")}
    # the two count items (labels 2 and 0): the tie goes to the first label in sort order
    assert frequent[dataset.items[0].id] == frequent[dataset.items[1].id] == "<answer>0</answer>"
    out = tmp_path / "random.jsonl"
    code, text, _ = _run(capsys, "visualtrans", "baseline", "random", "--data", data.parent,
                         "--seed", "3", "--out", out)  # fmt: skip
    assert code == 0 and text == f"wrote random predictions for 10 distinct items to {out}\n"
    assert [json.loads(x) for x in out.read_text().splitlines()] == random
    code, text, _ = _run(capsys, "visualtrans", "evaluate", "--data", data, "--predictions", out,
                         "--json")  # fmt: skip
    assert json.loads(text)["status_counts"]["answered"] == 11


def test_an_unknown_baseline_is_refused(data, capsys):
    with pytest.raises(SystemExit):
        main(["visualtrans", "baseline", "perfect", "--data", str(data), "--out", "x.jsonl"])
    assert "invalid choice: 'perfect'" in capsys.readouterr().err


def _evaluate(capsys, data, replies, out):
    code, _, _ = _run(capsys, "visualtrans", "evaluate", "--data", data, "--predictions", replies,
                      "--out", out)  # fmt: skip
    assert code == 0
    return out


def test_compare_itself_and_a_better_one(data, tmp_path, capsys):
    good = _evaluate(capsys, data, _replies(tmp_path, data), tmp_path / "good")
    bad = _evaluate(capsys, data, _replies(tmp_path, data, "<answer>A</answer>"), tmp_path / "bad")
    code, out, _ = _run(capsys, "visualtrans", "compare", good, good / "detail.jsonl", "--json")
    doc = json.loads(out)
    assert code == 0 and doc["items"] == 11 and doc["benchmark"] == "visualtrans"
    assert [r["name"] for r in doc["metrics"]] == [
        "Overall", "Fine", "Global", "Interm.", "Causal", "Plan", "Count"]  # fmt: skip
    assert all(r["difference"] == 0 and r["p"] == 1.0 for r in doc["metrics"])
    cmp = tmp_path / "cmp"
    code, out, _ = _run(capsys, "visualtrans", "compare", f"right={good}", bad, "--out", cmp)
    doc = json.loads((cmp / "compare.json").read_text())
    overall = doc["metrics"][0]
    # "A" is right on Q09 only: 1 of 11; the good run on all 11
    assert (overall["a"], overall["b"]) == (1.0, 1 / 11)
    assert (overall["only_a"], overall["only_b"], overall["difference"]) == (10, 0, 10 / 11)
    assert doc["dimension_means"]["quantitative"] == {"a": 1.0, "b": 0.0}
    assert out.splitlines()[0] == "# VisualTrans: right (A) against bad (B)"
    assert (cmp / "compare.md").read_text().splitlines() == out.splitlines()[:-1]
    code, out, _ = _run(capsys, "visualtrans", "compare", bad, good, "--json")
    assert json.loads(out)["metrics"][0]["difference"] == -10 / 11


@pytest.mark.parametrize(
    ("case", "words"),
    [("other file", "field 'id': item 0 is"), ("bad line", "line 3, field 'correct'"),
     ("missing", "nowhere: no such file or folder"),
     ("empty", "(write it with `tvr visualtrans evaluate --out`)")],
)  # fmt: skip
def test_bad_input_to_compare_is_one_line(data, tmp_path, capsys, case, words):
    good = _evaluate(capsys, data, _replies(tmp_path, data), tmp_path / "good")
    other = tmp_path / "other"
    if case == "missing":
        other = tmp_path / "nowhere"
    elif case == "empty":
        other.mkdir()
    else:
        lines = [json.loads(x) for x in (good / "detail.jsonl").read_text().splitlines()]
        if case == "other file":
            lines[0]["id"] = "vt-0000000000000000"
        else:
            lines[2]["correct"] = None
        other.mkdir()
        (other / "detail.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    code, _, err = _run(capsys, "visualtrans", "compare", good, other)
    assert code == 2 and err.count("\n") == 1 and words in err
    assert err.startswith("tvr visualtrans compare: error: ")
