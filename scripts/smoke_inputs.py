"""Small valid inputs for the smoke set of scripts/smoke.sh: a TRANCO samples and predictions
file, a CLEVRER question and answer file, a VisualTrans data file with replies, VTT records and
predictions.

Usage: python scripts/smoke_inputs.py FOLDER
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

from tvr.visualtrans.data.dataset import item_id


def lines(path: Path, records: list) -> None:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")


def main(folder: str) -> None:
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    clips = ["a", "b", "c", "d", "e", "f", "g"]
    lines(out / "tranco.jsonl", [{"id": f"s{i}", "clips": clips[i: i + 2], "candidates": clips}
                                 for i in range(3)])  # fmt: skip
    lines(out / "tranco-pred.jsonl", [{"id": f"s{i}", "clips": ["a", "c"]} for i in range(3)])
    questions = [{"scene_index": 0, "video_filename": "video_00000.mp4", "questions": [
        {"question_id": 0, "question": "How many objects enter the scene?",
         "question_type": "descriptive", "program": ["events", "objects", "filter_in", "count"],
         "answer": "2"},
        {"question_id": 1, "question": "Which of the following will happen next?",
         "question_type": "predictive", "program": ["unseen_events"],
         "choices": [{"choice_id": 0, "choice": "The cube collides with the sphere",
                      "program": ["unseen_events"], "answer": "correct"},
                     {"choice_id": 1, "choice": "The cube collides with the cylinder",
                      "program": ["unseen_events"], "answer": "wrong"}]}]}]  # fmt: skip
    (out / "questions.json").write_text(json.dumps(questions), encoding="utf-8")
    answers = [{"scene_index": 0, "questions": [
        {"question_id": 0, "answer": "2"},
        {"question_id": 1, "choices": [{"choice_id": 0, "answer": "correct"},
                                       {"choice_id": 1, "answer": "correct"}]}]}]  # fmt: skip
    (out / "answers.json").write_text(json.dumps(answers), encoding="utf-8")
    items = [{"task_type": "count", "scene": "sort_beads", "label": "2",
              "question": "How many new groups of beads were formed?",
              "images": ["sort_beads/a_start.jpg", "sort_beads/a_end.jpg"]},
             {"task_type": "procedural_causal", "scene": "stack_unstack_bowls", "label": "B",
              "question": "Which operation most likely occurred?\nA. Nest. B. Stack. C. Add. D. Move.",
              "images": ["bowls/b_start.jpg", "bowls/b_end.jpg"]}]  # fmt: skip
    (out / "visualtrans.json").write_text(json.dumps(items), encoding="utf-8")
    lines(out / "replies.jsonl", [
        {"id": item_id(it["question"], it["images"]), "reply": "<answer>2</answer>", "error": None}
        for it in items])  # fmt: skip
    records = []
    for i, labels in enumerate([["cut mango", "peel mango"], ["pour milk"]]):
        sid, n = hashlib.md5(f"sample {i}".encode()).hexdigest()[:16], len(labels)
        records.append({
            "id": sid, "youtube_id": f"video{i}", "ori": "coin", "split": "test",
            "duration": 60.0, "topic": "Cut Mango", "category": "Pets and Fruit",
            "annotation": [{"clip_id": f"{sid}_{n}_{k}", "segment": [10.0 * k, 10.0 * k + 5],
                            "label": label} for k, label in enumerate(labels)],
            "frames": {f"{sid}_{n}_{k}": {"frames": 30, "imgs": 30} for k in range(n)}})  # fmt: skip
    lines(out / "vtt.jsonl", records)
    lines(out / "vtt-pred.jsonl", [{"id": r["id"], "transformations": ["cut the mango"] * len(
        r["annotation"])} for r in records])  # fmt: skip


if __name__ == "__main__":
    main(sys.argv[1])
