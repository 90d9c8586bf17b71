"""Scoring: both modes on each answer format, aggregation as Table 2, the written report."""

import json

import pytest

from tests.visualtrans.make_data import CORRECT_REPLIES, make_visualtrans
from tvr.cli import main
from tvr.visualtrans.data.dataset import Dataset, Item, item_id, load_dataset
from tvr.visualtrans.eval.report import table2_row, write_report
from tvr.visualtrans.eval.scoring import judge, score_dataset


def make_item(fmt, label, question="Q?", task=None):
    task = (
        task
        or {"choice": "procedural_causal", "count": "count", "set": "spatial_fine_grained"}[fmt]
    )
    images = ("s/1_start.jpg", "s/1_end.jpg")
    return Item(0, item_id(question, images), task, "sort_beads", images, question, label, fmt)


SET_Q = ("List all objects above. Only select from the given object list:green block, white "
         "block, brown and beige bacon strip. Do not add or infer any new objects.")  # fmt: skip


@pytest.mark.parametrize(
    "fmt,label,reply,official,normalized",
    [
        # multiple choice
        ("choice", "B", "<answer>B</answer>", True, True),
        ("choice", "B", "<answer>b</answer>", True, True),
        ("choice", "B", "<answer>B. Stack the purple bowl</answer>", True, True),
        ("choice", "B", "<answer>(B)</answer>", False, True),
        ("choice", "B", "<answer>**B**</answer>", False, True),
        ("choice", "B", "<answer>Option B</answer>", False, True),
        # the official rule reads the first letter of any word: right for the wrong reason
        ("choice", "B", "<answer>Because the purple bowl moved, A.</answer>", True, False),
        ("choice", "D", "<answer>Door</answer>", True, False),
        ("choice", "A", "<answer>B</answer>", False, False),
        # official takes the first <answer>, normalized the last
        ("choice", "C", "<answer>A</answer> no wait <answer>C</answer>", False, True),
        # counts
        ("count", "2", "<answer>2</answer>", True, True),
        ("count", "2", "<answer>2.</answer>", False, True),
        ("count", "2", "<answer>two</answer>", False, True),
        ("count", "2", "<answer>2 items</answer>", False, True),
        ("count", "2", "Final answer: 2\nsince two were added", False, True),
        ("count", "0", "The result is \\boxed{0}", False, True),
        ("count", "3", "<answer>2</answer>", False, False),
        # sets
        ("set", "green block, white block", "<answer>white block, green block</answer>", True, True),
        ("set", "green block, white block", "<answer>[white block, green block]</answer>", True, True),
        ("set", "green block, white block", "<answer>Green block, White block.</answer>", False, True),
        ("set", "green block, white block", "<answer>green block and white block</answer>", False, True),
        ("set", "green block, white block", "<answer>green block</answer>", False, False),
        ("set", "green block", "<answer>green block, green block</answer>", True, True),
        ("set", "none", "<answer>none</answer>", True, True),
        ("set", "none", "<answer>None</answer>", False, True),
        ("set", "brown and beige bacon strip, green block",
         "<answer>green block, brown and beige bacon strip</answer>", True, True),
    ],
)  # fmt: skip
def test_modes_on_each_format(fmt, label, reply, official, normalized):
    item = make_item(fmt, label, SET_Q if fmt == "set" else "Q?")
    assert judge(item, reply, "official").correct is official
    assert judge(item, reply, "normalized").correct is normalized


def test_no_final_answer_is_listed_as_no_answer_in_both_modes():
    item = make_item("choice", "B")
    for mode in ("official", "normalized"):
        verdict = judge(item, "I cannot tell from these images what happened to the bowls.", mode)
        assert verdict.status == "no_answer" and not verdict.correct
    # the official reading of "Because" counts as an answer (the letter B)
    assert judge(item, "<answer>Because</answer>", "official").status == "answered"
    assert judge(item, "<answer>Because</answer>", "normalized").status == "no_answer"


def test_official_set_match_is_case_and_space_sensitive_but_strips_items():
    item = make_item("set", "orange bowl,  light teal bowl")
    assert judge(item, "<answer> light teal bowl ,orange bowl</answer>", "official").correct
    assert not judge(item, "<answer>Orange bowl, light teal bowl</answer>", "official").correct


