"""CLEVRER as a Hugging Face dataset (`tvr export hf --benchmark clevrer`): a `questions` config
(one row per question, its program, answer or choices) and a `videos` config (the mp4s
embedded as the Video feature, with `file_name`, scene index and the annotation). A VideoFolder
layout (mp4s beside metadata.jsonl) cannot share a folder with Parquet configs: `datasets` infers
one builder for every config of a card, so the videos are Parquet too."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tvr.clevrer.data.fields import load_json
from tvr.clevrer.data.layout import find_annotation, find_questions, find_video, release_split
from tvr.core.errors import UserError
from tvr.core.hf_export import HF_SPLITS, HfDataset, Table, licence_fields, made_by_tvr

CITATION = """@inproceedings{yi2020clevrer,
  title     = {CLEVRER: Collision Events for Video Representation and Reasoning},
  author    = {Yi, Kexin and Gan, Chuang and Li, Yunzhu and Kohli, Pushmeet and Wu, Jiajun and Torralba, Antonio and Tenenbaum, Joshua B.},
  booktitle = {International Conference on Learning Representations (ICLR)},
  year      = {2020}
}"""


def _features() -> dict[str, Any]:
    from datasets import List, Value

    choice = {"choice_id": Value("int32"), "choice": Value("string"),
              "program": List(Value("string")), "answer": Value("string")}  # fmt: skip
    return {"id": Value("string"), "scene_index": Value("int32"),
            "question_id": Value("int32"), "video_filename": Value("string"),
            "question": Value("string"), "question_type": Value("string"),
            "question_subtype": Value("string"), "program": List(Value("string")),
            "answer": Value("string"), "choices": List(choice)}  # fmt: skip


def _rows(scenes: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for scene in scenes:
        for q in scene["questions"]:
            yield {
                "id": f"{scene['scene_index']}/{q['question_id']}",
                "scene_index": scene["scene_index"], "question_id": q["question_id"],
                "video_filename": scene.get("video_filename"), "question": q["question"],
                "question_type": q.get("question_type"),
                "question_subtype": q.get("question_subtype"), "program": q.get("program"),
                "answer": q.get("answer"),
                "choices": [{"choice_id": c["choice_id"], "choice": c["choice"],
                             "program": c.get("program"), "answer": c.get("answer")}
                            for c in q.get("choices", [])] or None,
            }  # fmt: skip


def _video_features() -> dict[str, Any]:
    from datasets import Value, Video

    return {"scene_index": Value("int32"), "file_name": Value("string"), "video": Video(),
            "annotation": Value("string")}  # fmt: skip


def _videos(root: Path, scenes: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for scene in scenes:
        index = scene["scene_index"]
        try:
            annotation = json.dumps(load_json(find_annotation(root, index)))
        except UserError:
            annotation = None
        video = find_video(root, index)
        yield {"scene_index": index, "file_name": video.name,
               "video": {"bytes": video.read_bytes(), "path": video.name},
               "annotation": annotation}  # fmt: skip


def _release_or_unknown(tables: list[Table]) -> str:
    """`clevrer-release` when the question files are the release's (train, validation, test
    names and its index ranges: tvr checks the names only), else `unknown`."""
    return "clevrer-release" if tables and all(t.split in ("train", "validation", "test")
                                               for t in tables) else "unknown"  # fmt: skip


def export_clevrer(data: str | Path, splits: tuple[str, ...] | None = None) -> HfDataset:
    root = Path(data)
    if not root.is_dir():
        raise UserError(f"--data {root}: CLEVRER's export reads a set's folder (questions/, "
                        "videos/, annotations/)")  # fmt: skip
    tables: list[Table] = []
    videos: list[Table] = []
    for split in splits or ("train", "val", "test"):
        try:
            path = find_questions(root, split)
        except UserError:
            if splits:
                raise
            continue
        scenes = load_json(path)
        name = HF_SPLITS[split] if split in HF_SPLITS else release_split(split)
        tables.append(Table("questions", name, _features, lambda s=scenes: _rows(s)))
        videos.append(Table("videos", name, _video_features, lambda s=scenes: _videos(root, s)))
    if not tables:
        raise UserError(f"--data {root}: no question file (questions/train.json, ...)")
    return HfDataset(
        benchmark="clevrer",
        pretty_name="CLEVRER",
        **licence_fields("tvr" if made_by_tvr(root) else _release_or_unknown(tables)),
        citation=CITATION,
        description="CLEVRER: videos of colliding objects with descriptive, explanatory, "
        "predictive and counterfactual questions, each with its program. Config `questions`: one "
        "row per question (`answer` for a descriptive one; `choices` with their programs and "
        "answers for a multiple-choice one). Config `videos`: one row per video, the mp4 embedded as the "
        "Video feature (bytes and `file_name`), its `scene_index` and `annotation` (the "
        "annotation file as a JSON string). Decoding videos needs torchcodec; without it, read the files with "
        '`ds.cast_column("video", datasets.Video(decode=False))`.',
        ids='`id` is `"{scene_index}/{question_id}"`, the question id of `tvr clevrer '
        "evaluate`'s detail.jsonl; predictions are the challenge's submission format, "
        "`[{scene_index, questions: [{question_id, answer} | {question_id, choices: "
        "[{choice_id, answer}]}]}]`, built from `scene_index` and `question_id`.",
        scoring="```\ntvr clevrer evaluate --data SET_FOLDER --split val --predictions "
        "answers.json\n```",
        tables=tables + videos,
        task_categories=("visual-question-answering",),
        source=str(data),
    )
