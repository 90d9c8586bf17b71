"""TRANCO as a Hugging Face dataset (`tvr export hf --benchmark tranco`): per split, one row per
sample with its state images and its step clips in the reference order, each clip's frames
embedded as a list of images, and the sample's candidate clip ids."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tvr.core.hf_export import HF_SPLITS, HfDataset, Table, image, licence_fields
from tvr.tranco.data.dataset import TrancoDataset, open_dataset

CITATION = """@article{hong2023transformation,
  title   = {Visual Reasoning: from State to Transformation},
  author  = {Hong, Xin and Lan, Yanyan and Pang, Liang and Guo, Jiafeng and Cheng, Xueqi},
  journal = {IEEE Transactions on Pattern Analysis and Machine Intelligence},
  year    = {2023}
}"""


def _features() -> dict[str, Any]:
    from datasets import Image, List, Value

    clip = {"id": Value("string"), "label": Value("string"), "segment": List(Value("float64")),
            "frames": List(Image())}  # fmt: skip
    return {"id": Value("string"), "task": Value("string"), "domain": Value("string"),
            "initial": Image(), "final": Image(), "clips": List(clip),
            "candidates": List(Value("string"))}  # fmt: skip


def _rows(ds: TrancoDataset, split: str) -> Iterator[dict[str, Any]]:
    for s in ds.split(split):
        clips = []
        for c in s.clips:
            clip = ds.clips[c]
            clips.append({"id": clip.id, "label": clip.label, "segment": list(clip.segment),
                          "frames": [image(p) for p in ds.frames(c)]})  # fmt: skip
        yield {"id": s.id, "task": s.task, "domain": s.domain,
               "initial": image(ds.path(s.initial)), "final": image(ds.path(s.final)),
               "clips": clips,
               "candidates": list(s.candidates) if s.candidates is not None else None}  # fmt: skip


def export_tranco(data: str | Path, splits: tuple[str, ...] | None = None) -> HfDataset:
    ds = open_dataset(data)
    wanted = [s for s in (splits or ("train", "val", "test")) if s in ds.samples]
    tables = [Table("default", HF_SPLITS[s], _features, lambda s=s: _rows(ds, s)) for s in wanted]
    return HfDataset(
        benchmark="tranco",
        pretty_name="TRANCO",
        **licence_fields("tvr" if ds.source == "trance-clips" else
                         "coin-crosstask" if ds.source in ("coin", "crosstask") else "unknown"),
        citation=CITATION,
        description="TRANCO: given the initial and final states of a process, choose and order "
        "the step clips that lead from one to the other. `clips` is the reference sequence, in "
        "order (each clip: id, label, segment in seconds, frames as images); `candidates` are the "
        "sample's own candidate clip ids (the tiny setting; empty for train: the full setting "
        "takes every clip of the split).",
        ids="`id` is the sample id of tvr's split files, and clip ids are tvr's: a predictions "
        'file for `tvr tranco evaluate` is JSON lines `{"id": ID, "clips": [CLIP_ID, ...]}`.',
        scoring="```\ntvr tranco evaluate --data DATASET_FOLDER --split test "
        "--predictions preds.jsonl\n```",
        tables=tables,
        task_categories=("visual-question-answering",),
        source=str(data),
    )
