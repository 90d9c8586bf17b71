"""A small VisualTrans-shaped data set for the tests: a JSON list and images made with Pillow.

Every question carries a marker `[Qnn]` so the test server can tell the items apart. The set
covers the six subtasks, the three answer formats, a `mask`, an intermediate-state item with six
images, one duplicated item, and one image that is a PNG under a `.jpg` name.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from PIL import Image

ITEMS: list[dict[str, Any]] = [
    {"task_type": "count", "scene": "pick_place_food", "label": "2",
     "question": "[Q01] How many food items are in the plate now that were not there before?"},
    {"task_type": "count", "scene": "sort_beads", "label": "0",
     "question": "[Q02] How many new groups of beads with the same color were formed?"},
    {"task_type": "procedural_causal", "scene": "stack_unstack_bowls", "label": "B",
     "question": "[Q03] Which operation most likely occurred?\nA. Nest the teal bowl. B. Stack "
                 "the purple bowl. C. Add the sage bowl. D. Stack the green bowl."},
    {"task_type": "procedural_plan", "scene": "make_sandwich", "label": "C", "mask": "first",
     "question": "[Q04] What is the most likely operation in the first step?\nA. a B. b C. c D. d"},
    {"task_type": "procedural_interm", "scene": "build_unstack_lego", "label": "D", "interm": True,
     "question": "[Q05] Which one of image3, image4, image5 and image6 is a reasonable "
                 "intermediate state?\nA. image3 B. image4 C. image5 D. image6"},
    {"task_type": "spatial_fine_grained", "scene": "build_unstack_lego",
     "label": "green block, white block",
     "question": "[Q06] List all objects positioned above the object that was originally "
                 "leftmost. Only select from the given object list:green block, white block, "
                 "red block. Do not add or infer any new objects. "},
    {"task_type": "spatial_fine_grained", "scene": "make_sandwich",
     "label": "brown and beige bacon strip, red tomato slice",
     "question": "[Q07] List all objects positioned below the object that was originally "
                 "rightmost. Only select from the given object list:brown and beige bacon strip, "
                 "red tomato slice, green lettuce leaf. Do not add or infer any new objects. "},
    {"task_type": "spatial_fine_grained", "scene": "stack_unstack_bowls", "label": "none",
     "question": "[Q08] List all objects positioned below the object that was originally "
                 "farthest from the camera. Only select from the given object list:orange bowl, "
                 "light teal bowl. Do not add or infer any new objects. "},
    {"task_type": "spatial_global", "scene": "insert_remove_bookshelf", "label": "A",
     "question": "[Q09] Has the relative left-to-right position of the three books changed?\n"
                 "A. No B. Yes, red and blue swapped C. Yes, all moved D. Yes, green moved"},
    {"task_type": "spatial_fine_grained", "scene": "stack_unstack_bowls", "label": "B",
     "question": "[Q10] After the transformation, where is the object originally at the "
                 "rightmost position now located?\nA. top B. bottom C. middle D. gone"},
]  # fmt: skip

#: which item is duplicated (appended once more at the end of the list)
DUPLICATED = 2


def _image(path: Path, color: tuple[int, int, int], fmt: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", (8, 6), color).save(path, format=fmt)


def make_visualtrans(root: Path) -> tuple[Path, Path, list[dict[str, Any]]]:
    """Write `root/visualtrans.json` and `root/images/...`; return (json path, image dir, items)."""
    images = root / "images"
    items = []
    for n, spec in enumerate(ITEMS):
        scene = spec["scene"]
        stem = f"{scene}/{scene}_{100 + n}"
        paths = [f"{stem}_start.jpg", f"{stem}_end.jpg"]
        if spec.get("interm"):
            paths += [f"{stem}_medium{k}.jpg" for k in range(1, 5)]
        for k, rel in enumerate(paths):
            # item 0's end image is a PNG under a .jpg name: the MIME type must follow the bytes
            fmt = "PNG" if (n == 0 and k == 1) else "JPEG"
            _image(images / rel, (20 * n, 40 * k % 255, 100), fmt)
        item = {k: v for k, v in spec.items() if k != "interm"}
        item["images"] = paths
        items.append(item)
    items.append(dict(items[DUPLICATED]))
    data = root / "visualtrans.json"
    data.write_text(json.dumps(items, indent=2), encoding="utf-8")
    return data, images, items


#: correct replies in assorted styles, by marker
CORRECT_REPLIES = {
    "[Q01]": "<think>Two new items.</think>\n<answer>2</answer>",
    "[Q02]": "<think>No group formed.</think>\n<answer>0</answer>",
    "[Q03]": "<think>...</think><answer>B</answer>",
    "[Q04]": "Reasoning here.\nFinal Answer: C",
    "[Q05]": "<think>image6 fits.</think><answer>D</answer>",
    "[Q06]": "<answer>white block, green block</answer>",
    "[Q07]": "<answer>red tomato slice, brown and beige bacon strip</answer>",
    "[Q08]": "<answer>none</answer>",
    "[Q09]": "<answer>A</answer>",
    "[Q10]": "<answer>B</answer>",
}
