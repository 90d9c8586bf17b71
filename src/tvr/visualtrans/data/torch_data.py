"""A PyTorch Dataset over VisualTrans: each question with its images, options, answer and type.

VisualTrans is published as one JSON file (a list of items) and a folder of images; the file is
read and checked by `tvr.visualtrans.data.dataset.load_dataset`, and every image is looked for when
the Dataset is made. The release is one evaluation set, with no train or val split: its only
split is "test" (every item), and `task_type` picks one subtask or dimension of it. The options
are read from the question's words (the release stores them there): the texts of A-D of a
multiple-choice question, the object list of a set question. torch is imported here only
(`pip install 'tvr[train]'`), so `import tvr.visualtrans` does not need it.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tvr.core.errors import UserError, quote
from tvr.core.images import open_rgb
from tvr.training.datasets import require_torch, split_name
from tvr.visualtrans.data.dataset import (
    DIMENSIONS,
    TASK_TYPES,
    data_file,
    images_folder,
    load_dataset,
    question_options,
)

torch = require_torch("tvr.visualtrans.data.torch_data")

SPLITS: tuple[str, ...] = ("test",)
IMAGES_DIR = "images"


class VisualTransDataset(torch.utils.data.Dataset):
    """The questions of VisualTrans, each with its images.

    Args:
        root: the folder holding VisualTrans.json (or one other .json file) and the images, or
            the JSON file itself.
        split: "test", the only split: VisualTrans is one evaluation set (the release has no
            train or val split).
        transform: called on each image (a Pillow RGB image); the item's "images" are the
            results, in order.
        task_type: keep one subtask ("spatial_fine_grained", "spatial_global",
            "procedural_interm", "procedural_causal", "procedural_plan", "count") or one
            dimension ("spatial", "procedural", "quantitative"); None keeps all.
        images: the folder the items' image paths are relative to; by default the images/
            folder beside the JSON file if it holds them, else the JSON file's folder.
        unique: keep the first of each group of duplicated items (same question and images),
            as `tvr vlm run` asks them.

    An item is a dict: "id" (tvr's stable item id), "index" (its position in the file),
    "question" (the text, options included), "images" (Pillow RGB images, or what `transform`
    makes of them: the start and end state, and for an intermediate-state question four
    candidates), "options" (`question_options`: A-D's texts, a set question's object list, [] for a
    count), "answer" (the label, a string: a letter, a count, objects or "none"),
    "answer_format" ("choice", "count" or "set"), "task_type", "dimension", "scene" and "mask"
    ("first", "last" or None). Images differ in number and size, so batch the items with
    `collate_fn=list`.

    A wrong split or task type, a missing file or folder, a bad item or a missing image raises
    UserError naming it.
    """

    def __init__(
        self,
        root: str | Path,
        split: str = "test",
        transform: Callable[[Any], Any] | None = None,
        task_type: str | None = None,
        images: str | Path | None = None,
        unique: bool = False,
    ) -> None:
        what = type(self).__name__
        try:
            self.split = split_name(split, SPLITS, what)
        except UserError as err:
            raise UserError(f"{err} (VisualTrans is one evaluation set: the release has no "
                            "train or val split)") from None  # fmt: skip
        kinds = (*TASK_TYPES, *DIMENSIONS)
        if task_type is not None and task_type not in kinds:
            raise UserError(f"{what}: task_type is a subtask ({', '.join(TASK_TYPES)}) or a "
                            f"dimension ({', '.join(DIMENSIONS)}), got {quote(task_type)}")  # fmt: skip
        self.path = data_file(root)
        data = load_dataset(self.path)
        self.images_dir = images_folder(self.path, data.items[0], images)
        missing = data.missing_images(self.images_dir)
        if missing:
            index, rel = missing[0]
            raise UserError(f"{self.images_dir / rel}: no such image (item {index} of "
                            f"{self.path.name}; {len(missing)} missing in all)")  # fmt: skip
        items = data.unique_items() if unique else data.items
        self.items = [it for it in items if task_type in (None, it.task_type, it.dimension)]
        self.transform = transform

    def __len__(self) -> int:
        return len(self.items)

    def __getitem__(self, i: int) -> dict[str, Any]:
        it = self.items[i]
        images = [open_rgb(self.images_dir / rel, "image") for rel in it.images]
        if self.transform is not None:
            images = [self.transform(im) for im in images]
        return {
            "id": it.id,
            "index": it.index,
            "question": it.question,
            "images": images,
            "options": question_options(it),
            "answer": it.label,
            "answer_format": it.answer_format,
            "task_type": it.task_type,
            "dimension": it.dimension,
            "scene": it.scene,
            "mask": it.mask,
        }
