"""Tiny VTT data sets in the release's layout with real JPEG state images, made by the tests."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from tests.vtt.samples import record

#: descriptions of the tiny set: a few words each
PHRASES = ("cut mango", "peel the orange", "pour milk", "add whipped cream", "flip steak",
           "remove seeds", "stir the soup", "put steak on grill")  # fmt: skip


def write_image_set(root: Path, sizes: dict[str, int], seed: int = 0, image_size: int = 48) -> Path:
    """`root/meta/vtt.jsonl` and `root/states/*.jpg`: per split, that many samples of 1 to 3
    transformations with random JPEG states; two topics of two categories."""
    from PIL import Image

    rng = np.random.default_rng(seed)
    (root / "meta").mkdir(parents=True, exist_ok=True)
    (root / "states").mkdir(parents=True, exist_ok=True)
    lines, i = [], 0
    for split, count in sizes.items():
        for _ in range(count):
            n = int(rng.integers(1, 4))
            labels = [PHRASES[int(k)] for k in rng.integers(0, len(PHRASES), n)]
            kind = i % 2
            rec = record(i, labels, split=split, category=("Dish", "Pets and Fruit")[kind],
                         topic=("Grill Steak", "Cut Mango")[kind])  # fmt: skip
            lines.append(json.dumps(rec))
            for s in range(n + 1):
                pixels = rng.integers(0, 256, (image_size, image_size, 3), dtype=np.uint8)
                Image.fromarray(pixels).save(root / "states" / f"{rec['id']}_{n + 1}_{s}.jpg",
                                             quality=90)  # fmt: skip
            i += 1
    (root / "meta" / "vtt.jsonl").write_text("\n".join(lines) + "\n")
    return root
