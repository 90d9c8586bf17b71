"""Render the four images of one sample (init.C, fin.L, fin.C, fin.R) with masks, and save them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from tvr.trance.data.sample import Sample
from tvr.trance.render.presets import Preset
from tvr.trance.render.scene import SceneDescription, sample_views

BACKENDS = ("cycles", "raster")


class Renderer(Protocol):
    """What a backend offers: one scene in, (colour image or None, object-index mask) out."""

    backend: str
    preset: Preset

    def render(
        self, desc: SceneDescription, image: bool = True
    ) -> tuple[np.ndarray | None, np.ndarray]: ...

    def close(self) -> None: ...


@dataclass
class RenderedImage:
    """One rendered view: file name, (H, W, 3) uint8 image (None if not asked), (H, W) int16 mask
    with the object index 0..9 of the first surface hit at each pixel centre, -1 for the floor."""

    name: str
    image: np.ndarray | None
    mask: np.ndarray

    def pixel_counts(self) -> np.ndarray:
        """Pixels per object index (10,)."""
        m = self.mask[self.mask >= 0]
        return np.bincount(m.ravel(), minlength=10)[:10]


def make_renderer(
    backend: str = "raster", preset: str | Preset = "default", **options: Any
) -> Renderer:
    """A renderer of the backend ("cycles" or "raster") at a quality preset."""
    if backend == "cycles":
        from tvr.trance.render.cycles import CyclesRenderer

        return CyclesRenderer(preset, **options)
    if backend == "raster":
        from tvr.trance.render.raster import RasterRenderer

        return RasterRenderer(preset, **options)
    raise ValueError(f"unknown backend {backend!r}: expected one of {', '.join(BACKENDS)}")


def render_sample(
    sample: Sample | dict[str, Any], renderer: Renderer, images: bool = True
) -> list[RenderedImage]:
    """The four views of a sample, in the order init.C, fin.L, fin.C, fin.R."""
    out = []
    for name, desc in sample_views(sample):
        img, mask = renderer.render(desc, image=images)
        out.append(RenderedImage(name, img, mask))
    return out


def write_images(
    rendered: list[RenderedImage], out_dir: str | Path, masks: bool = True
) -> list[Path]:
    """Save the PNGs under `out_dir` (and, if `masks`, one `{id}.masks.npz` of int8 masks keyed by
    image name); returns the paths written."""
    from PIL import Image

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for r in rendered:
        if r.image is not None:
            path = out / r.name
            Image.fromarray(r.image).save(path)
            paths.append(path)
    if masks and rendered:
        sample_id = rendered[0].name.rsplit("-", 1)[0]
        path = out / f"{sample_id}.masks.npz"
        np.savez_compressed(path, **{r.name: r.mask.astype(np.int8) for r in rendered})
        paths.append(path)
    return paths
