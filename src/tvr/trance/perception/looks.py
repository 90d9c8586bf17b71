"""The looks of TRANCE images, and a randomised look for training the parser (issue 41).

A *look* is how the images were made: `tvr generate --backend raster` or `--backend cycles`
(the release's renderer), read from the dataset's config.json (`dataset_look`). A scene parser
run records the looks it was trained on (`looks.json` in the run folder, `run_looks`).

`randomise_look(image, rng, strength)` changes a training image's look without moving anything
(the labels stay true): light intensity (a gain), light direction (a smooth shading ramp across
the image at a random angle), sheen (a gamma curve: highlights against diffuse), colour jitter
(per-channel gains and saturation), blur (a Gaussian of up to 1 pixel at 160x120) and noise
(Gaussian, plus a few bright "firefly" pixels as a path tracer's residual noise leaves). It is
the photometric half of the issue's "raster images with the look randomised"; drawing the
raster images themselves with randomised materials and lights is not done here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tvr.trance.choices import LOOKS

#: the file a scene parser run records its looks in
LOOKS_FILE = "looks.json"


def randomise_look(
    image: np.ndarray, rng: np.random.Generator, strength: float = 1.0
) -> np.ndarray:
    """A uint8 (H, W, 3) image with its look randomised (`strength` 0: unchanged, 1: the full
    ranges); positions and shapes are untouched."""
    if strength <= 0:
        return image
    s = float(strength)
    f = np.asarray(image, dtype=np.float32) / 255.0
    h, w = f.shape[:2]
    # sheen: a gamma curve (how bright highlights are against the diffuse shading)
    f = f ** float(np.exp(rng.normal(0.0, 0.2 * s)))
    # light intensity and direction: a gain and a ramp across the image
    angle = rng.uniform(0.0, 2.0 * np.pi)
    yy, xx = np.mgrid[-1.0 : 1.0 : h * 1j, -1.0 : 1.0 : w * 1j]
    ramp = 1.0 + rng.uniform(0.0, 0.25 * s) * (np.cos(angle) * xx + np.sin(angle) * yy)
    f = f * (float(np.exp(rng.normal(0.0, 0.2 * s))) * ramp[..., None]).astype(np.float32)
    # colour jitter: per-channel gains and saturation
    f = f * np.exp(rng.normal(0.0, 0.06 * s, size=3)).astype(np.float32)
    grey = f.mean(axis=-1, keepdims=True)
    f = grey + (f - grey) * float(rng.uniform(1.0 - 0.3 * s, 1.0 + 0.3 * s))
    # blur
    if rng.random() < 0.5:
        from scipy.ndimage import gaussian_filter

        f = gaussian_filter(f, sigma=(rng.uniform(0.0, s), rng.uniform(0.0, s), 0.0))
    # noise: Gaussian, and fireflies
    f = f + rng.normal(0.0, rng.uniform(0.0, 0.04 * s), size=f.shape).astype(np.float32)
    fireflies = rng.random((h, w)) < rng.uniform(0.0, 0.002 * s)
    f[fireflies] = rng.uniform(0.7, 1.0, size=(int(fireflies.sum()), 1))
    return (np.clip(f, 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)


def dataset_look(folder: str | Path) -> str | None:
    """The look of a `tvr generate` dataset folder's images (its config.json `backend`), or
    None where the folder has no such file (a folder of PNGs, a release download)."""
    from tvr.core.jsonl import read_json

    path = Path(folder) / "config.json"
    if not path.is_file():
        return None
    backend = read_json(path).get("backend")
    return str(backend) if backend in LOOKS else None


def record_looks(run_dir: str | Path, data: str | Path, augment_look: float) -> dict[str, Any]:
    """Write the run's looks file: what it was trained on (the dataset's look; `randomised`
    when its images had their look randomised)."""
    from tvr.core.jsonl import write_json

    look = dataset_look(data)
    info = {"looks": [look] if look else [], "randomised": augment_look > 0,
            "augment_look": augment_look}  # fmt: skip
    write_json(Path(run_dir) / LOOKS_FILE, info)
    return info


def run_looks(run: str | Path) -> list[str] | None:
    """The looks a parser run (its folder, or a checkpoint inside it) was trained on; None
    where the run recorded none (runs before issue 41)."""
    p = Path(run)
    for folder in (p, *p.parents[:3]) if p.suffix == ".ckpt" else (p,):
        path = folder / LOOKS_FILE
        if path.is_file():
            from tvr.core.jsonl import read_json

            return list(read_json(path).get("looks", []))
    return None
