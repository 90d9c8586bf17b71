"""VisualTrans's multiple-choice items as a VLMEvalKit custom MCQ TSV (`tvr export vlmevalkit`).

The layout of VLMEvalKit's image MCQ datasets (a TSV file under its data root, read by
`ImageMCQDataset`): tab-separated, one row per question, columns

    index  image  question  A  B  C  D  answer  category  id

`index` is the row's number (0-based, unique); `image` is the image base64-encoded, or for an
item with several images the Python list literal of their base64 strings (VLMEvalKit's
`toliststr` reads `['...', '...']`); with `image_paths=True` the column is `image_path` instead
(absolute paths, one or a list literal). `question` is the question's stem (the text before
"A."), `A`..`D` the options (empty where the question has fewer), `answer` the letter.
`category` is the VisualTrans task type; `id` is tvr's item id (an extra column VLMEvalKit
carries along), the key `tvr visualtrans evaluate` scores replies by.

Only the `choice` items are written (count and set questions are not multiple choice). Scoring
through tvr (`tvr vlm run` then `tvr visualtrans evaluate`) is the exact path: VLMEvalKit's own
MCQ scoring extracts a letter its way (and may call an LLM judge), not the official scorer's.
"""

from __future__ import annotations

import base64
import csv
import re
from pathlib import Path

from tvr.core.errors import UserError
from tvr.visualtrans.data.dataset import (
    data_file,
    images_folder,
    load_dataset,
    question_options,
)

LETTERS = ("A", "B", "C", "D")
COLUMNS = ("index", "image", "question", *LETTERS, "answer", "category", "id")
_FIRST_OPTION = re.compile(r"(?<![A-Za-z0-9])A[.)](?:\s|$)")


def _stem(question: str) -> str:
    m = _FIRST_OPTION.search(question)
    return (question[: m.start()] if m else question).strip()


def _list_or_one(values: list[str]) -> str:
    return values[0] if len(values) == 1 else repr(values)


def write_visualtrans_tsv(data: str | Path, out: str | Path, image_paths: bool = False) -> int:
    """Write the multiple-choice items of `data` to TSV `out`; return the rows written."""
    path = data_file(data)
    dataset = load_dataset(path)
    folder = images_folder(path, dataset.items[0] if dataset.items else None)
    columns = [("image_path" if c == "image" else c) if image_paths else c for c in COLUMNS]
    rows = 0
    out = Path(out)
    with out.open("w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, delimiter="\t", lineterminator="\n")
        writer.writerow(columns)
        for item in dataset.items:
            options = question_options(item)
            if item.answer_format != "choice" or not 2 <= len(options) <= len(LETTERS):
                continue
            files = [folder / p for p in item.images]
            if image_paths:
                images = [str(p.resolve()) for p in files]
            else:
                try:
                    images = [base64.b64encode(p.read_bytes()).decode("ascii") for p in files]
                except OSError as err:
                    raise UserError(f"{err.filename}: cannot read the image") from None
            padded = options + [""] * (len(LETTERS) - len(options))
            writer.writerow([rows, _list_or_one(images), _stem(item.question), *padded,
                             item.label.strip().upper(), item.task_type, item.id])  # fmt: skip
            rows += 1
    return rows
