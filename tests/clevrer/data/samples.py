"""Hand-made CLEVRER files in the released layouts, for the reader and scoring tests."""

from __future__ import annotations

import numpy as np

from tvr.clevrer.vocab import COLORS, MATERIALS, SHAPES


def annotation_dict(scene_index: int = 12, n_frames: int = 4) -> dict:
    """A small annotation: 3 objects, `n_frames` frames, 2 collisions."""
    objects = [
        {"object_id": 0, "color": "red", "material": "metal", "shape": "cube"},
        {"object_id": 1, "color": "blue", "material": "rubber", "shape": "sphere"},
        {"object_id": 2, "color": "cyan", "material": "metal", "shape": "cylinder"},
    ]
    frames = []
    for t in range(n_frames):
        frames.append(
            {
                "frame_id": t,
                "objects": [
                    {
                        "object_id": k,
                        "location": [0.5 * k + 0.1 * t, -1.25 + k, 0.2],
                        "orientation": [0.0, 0.0, 0.3 * k - 0.05 * t],
                        "velocity": [1.0, 0.0, 0.0] if k == 1 else [0, 0, 0],
                        "angular_velocity": [0.0, 0.0, 0.125 * t],
                        "inside_camera_view": not (k == 2 and t == 0),
                    }
                    for k in range(3)
                ],
            }
        )
    return {
        "scene_index": scene_index,
        "video_filename": f"video_{scene_index:05d}.mp4",
        "object_property": objects,
        "motion_trajectory": frames,
        "collision": [
            {"object_ids": [0, 1], "frame_id": 2, "location": [0.3, -0.4, 0.2]},
            {"object_ids": [1, 2], "frame_id": 3, "location": [1.0, 0.5, 0.2]},
        ],
    }


def question_file(n_videos: int = 2, answers: bool = True) -> list[dict]:
    """A small question file: per video 3 descriptive and 3 multiple-choice questions."""
    videos = []
    for v in range(n_videos):
        qs = [
            _descriptive(0, "count", "2", ["objects", "events", "filter_collision", "count"]),
            _descriptive(1, "exist", "yes", ["objects", "red", "filter_color", "exist"]),
            _descriptive(2, "query_color", "blue", ["objects", "unique", "query_color"]),
            _choice_question(3, "explanatory", ["correct", "wrong", "correct", "wrong"]),
            _choice_question(4, "predictive", ["wrong", "correct"]),
            _choice_question(5, "counterfactual", ["correct", "wrong", "wrong"]),
        ]
        qs[1]["question_subtype"] = "exist"  # a field tvr does not use: kept as read
        if not answers:
            for q in qs:
                q.pop("answer", None)
                q.pop("program", None)
                for c in q.get("choices", []):
                    c.pop("answer", None)
                    c.pop("program", None)
        videos.append(
            {"scene_index": 10000 + v, "video_filename": f"video_{10000 + v:05d}.mp4",
             "questions": qs}
        )  # fmt: skip
    return videos


def _descriptive(qid: int, sub: str, answer: str, program: list[str]) -> dict:
    return {
        "question_id": qid,
        "question": f"A {sub} question?",
        "question_type": "descriptive",
        "program": program,
        "answer": answer,
    }


def _choice_question(qid: int, qtype: str, labels: list[str]) -> dict:
    return {
        "question_id": qid,
        "question": f"Which of the following ({qtype})?",
        "question_type": qtype,
        "program": ["events", "filter_collision", "unique"],
        "choices": [
            {"choice_id": i, "choice": f"option {i}", "program": ["objects", "exist"],
             "answer": label}
            for i, label in enumerate(labels)
        ],
    }  # fmt: skip


def random_question_file(n_videos: int, seed: int) -> list[dict]:
    """Many random questions in the released layout: descriptive answers drawn from each
    sub-type's space, 2-4 choices (2 for predictive) with random labels."""
    rng = np.random.default_rng(seed)
    spaces = {
        "count": [str(i) for i in range(6)],
        "exist": ["yes", "no"],
        "query_color": list(COLORS),
        "query_shape": list(SHAPES),
        "query_material": list(MATERIALS),
    }
    subs = list(spaces)
    videos = []
    for v in range(n_videos):
        qs = []
        for qid in range(10):
            sub = subs[rng.integers(len(subs))]
            answer = spaces[sub][rng.integers(len(spaces[sub]))]
            qs.append(_descriptive(qid, sub, answer, ["objects", "unique", sub]))
        for qid, qtype in enumerate(("explanatory", "predictive", "counterfactual"), start=10):
            n = 2 if qtype == "predictive" else int(rng.integers(2, 5))
            labels = [("correct", "wrong")[rng.integers(2)] for _ in range(n)]
            qs.append(_choice_question(qid, qtype, labels))
        videos.append({"scene_index": v, "video_filename": f"video_{v:05d}.mp4", "questions": qs})
    return videos
