"""Object crops with Grounding DINO (the paper's auxiliary views for the metadata).

The detector is `transformers`' zero-shot object detection (AutoModelForZeroShotObjectDetection
and AutoProcessor), loaded from a local folder only (`--detector PATH`, local_files_only: never
a download). For the scenes with a task object to frame, a text query per scene finds it in the
start and the end frame; the best box with a score of at least `threshold` (padded by 10%) is
cropped and saved as BUILD/annotate/crops/SCENE/EPISODE_ROLE_crop.jpg; the crops go to the
model after the keyframes. Scenes without a query, and frames where nothing scores enough, get
no crop (counted in the note).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tvr.core.errors import UserError

#: scene -> the detector's text query (Grounding DINO wants lower case ending in a period)
QUERIES = {
    "build_unstack_lego": "stacked blocks.",
    "assemble_disassemble_legos": "stacked blocks.",
    "stack_unstack_bowls": "stacked bowls.",
    "make_sandwich": "prepared sandwich.",
    "play_reset_connect_four": "connect four board.",
}
THRESHOLD = 0.3
PAD = 0.1


class Detector:
    """A Grounding DINO model and processor from a local folder, on the CPU (or CUDA if there)."""

    def __init__(self, path: str | Path) -> None:
        path = Path(path)
        if not (path / "config.json").is_file():
            raise UserError(f"--detector {path}: not a local model folder (no config.json); tvr "
                            "never downloads a detector")  # fmt: skip
        from tvr.core.extras import require_extra

        require_extra("detect", "--detector", "torch", "transformers")
        import torch
        from transformers import AutoModelForZeroShotObjectDetection, AutoProcessor

        self.torch = torch
        self.device = "cuda" if torch.cuda.is_available() else "cpu"
        self.processor = AutoProcessor.from_pretrained(path, local_files_only=True)
        self.model = AutoModelForZeroShotObjectDetection.from_pretrained(
            path, local_files_only=True
        ).to(self.device)
        self.model.eval()

    def best_box(self, image: Any, query: str, threshold: float) -> tuple[list[float], float] | None:
        """(x0, y0, x1, y1) in pixels and the score of the best box for `query`, or None."""
        inputs = self.processor(images=image, text=query, return_tensors="pt").to(self.device)
        with self.torch.no_grad():
            outputs = self.model(**inputs)
        result = self.processor.post_process_grounded_object_detection(
            outputs, inputs.input_ids, threshold=threshold, text_threshold=threshold,
            target_sizes=[image.size[::-1]],
        )[0]  # fmt: skip
        if len(result["scores"]) == 0:
            return None
        i = int(result["scores"].argmax())
        return [float(v) for v in result["boxes"][i]], float(result["scores"][i])


def crop_box(box: list[float], width: int, height: int, pad: float = PAD) -> tuple[int, int, int, int]:
    x0, y0, x1, y1 = box
    dx, dy = (x1 - x0) * pad, (y1 - y0) * pad
    left, top = max(0, int(x0 - dx)), max(0, int(y0 - dy))
    right, bottom = min(width, int(x1 + dx) + 1), min(height, int(y1 + dy) + 1)
    if right - left < 2 or bottom - top < 2:
        return 0, 0, width, height
    return left, top, right, bottom


def crop_episodes(detector: str | Path, records: list[dict[str, Any]], images: Path, out: Path,
                  threshold: float = THRESHOLD) -> tuple[dict[str, list[Path]], str]:  # fmt: skip
    """Crop the task object of every episode whose scene has a query; (episode -> crop files,
    the note for the report)."""
    from PIL import Image

    from tvr.video.frames import write_image

    model = Detector(detector)
    crops: dict[str, list[Path]] = {}
    made = missed = 0
    for r in records:
        query = QUERIES.get(r["scene"])
        if query is None:
            continue
        for role in ("start", "end"):
            rel = r["frames"][role]["image"]
            dest = out / r["scene"] / f"{r['episode']}_{role}_crop.jpg"
            if not dest.is_file():
                image = Image.open(images / rel).convert("RGB")
                found = model.best_box(image, query, threshold)
                if found is None:
                    missed += 1
                    continue
                box = crop_box(found[0], *image.size)
                import numpy as np

                write_image(dest, np.asarray(image.crop(box)))
            crops.setdefault(r["episode"], []).append(dest)
            made += 1
    no_query = sorted({r["scene"] for r in records if r["scene"] not in QUERIES})
    note = (f"Grounding DINO from {detector}: {made} crops, {missed} frames with no box scoring "
            f">= {threshold}" + (f"; no query for {', '.join(no_query)}" if no_query else ""))  # fmt: skip
    return crops, note
