"""VisualTrans as a Hugging Face dataset (`tvr export hf --benchmark visualtrans`): one test
split of the items of VisualTrans.json, their images embedded, keyed by tvr's item id."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tvr.core.hf_export import HfDataset, Table, image, licence_fields
from tvr.visualtrans.data.dataset import data_file, images_folder, load_dataset

CITATION = """@article{ji2025visualtrans,
  title   = {VisualTrans: A Benchmark for Real-World Visual Transformation Reasoning},
  author  = {Ji, Yuheng and Wang, Yipu and Liu, Yuyang and Hao, Xiaoshuai and Liu, Yue and Zhao, Yuting and Lyu, Huaihai and Zheng, Xiaolong},
  journal = {arXiv preprint},
  year    = {2025}
}"""


def _features() -> dict[str, Any]:
    from datasets import Image, List, Value

    return {"id": Value("string"), "index": Value("int32"), "task_type": Value("string"),
            "dimension": Value("string"), "scene": Value("string"),
            "question": Value("string"), "label": Value("string"),
            "answer_format": Value("string"), "mask": Value("string"),
            "image_paths": List(Value("string")), "images": List(Image())}  # fmt: skip


def _rows(path: Path) -> Iterator[dict[str, Any]]:
    dataset = load_dataset(path)
    folder = images_folder(path, dataset.items[0] if dataset.items else None)
    for item in dataset.items:
        yield {
            "id": item.id, "index": item.index, "task_type": item.task_type,
            "dimension": item.dimension, "scene": item.scene, "question": item.question,
            "label": item.label, "answer_format": item.answer_format, "mask": item.mask,
            "image_paths": list(item.images),
            "images": [image(folder / p) for p in item.images],
        }  # fmt: skip


def export_visualtrans(data: str | Path, splits: tuple[str, ...] | None = None) -> HfDataset:
    path = data_file(data)
    return HfDataset(
        benchmark="visualtrans",
        pretty_name="VisualTrans",
        **licence_fields("visualtrans-release"),
        citation=CITATION,
        description="VisualTrans: real-world visual transformation reasoning (spatial, procedural "
        "and quantitative questions on images of manipulation scenes). One row per item of "
        "VisualTrans.json, in file order (duplicates kept, as the file has them); `images` are "
        "the item's images in order (`image_paths` as the file names them), `label` the answer.",
        ids="`id` is tvr's item id (`vt-` and a hash of the question and its image paths), the "
        "key `tvr visualtrans evaluate` matches replies by: a predictions file is JSON lines "
        '`{"id": ID, "reply": "B"}` (a `tvr vlm run` results file).',
        scoring="```\ntvr visualtrans evaluate --data FOLDER_WITH_VisualTrans.json "
        "--predictions replies.jsonl\n```",
        tables=[Table("default", "test", _features, lambda: _rows(path))],
        task_categories=("visual-question-answering",),
        source=str(data),
    )
