"""A few TRANCE samples for the tests (tvr sample format) and their images made with Pillow.

Object 0 has a different color in each sample, so the test server can tell the prompts apart
by the row `0 | cube | small | <color> | rubber` of the objects table.
"""

from __future__ import annotations

import json
from pathlib import Path

from PIL import Image

from tvr.trance.data.sample import Sample, Step, image_name
from tvr.trance.world import vocab

GRID = [(x, y) for y in (-8, 8) for x in (-16, -8, 0, 8, 16)]
KEY_COLORS = ("red", "blue", "green", "purple")


def sample_key(k: int) -> str:
    """The table row that identifies sample k in its prompt."""
    return f"0 | cube | small | {KEY_COLORS[k]} | rubber"


def make_sample(k: int) -> Sample:
    objects = [
        {"shape": "cube" if i == 0 else "sphere", "size": "small",
         "color": KEY_COLORS[k] if i == 0 else "gray", "material": "rubber",
         "position": list(GRID[i]), "rotation": 0.0}
        for i in range(vocab.NUM_OBJECTS)
    ]  # fmt: skip
    # sample 0 has one step (so it is in Basic), the others two; all change colors only
    changes = [(1, "yellow")] if k == 0 else [(1, "yellow"), (2, "cyan")]
    final = [dict(o) for o in objects]
    steps = []
    for obj, color in changes:
        final[obj] = {**final[obj], "color": color}
        steps.append(Step(obj, vocab.VALUE_INDEX[f"color.{color}"]))
    return Sample(
        id=f"test-{k:03d}",
        objects=objects,
        steps=steps,
        cameras={"L": [7.5, -6.5, 6.3], "C": [9.5, 0.0, 6.3], "R": [7.5, 6.5, 6.3]},
        lights={"key": [6.4, -2.9, 4.3], "back": [-1.2, 2.6, 5.8], "fill": [-4.7, -4.0, 5.0]},
        final=final,
    )


def make_trance(root: Path, n: int = 3) -> tuple[Path, Path, list[Sample]]:
    """Write `root/samples.jsonl` and `root/images/`; return (samples path, image dir, samples)."""
    images = root / "images"
    images.mkdir(parents=True, exist_ok=True)
    samples = [make_sample(k) for k in range(n)]
    for s in samples:
        Image.new("RGB", (32, 24), (10, 10, 10)).save(images / image_name(s.id, "init", "C"))
        for view in ("L", "C", "R"):
            Image.new("RGB", (32, 24), (90, 90, 90)).save(images / image_name(s.id, "fin", view))
    path = root / "samples.jsonl"
    path.write_text("".join(json.dumps(s.to_dict()) + "\n" for s in samples), encoding="utf-8")
    return path, images, samples


def steps_reply(steps: list[tuple[int, str]]) -> str:
    body = json.dumps({"steps": [{"obj": o, "value": v} for o, v in steps]})
    return f"<think>Object 1 turned yellow.</think>\n<answer>{body}</answer>"
