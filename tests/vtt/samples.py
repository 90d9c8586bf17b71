"""Small VTT records and prediction files in the release's layout, made by the tests."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import shutil
from pathlib import Path
from typing import Any

import pytest


def sample_id(i: int) -> str:
    return hashlib.md5(f"sample {i}".encode()).hexdigest()[:16]


def record(
    i: int,
    labels: list[str],
    split: str = "test",
    category: str = "Dish",
    topic: str = "Grill Steak",
    ori: str = "coin",
) -> dict[str, Any]:
    """A valid record with len(labels) transformations, one 5 s step every 10 s."""
    sid, n = sample_id(i), len(labels)
    return {
        "id": sid, "youtube_id": f"video{i}", "ori": ori, "split": split, "duration": 120.5,
        "topic": topic, "category": category,
        "annotation": [{"clip_id": f"{sid}_{n}_{k}", "segment": [10.0 * k, 10.0 * k + 5],
                        "label": label} for k, label in enumerate(labels)],
        "frames": {f"{sid}_{n}_{k}": {"frames": 30, "imgs": 30} for k in range(n)},
    }  # fmt: skip


def write_lines(path: Path, items: list[Any]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in items))
    return path


def small_records() -> list[dict[str, Any]]:
    """Three test samples of two categories and N = 1, 2, 3, and one training sample."""
    return [
        record(0, ["put steak on grill", "flip steak", "remove steak"]),
        record(1, ["add whipped cream", "pour coffee"], category="Drink and Snack",
               topic="Make Irish Coffee", ori="cross"),
        record(2, ["cut mango"], category="Pets and Fruit", topic="Cut Mango"),
        record(3, ["peel mango", "cut mango"], split="train", category="Pets and Fruit",
               topic="Cut Mango"),
    ]  # fmt: skip


#: the coco-caption metrics run Java (the PTB tokenizer, METEOR, SPICE) from pycocoevalcap
needs_java = pytest.mark.skipif(
    shutil.which("java") is None or importlib.util.find_spec("pycocoevalcap") is None,
    reason="needs Java and pycocoevalcap (the coco-caption metrics)",
)