def table2_dataset(counts):
    items = []
    for task, n in counts.items():
        for k in range(n):
            q = f"{task} {k}"
            images = (f"x/{task}_{k}_start.jpg", f"x/{task}_{k}_end.jpg")
            items.append(Item(len(items), item_id(q, images), task, "sort_beads", images, q, "A",
                              "choice"))  # fmt: skip
    return Dataset(path=None, items=items)


#: Table 2 rows of the models that answered every subtask: Fine, Global, Spatial mean, Interm.,
#: Causal, Plan, Procedural mean, Count, Quantitative mean, Overall
TABLE2 = {
    "GPT-4o-2024-11-20": "30.36 30.00 30.18 31.82 36.05 45.24 37.70 57.14 57.14 36.22",
    "GPT-4.1": "51.79 38.00 44.90 27.27 29.07 59.52 38.62 65.08 65.08 44.47",
    "Claude-3.7-Sonnet": "44.05 52.00 48.03 21.59 55.81 57.14 44.85 47.62 47.62 44.47",
    "Gemini-2.5-Pro": "48.21 48.00 48.11 54.55 55.81 78.57 62.98 61.90 61.90 54.93",
    "o3": "58.33 84.00 71.17 23.86 62.79 78.57 55.07 79.37 79.37 59.96",
    "Llama-3.2-11b-Vision-Instruct": "12.50 24.00 18.25 19.32 26.74 23.81 23.29 14.29 14.29 18.51",
    "Pixtral-12B": "19.05 32.00 25.53 18.18 22.09 28.57 22.95 30.16 30.16 22.94",
    "Kimi-VL-A3B-Thinking": "20.24 40.00 30.12 20.45 32.56 30.95 27.99 20.63 20.63 25.35",
    "Pixtral-Large": "20.24 28.00 24.12 19.32 29.07 42.86 30.42 30.16 30.16 25.55",
    "Qwen2.5-VL-72B": "22.02 26.00 24.01 26.14 30.23 33.33 29.90 46.03 46.03 28.57",
    "InternVL3-14B": "18.45 42.00 30.23 26.14 24.42 45.24 31.93 42.86 42.86 28.57",
    "Qwen2.5-VL-32B": "23.21 14.00 18.61 23.86 36.05 45.24 35.05 44.44 44.44 29.18",
    "Llama-4-Maverick": "31.55 44.00 37.78 19.32 26.74 50.00 32.02 39.68 39.68 32.39",
    "GLM-4.1V-9B-Thinking": "29.76 32.00 30.88 28.41 29.07 42.86 33.45 47.62 47.62 33.00",
    "InternVL3-78B": "26.79 42.00 34.40 28.41 33.72 50.00 37.38 52.38 52.38 35.01",
}
#: item counts per subtask of the published file (they make Table 2's denominators: 497 items)
TABLE2_COUNTS = {"spatial_fine_grained": 168, "spatial_global": 50, "procedural_interm": 88,
                 "procedural_causal": 86, "procedural_plan": 42, "count": 63}  # fmt: skip


@pytest.mark.parametrize("model", sorted(TABLE2))
def test_aggregation_reproduces_table2(model):
    printed = TABLE2[model].split()
    subtask_pct = dict(zip(TABLE2_COUNTS, (printed[i] for i in (0, 1, 3, 4, 5, 7)), strict=True))
    correct = {t: round(float(p) * TABLE2_COUNTS[t] / 100) for t, p in subtask_pct.items()}
    ds = table2_dataset(TABLE2_COUNTS)
    records, seen = {}, dict.fromkeys(TABLE2_COUNTS, 0)
    for it in ds.items:
        right = seen[it.task_type] < correct[it.task_type]
        seen[it.task_type] += 1
        records[it.id] = {"id": it.id, "reply": f"<answer>{'A' if right else 'B'}</answer>",
                          "error": None}  # fmt: skip
    summary = score_dataset(ds, records, "official").summary()
    header, row = table2_row(summary)
    assert row == printed, dict(zip(header, row, strict=True))


