"""`tvr export vlmevalkit`: VisualTrans's multiple-choice items as a VLMEvalKit custom MCQ TSV
(index, image or image_path, question, A-D, answer, category, id)."""

from __future__ import annotations

import ast
import base64
import csv
import io
from pathlib import Path

from PIL import Image
from tests.visualtrans.make_data import make_visualtrans

from tvr.cli import main
from tvr.visualtrans.data.dataset import load_dataset, question_options


def _read(path):
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f, delimiter="\t")
        return reader.fieldnames, list(reader)


def test_visualtrans_tsv(tmp_path, capsys):
    data = make_visualtrans(tmp_path / "vt")[0]
    items = [it for it in load_dataset(data).items if it.answer_format == "choice"
             and 2 <= len(question_options(it)) <= 4]  # fmt: skip
    out = tmp_path / "VisualTrans_MCQ.tsv"
    assert main(["export", "vlmevalkit", "--benchmark", "visualtrans", "--data", str(data),
                 "--out", str(out)]) == 0  # fmt: skip
    assert f"wrote {len(items)} multiple-choice items" in capsys.readouterr().out
    columns, rows = _read(out)
    assert columns == ["index", "image", "question", "A", "B", "C", "D", "answer", "category", "id"]
    assert len(rows) == len(items) == 6  # the 6 choice items of the 11 (one duplicated)
    assert [r["index"] for r in rows] == [str(i) for i in range(len(rows))]
    for row, item in zip(rows, items, strict=True):
        assert row["id"] == item.id and row["answer"] == item.label
        assert row["answer"] in "ABCD" and row[row["answer"]]
        assert row["category"] == item.task_type
        assert "A." not in row["question"] and row["question"] in item.question
        options = question_options(item)
        assert [row[c] for c in "ABCD"][: len(options)] == options
        images = ast.literal_eval(row["image"]) if row["image"].startswith("[") else [row["image"]]
        assert len(images) == len(item.images)
        assert Image.open(io.BytesIO(base64.b64decode(images[0]))).size[0] > 0

    paths = tmp_path / "paths.tsv"
    assert main(["export", "vlmevalkit", "--benchmark", "visualtrans", "--data", str(data),
                 "--out", str(paths), "--image-paths"]) == 0  # fmt: skip
    columns, rows = _read(paths)
    assert columns[1] == "image_path" and len(rows) == 6
    first = ast.literal_eval(rows[0]["image_path"]) if rows[0]["image_path"].startswith("[") \
        else [rows[0]["image_path"]]  # fmt: skip
    assert all(Path(p).is_file() for p in first)
