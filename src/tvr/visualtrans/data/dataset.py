"""Read and validate a VisualTrans JSON file: items, stable ids, answer formats, duplicates, counts.

The published benchmark is one JSON list; each item has `task_type`, `scene`, `images` (paths
relative to the image folder), `question`, `label` (always a string) and sometimes `mask`
(`first` or `last`). Items carry no id and no answer format, so both are derived here:

* the id is `vt-` plus the first 16 hex digits of the SHA-256 of the question and the image
  list, so it survives reordering of the file and is the same for duplicated items;
* the answer format follows the dispatch of the official scorer: `count` items are integer
  counts, a label that is one letter A-D is a multiple-choice letter, anything else is a set of
  objects (a comma-separated list, or `none`).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tvr.core.errors import InputError, UserError
from tvr.core.jsonl import read_json
from tvr.visualtrans.data.extract import _OBJECT_LIST

TASK_TYPES = (
    "spatial_fine_grained",
    "spatial_global",
    "procedural_interm",
    "procedural_causal",
    "procedural_plan",
    "count",
)
#: the column names of the paper's Table 2
SUBTASK_LABELS = {
    "spatial_fine_grained": "Fine",
    "spatial_global": "Global",
    "procedural_interm": "Interm.",
    "procedural_causal": "Causal",
    "procedural_plan": "Plan",
    "count": "Count",
}
DIMENSIONS = {
    "spatial": ("spatial_fine_grained", "spatial_global"),
    "procedural": ("procedural_interm", "procedural_causal", "procedural_plan"),
    "quantitative": ("count",),
}
DIMENSION_OF = {task: dim for dim, tasks in DIMENSIONS.items() for task in tasks}
#: the 12 manipulation scenarios of the paper (appendix B); others load with a warning
SCENES = (
    "stack_unstack_bowls",
    "add_remove_lid",
    "sort_beads",
    "build_unstack_lego",
    "pick_place_food",
    "make_sandwich",
    "setup_cleanup_table",
    "insert_remove_bookshelf",
    "insert_remove_cups_from_rack",
    "assemble_disassemble_legos",
    "play_reset_connect_four",
    "screw_unscrew_fingers_fixture",
)
ANSWER_FORMATS = ("choice", "count", "set")
CHOICE_LETTERS = ("A", "B", "C", "D")
MASKS = ("first", "last")
KNOWN_FIELDS = ("task_type", "scene", "images", "question", "label", "mask")
#: the file of the release, in the folder that holds it and images/
DATA_FILE = "VisualTrans.json"


def item_id(question: str, images: list[str] | tuple[str, ...]) -> str:
    """The stable id of an item: a hash of its question and its image paths, in order."""
    key = json.dumps([question, list(images)], ensure_ascii=False, separators=(",", ":"))
    return "vt-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def infer_answer_format(task_type: str, label: str) -> str:
    """`count`, `choice` or `set`, by the official scorer's dispatch (task type, then label)."""
    if task_type == "count":
        return "count"
    if label.strip().upper() in CHOICE_LETTERS:
        return "choice"
    return "set"


@dataclass(frozen=True)
class Item:
    """One question of the benchmark, with its derived id and answer format."""

    index: int  # 0-based position in the file
    id: str
    task_type: str
    scene: str
    images: tuple[str, ...]
    question: str
    label: str
    answer_format: str
    mask: str | None = None

    @property
    def dimension(self) -> str:
        return DIMENSION_OF[self.task_type]


@dataclass
class Dataset:
    """The items of one file, its duplicate groups and the warnings found while loading."""

    path: Path
    items: list[Item]
    warnings: list[str] = field(default_factory=list)

    def duplicate_groups(self) -> list[list[int]]:
        """Indices of items sharing an id (same question and images), groups of two or more."""
        by_id: dict[str, list[int]] = {}
        for it in self.items:
            by_id.setdefault(it.id, []).append(it.index)
        return [group for group in by_id.values() if len(group) > 1]

    def unique_items(self) -> list[Item]:
        """The first item of every id, in file order."""
        seen: set[str] = set()
        out = []
        for it in self.items:
            if it.id not in seen:
                seen.add(it.id)
                out.append(it)
        return out

    def missing_images(self, images_dir: str | Path) -> list[tuple[int, str]]:
        """(item index, relative path) of every image that is not a file under `images_dir`."""
        root = Path(images_dir)
        return [
            (it.index, rel) for it in self.items for rel in it.images if not (root / rel).is_file()
        ]

    def summary(self) -> dict[str, Any]:
        """Counts per subtask, dimension, scenario and answer format; duplicates; warnings."""
        groups = self.duplicate_groups()
        conflicting = [g for g in groups if len({self.items[i].label for i in g}) > 1]
        by_task = Counter(it.task_type for it in self.items)
        return {
            "file": str(self.path),
            "items": len(self.items),
            "unique_items": len(self.unique_items()),
            "by_subtask": {t: by_task[t] for t in TASK_TYPES},
            "by_dimension": {d: sum(by_task[t] for t in tasks) for d, tasks in DIMENSIONS.items()},
            "by_scene": dict(sorted(Counter(it.scene for it in self.items).items())),
            "by_format": {
                f: sum(it.answer_format == f for it in self.items) for f in ANSWER_FORMATS
            },
            "by_subtask_and_format": {
                t: {
                    f: n
                    for f in ANSWER_FORMATS
                    if (n := sum(it.task_type == t and it.answer_format == f for it in self.items))
                }
                for t in TASK_TYPES
            },
            "with_mask": sum(it.mask is not None for it in self.items),
            "duplicate_groups": groups,
            "conflicting_duplicates": conflicting,
            "warnings": list(self.warnings),
        }