def test_dimension_mean_follows_the_printed_percentages():
    # o3: the exact mean of the procedural accuracies rounds to 55.08, Table 2 prints 55.07
    counts = {"procedural_interm": 88, "procedural_causal": 86, "procedural_plan": 42}
    ds = table2_dataset(counts)
    correct = {"procedural_interm": 21, "procedural_causal": 54, "procedural_plan": 33}
    seen = dict.fromkeys(counts, 0)
    records = {}
    for it in ds.items:
        right = seen[it.task_type] < correct[it.task_type]
        seen[it.task_type] += 1
        records[it.id] = {"id": it.id, "reply": "A" if right else "B", "error": None}
    dim = score_dataset(ds, records, "official").summary()["dimensions"]["procedural"]
    assert dim["table2_pct"] == 55.07 and round(100 * dim["accuracy"], 2) == 55.08


def test_missing_and_failed_items_count_wrong_and_are_listed(tmp_path):
    data, _, _ = make_visualtrans(tmp_path)
    ds = load_dataset(data)
    records = {}
    for it in ds.unique_items():
        marker = it.question[:5]
        records[it.id] = {"id": it.id, "reply": CORRECT_REPLIES[marker], "error": None}
    first, second = ds.items[0], ds.items[1]
    del records[first.id]
    records[second.id] = {"id": second.id, "reply": None, "error": "HTTP 500: boom"}
    for mode in ("official", "normalized"):
        s = score_dataset(ds, records, mode).summary()
        assert s["overall"]["items"] == 11
        assert s["status_counts"] == {"answered": 9, "no_answer": 0, "failed": 1, "missing": 1}
        listed = {(u["index"], u["status"]) for u in s["unanswered"]}
        assert listed == {(0, "missing"), (1, "failed")}
        assert s["subtasks"]["count"] == {
            "label": "Count",
            "items": 2,
            "correct": 0,
            "accuracy": 0.0,
        }
    normalized = score_dataset(ds, records, "normalized").summary()
    assert normalized["overall"]["correct"] == 9
    # both copies of the duplicated item are scored unless --unique
    assert (
        score_dataset(ds, records, "normalized", unique_only=True).summary()["overall"]["items"]
        == 10
    )


def test_report_files(tmp_path):
    data, _, _ = make_visualtrans(tmp_path)
    ds = load_dataset(data)
    records = {
        it.id: {"id": it.id, "reply": CORRECT_REPLIES[it.question[:5]], "error": None}
        for it in ds.unique_items()
    }
    board = score_dataset(ds, records, "official")
    summary = write_report(board, tmp_path / "score", extra={"data": str(data)})
    out = tmp_path / "score"
    assert (out / "accuracy.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    md = (out / "summary.md").read_text()
    assert "| Fine | Global | Spatial mean |" in md and "## Per scenario" in md
    details = [json.loads(line) for line in (out / "detail.jsonl").read_text().splitlines()]
    assert len(details) == 11 and {d["status"] for d in details} == {"answered"}
    saved = json.loads((out / "summary.json").read_text())
    assert saved["overall"] == summary["overall"] and saved["data"] == str(data)
    assert saved["overall"]["correct"] == 11


def test_score_command_reads_the_official_runner_output(tmp_path, capsys):
    data, _, items = make_visualtrans(tmp_path)
    results = tmp_path / "eval_model.jsonl"
    lines = [{**it, "assistant": CORRECT_REPLIES[it["question"][:5]]} for it in items[:-1]]
    lines[0]["assistant"] = "<answer>7</answer>"
    results.write_text("".join(json.dumps(x) + "\n" for x in lines) + "{torn", encoding="utf-8")
    out = tmp_path / "score"
    argv = ["visualtrans", "evaluate", "--data", str(data), "--predictions", str(results),
            "--mode", "official", "--out", str(out)]  # fmt: skip
    # strict by default: the torn line is named, nothing is scored or written
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"{results}, line 11: not valid JSON (unexpected character, column 2) "
                        "(--lenient skips bad lines, scoring them as wrong)")  # fmt: skip
    assert not out.exists()
    # --lenient: the torn line is counted, its item scored as missing
    assert main([*argv, "--lenient"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["overall"] == {"items": 11, "correct": 10, "accuracy": 10 / 11}
    assert summary["unreadable_result_lines"] == [11]
    printed = capsys.readouterr().out
    assert "Overall" in printed and "unreadable predictions lines (--lenient" in printed
