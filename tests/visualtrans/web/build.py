"""A tiny build folder as `tvr visualtrans build` leaves it for verification: questions/
VisualTrans.json in the release format (the items of tests/visualtrans/make_data.py), small PNG
images under questions/images/, and questions/families.jsonl; `planted` labels replace true
ones (a wrong answer of the same format), so a test knows which items verification must catch."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from tests.visualtrans.make_data import ITEMS
from tvr.visualtrans.data.dataset import item_id

#: item position -> a wrong label of the same answer format
PLANTED = {0: "3", 2: "A", 5: "red block"}


def truth() -> list[str]:
    """The true answer of each item of the build, in order."""
    return [spec["label"] for spec in ITEMS]


def _picture(path: Path, n: int, k: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    image = Image.new("RGB", (64, 48), (230, 230, 225))
    draw = ImageDraw.Draw(image)
    for b in range(1 + (n + k) % 3):  # a few blocks, more or fewer per picture
        x = 6 + 18 * b
        draw.rectangle([x, 30 - 10 * k % 20, x + 14, 44], fill=(40 * n % 255, 90 + 50 * b, 160))
    image.save(path, format="PNG")


def make_build(
    root: Path, planted: dict[int, str] | None = None, only: tuple[int, ...] | None = None
) -> tuple[Path, list[dict[str, Any]]]:
    """Write the build under `root` (of the items at the positions `only`, if given; their
    [Qnn] markers keep their place in ITEMS); (build folder, items as written)."""
    planted = PLANTED if planted is None else planted
    questions = root / "questions"
    images = questions / "images"
    items, families = [], []
    for n, spec in enumerate(ITEMS):
        if only is not None and n not in only:
            continue
        scene = spec["scene"]
        stem = f"{scene}/{scene}_{100 + n}"
        paths = [f"{stem}_start.png", f"{stem}_end.png"]
        if spec.get("interm"):
            paths += [f"{stem}_medium{k}.png" for k in range(1, 5)]
        for k, rel in enumerate(paths):
            _picture(images / rel, n, k)
        item = {key: v for key, v in spec.items() if key != "interm"}
        item["images"] = paths
        item["label"] = planted.get(n, spec["label"])
        items.append(item)
        families.append({"id": item_id(item["question"], paths),
                         "family": f"{spec['task_type']}.f{n % 2}",
                         "task_type": spec["task_type"]})  # fmt: skip
    questions.mkdir(parents=True, exist_ok=True)
    (questions / "VisualTrans.json").write_text(json.dumps(items, indent=2), encoding="utf-8")
    (questions / "families.jsonl").write_text("".join(json.dumps(f) + "\n" for f in families))
    return root, items
