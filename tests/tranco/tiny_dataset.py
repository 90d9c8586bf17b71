"""A tiny TRANCO dataset in tvr's layout, made by the tests: random JPEG states and clip frames.

Each clip's frames share a random base colour with a little noise, and each state image is a
noisy picture of its own, so every image has features of its own under any encoder. The val and
test samples store tiny candidate sets drawn from their own split (`tiny_candidates`).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from PIL import Image

from tvr.tranco.data.candidates import tiny_candidates
from tvr.tranco.data.layout import FORMAT, clip_id, frame_path, state_path


def _jpeg(path: Path, base: np.ndarray, rng: np.random.Generator, size: int) -> None:
    noise = rng.integers(-30, 31, size=(size, size * 4 // 3, 3))  # 4:3, as video frames
    pixels = np.clip(base[None, None, :] + noise, 0, 255).astype(np.uint8)
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(pixels).save(path, quality=90)


def make_tiny_dataset(
    root: Path,
    sizes: dict[str, int] | None = None,
    steps: tuple[int, ...] = (2, 3),
    frames_per_clip: int = 3,
    tiny: int = 6,
    image_size: int = 24,
    seed: int = 0,
) -> Path:
    """Write a dataset of `sizes` samples per split (default 6/3/3) at `root`; the samples have
    `steps` clips in turn; images are `image_size` pixels high, 4:3. Returns `root`."""
    sizes = sizes or {"train": 6, "val": 3, "test": 3}
    rng = np.random.default_rng(seed)
    root.mkdir(parents=True, exist_ok=True)
    clips_lines, counts, clip_counts = [], {}, {}
    for split, n in sizes.items():
        records = []
        for i in range(n):
            sample = f"{split}{i:03d}"
            clips = [clip_id(sample, j) for j in range(steps[i % len(steps)])]
            for which in ("initial", "final"):
                _jpeg(root / state_path(sample, which), rng.integers(0, 256, 3), rng, image_size)
            for j, clip in enumerate(clips):
                base = rng.integers(0, 256, 3)
                frames = [frame_path(clip, f) for f in range(frames_per_clip)]
                for rel in frames:
                    _jpeg(root / rel, base, rng, image_size)
                clips_lines.append({"id": clip, "split": split, "sample": sample, "index": j,
                                    "label": f"step {j}", "segment": [float(j), float(j + 1)],
                                    "frames": frames})  # fmt: skip
            records.append({"id": sample, "clips": clips,
                            "initial": state_path(sample, "initial"),
                            "final": state_path(sample, "final"), "steps": len(clips),
                            "task": "tiny task", "domain": "tests"})  # fmt: skip
        if split != "train":
            chosen = tiny_candidates([(r["id"], r["clips"]) for r in records], tiny, seed)
            for r in records:
                r["candidates"] = chosen[r["id"]]
        (root / f"{split}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
        counts[split] = n
        clip_counts[split] = sum(len(r["clips"]) for r in records)
    (root / "clips.jsonl").write_text("".join(json.dumps(c) + "\n" for c in clips_lines))
    info = {"format": FORMAT, "source": "trance-clips", "config": {"seed": seed},
            "frames_per_clip": frames_per_clip, "splits": counts, "clips": clip_counts,
            "skipped_videos": []}  # fmt: skip
    (root / "dataset.json").write_text(json.dumps(info, indent=2))
    return root
