"""VTT as a Hugging Face dataset (`tvr export hf --benchmark vtt`): per split, one row per record
of meta/vtt.jsonl with its N + 1 state images embedded and its N transformation descriptions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tvr.core.hf_export import HF_SPLITS, HfDataset, Table, image, licence_fields
from tvr.vtt.data.layout import records_file, states_folder
from tvr.vtt.data.records import VttRecord, read_records

CITATION = """@article{hong2023visual,
  title   = {Visual Transformation Telling},
  author  = {Hong, Xin and Lan, Yanyan and Pang, Liang and Guo, Jiafeng and Cheng, Xueqi},
  journal = {arXiv preprint arXiv:2305.01928},
  year    = {2023}
}"""


def _features() -> dict[str, Any]:
    from datasets import Image, List, Value

    return {"id": Value("string"), "youtube_id": Value("string"), "ori": Value("string"),
            "duration": Value("float64"), "topic": Value("string"),
            "category": Value("string"), "transformations": List(Value("string")),
            "clip_ids": List(Value("string")), "segments": List(List(Value("float64"))),
            "states": List(Image())}  # fmt: skip


def _rows(records: list[VttRecord], states: Path, split: str) -> Iterator[dict[str, Any]]:
    for r in records:
        if r.split != split:
            continue
        yield {"id": r.id, "youtube_id": r.youtube_id, "ori": r.ori, "duration": r.duration,
               "topic": r.topic, "category": r.category, "transformations": r.labels,
               "clip_ids": [s.clip_id for s in r.steps],
               "segments": [list(s.segment) for s in r.steps],
               "states": [image(states / n) for n in r.state_names()]}  # fmt: skip


def _provenance(records: list) -> str:
    """`tvr` for a testbed tvr made (every record's `ori` trance), `vtt-release` for records of
    COIN and CrossTask (`ori` coin or cross), else (a mix, another ori) `unknown`."""
    origins = {r.ori for r in records}
    if origins == {"trance"}:
        return "tvr"
    return "vtt-release" if origins and origins <= {"coin", "cross"} else "unknown"


def export_vtt(data: str | Path, splits: tuple[str, ...] | None = None) -> HfDataset:
    path = records_file(data)
    records = read_records(path)
    states = states_folder(data)
    present = {r.split for r in records}
    wanted = [s for s in (splits or ("train", "val", "test")) if s in present]
    tables = [
        Table("default", HF_SPLITS[s], _features, lambda s=s: _rows(records, states, s))
        for s in wanted
    ]
    return HfDataset(
        benchmark="vtt",
        pretty_name="VTT: Visual Transformation Telling",
        **licence_fields(_provenance(records)),
        citation=CITATION,
        description="VTT: given N + 1 states of a process (`states`, images in order), describe "
        "the N transformations between adjacent states (`transformations`, the references).",
        ids="`id` is the record id of meta/vtt.jsonl, the key of `tvr vtt evaluate`: a "
        'predictions file is JSON lines `{"id": ID, "transformations": ["...", ...]}`.',
        scoring="```\ntvr vtt evaluate --data RELEASE_FOLDER --split test "
        "--predictions preds.jsonl\n```",
        tables=tables,
        task_categories=("image-to-text",),
        source=str(data),
    )