def _field_name(index: int, name: str) -> str:
    return f"[{index}].{name}"


def _parse_item(path: Path, index: int, raw: Any, warnings: list[str]) -> Item:
    def bad(name: str, message: str) -> InputError:
        return InputError(path, None, _field_name(index, name), message)

    if not isinstance(raw, dict):
        raise InputError(path, None, f"[{index}]", f"expected an object, got {type(raw).__name__}")
    for name in ("task_type", "scene", "images", "question", "label"):
        if name not in raw:
            raise bad(name, "missing")
    task_type = raw["task_type"]
    if task_type not in TASK_TYPES:
        raise bad("task_type", f"{task_type!r} is not one of {', '.join(TASK_TYPES)}")
    scene = raw["scene"]
    if not isinstance(scene, str) or not scene.strip():
        raise bad("scene", f"expected a non-empty string, got {scene!r}")
    if scene not in SCENES:
        warnings.append(f"item {index}: scene {scene!r} is not one of the paper's 12 scenarios")
    images = raw["images"]
    if not isinstance(images, list) or len(images) < 2:
        raise bad("images", "expected a list of at least two image paths (start, end)")
    for k, rel in enumerate(images):
        if not isinstance(rel, str) or not rel.strip():
            raise bad(f"images[{k}]", f"expected a relative path string, got {rel!r}")
        if rel.startswith(("/", "\\")) or ".." in Path(rel).parts:
            raise bad(f"images[{k}]", f"{rel!r} must be relative to the image folder")
    question = raw["question"]
    if not isinstance(question, str) or not question.strip():
        raise bad("question", "expected a non-empty string")
    label = raw["label"]
    if not isinstance(label, str):
        raise bad("label", f"expected a string (the published labels are strings), got {label!r}")
    if not label.strip():
        raise bad("label", "is empty")
    mask = raw.get("mask")
    if mask is not None and mask not in MASKS:
        raise bad("mask", f"expected 'first' or 'last', got {mask!r}")
    answer_format = infer_answer_format(task_type, label)
    if answer_format == "count" and not label.strip().isdigit():
        warnings.append(f"item {index}: count label {label!r} is not a whole number")
    if task_type == "procedural_interm" and len(images) != 6:
        warnings.append(
            f"item {index}: intermediate-state item with {len(images)} images (expected 6)"
        )
    return Item(
        index=index,
        id=item_id(question, images),
        task_type=task_type,
        scene=scene,
        images=tuple(images),
        question=question,
        label=label,
        answer_format=answer_format,
        mask=mask,
    )


def data_file(path: str | Path) -> Path:
    """The JSON file of `path`: the file itself, or the folder's VisualTrans.json (or its only
    .json file); UserError naming the path otherwise."""
    path = Path(path)
    if path.is_file():
        return path
    if not path.is_dir():
        raise UserError(f"{path}: no such file or folder (VisualTrans: the folder holding "
                        f"{DATA_FILE} and images/, or {DATA_FILE} itself)")  # fmt: skip
    if (path / DATA_FILE).is_file():
        return path / DATA_FILE
    found = sorted(path.glob("*.json"))
    if len(found) == 1:
        return found[0]
    raise UserError(f"{path}: no {DATA_FILE} in this folder (a VisualTrans folder holds the "
                    "questions file and the images/ folder)")  # fmt: skip


def question_options(item: Item) -> list[str]:
    """The options the question offers: the texts of A, B, (C, D) of a multiple-choice question,
    the names of a set question's object list as written, in order; [] for a count question, or
    where the words give none."""
    if item.answer_format == "set":
        match = _OBJECT_LIST.search(item.question)
        if not match:
            return []
        return [n for part in match.group(1).split(",") if (n := part.strip(" .\n"))]
    if item.answer_format != "choice":
        return []
    marks: list[re.Match[str]] = []
    pos = 0
    for letter in CHOICE_LETTERS:
        m = re.compile(rf"(?<![A-Za-z0-9]){letter}[.)](?:\s|$)").search(item.question, pos)
        if m is None:
            break
        marks.append(m)
        pos = m.end()
    if len(marks) < 2:
        return []
    ends = [m.start() for m in marks[1:]] + [len(item.question)]
    return [item.question[m.end() : end].strip() for m, end in zip(marks, ends, strict=True)]


def load_dataset(path: str | Path) -> Dataset:
    """Read and validate a VisualTrans JSON file (or the one of a folder, `data_file`);
    InputError names the item index and field."""
    path = data_file(path)
    raw = read_json(path)
    if not isinstance(raw, list):
        raise InputError(path, None, None, "expected a JSON list of items")
    if not raw:
        raise InputError(path, None, None, "the list of items is empty")
    warnings: list[str] = []
    items = [_parse_item(path, i, d, warnings) for i, d in enumerate(raw)]
    dataset = Dataset(path, items, warnings)
    for group in dataset.duplicate_groups():
        labels = {items[i].label for i in group}
        what = "duplicates with different labels" if len(labels) > 1 else "duplicates"
        warnings.append(f"items {', '.join(map(str, group))} are {what} (id {items[group[0]].id})")
    return dataset


def images_folder(path: str | Path, first: Item | None, images: str | Path | None = None) -> Path:
    """The folder the items' image paths are relative to: `images` if given (it must exist),
    else the images/ folder beside the JSON file `path` if it holds the `first` item's first
    image, else the JSON file's own folder."""
    if images is not None:
        folder = Path(images)
        if not folder.is_dir():
            raise UserError(f"{folder}: no such folder of images")
        return folder
    parent = data_file(path).parent
    beside = parent / "images"
    if first is not None and first.images and beside.is_dir() and (beside / first.images[0]).is_file():
        return beside
    return parent
