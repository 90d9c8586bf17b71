"""The scene parser's labels: every object of every image of a `tvr generate` split, from the
scene JSON (attributes, grid position, the sample's own jittered camera) and the raster
renderer's object-index mask (how many pixels of each object show).

`image_labels(sample)` gives one (4, 10, LABEL_FIELDS) array per sample, in the store's image
order (init.C, fin.L, fin.C, fin.R); `split_labels` stacks a split's and caches them in a file.
An object outside the visible area is absent (`present` 0); one that shows no pixel is present
with 0 pixels (the parser is not asked to find it).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from tvr.trance.data.sample import Sample
from tvr.trance.perception.geometry import project_centre
from tvr.trance.render.scene import build_scene, is_visible_position
from tvr.trance.world import vocab
from tvr.trance.world.camera import CAMERA_BASE
from tvr.trance.world.vocab import IMAGE_SLOTS

#: the columns of a label row
FIELDS = ("present", "u", "v", "size", "color", "material", "shape", "pixels", "x", "y")
COL = {name: k for k, name in enumerate(FIELDS)}
LABEL_FIELDS = len(FIELDS)
#: labels format, saved with the cache (a change of the rules above makes a new cache)
LABELS_VERSION = 1

_RENDERER: Any = None


def _mask_renderer() -> Any:
    global _RENDERER
    if _RENDERER is None:
        from tvr.trance.render.raster import RasterRenderer

        _RENDERER = RasterRenderer("preview")
    return _RENDERER


def image_labels(sample: Sample | dict[str, Any]) -> np.ndarray:
    """(4, 10, LABEL_FIELDS) float32 labels of one sample's four images."""
    d = sample.to_dict() if isinstance(sample, Sample) else sample
    cameras = d.get("cameras") or {}
    out = np.zeros((len(IMAGE_SLOTS), vocab.NUM_OBJECTS, LABEL_FIELDS), dtype=np.float32)
    renderer = _mask_renderer()
    for k, (stage, view) in enumerate(IMAGE_SLOTS):
        objects = d["objects"] if stage == "init" else d["final"]
        cam = cameras.get(view, CAMERA_BASE[view])
        mask = renderer.render_mask(build_scene(objects, cam, d.get("lights")))
        counts = np.bincount(mask[mask >= 0].ravel(), minlength=len(objects))
        for i, o in enumerate(objects):
            if not is_visible_position(o["position"]):
                continue
            u, v = project_centre(o, cam)
            out[k, i] = (
                1.0, u, v,
                vocab.SIZES.index(o["size"]), vocab.COLORS.index(o["color"]),
                vocab.MATERIALS.index(o["material"]), vocab.SHAPES.index(o["shape"]),
                counts[i], o["position"][0], o["position"][1],
            )  # fmt: skip
    return out


def split_labels(samples: list[Sample], cache: Path | None = None) -> np.ndarray:
    """(n, 4, 10, LABEL_FIELDS) labels of a split's samples, read from `cache` when it holds
    these samples' (same ids, same version), else computed and written there."""
    ids = np.array([s.id for s in samples])
    if cache is not None and cache.exists():
        with np.load(cache) as f:
            if int(f["version"]) == LABELS_VERSION and np.array_equal(f["ids"], ids):
                return f["labels"]
    labels = (
        np.stack([image_labels(s) for s in samples])
        if samples
        else np.zeros((0, len(IMAGE_SLOTS), vocab.NUM_OBJECTS, LABEL_FIELDS), dtype=np.float32)
    )
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(cache.name + ".tmp.npz")
        np.savez_compressed(tmp, labels=labels, ids=ids, version=LABELS_VERSION)
        tmp.replace(cache)
    return labels
