"""CLEVRER's render quality presets: Cycles samples and the raster backend's anti-aliasing."""

from __future__ import annotations

from tvr.render.presets import Preset, pick_preset

PRESETS: dict[str, Preset] = {
    # tests and quick looks: Cycles at 2 samples (noisy)
    "preview": Preset("preview", 2, 4, 8, False, 2.0, 0),
    # Cycles: 12 samples plus OpenImageDenoise (TRANCE's everyday setting, docs/rendering.md);
    # raster: no MSAA, because on llvmpipe 4x MSAA doubles the time of a frame
    "default": Preset("default", 12, 4, 8, True, 2.0, 0),
    # CLEVR's render_images.py: 512 samples, filter glossy 2.0, 8 transparent bounces, and
    # base_scene.blend's 4 diffuse and 4 glossy bounces (its total cap is 12; ours is 4, which
    # only cuts paths of more than 4 bounces); raster with 4x MSAA
    "paper": Preset("paper", 512, 4, 8, False, 2.0, 4),
}


def get_preset(name: str) -> Preset:
    """The preset called `name`; ValueError naming the known ones otherwise."""
    return pick_preset(name, PRESETS)
