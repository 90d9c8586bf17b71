"""TRANCE's quality presets of the renderers: samples, bounces, denoising, raster MSAA."""

from __future__ import annotations

from tvr.render.presets import Preset, pick_preset

PRESETS: dict[str, Preset] = {
    # tests and quick looks: a few samples, noisy
    "preview": Preset("preview", 2, 4, 8, False, 2.0, 0),
    # 12 samples plus OpenImageDenoise on the colour pass: the everyday setting. At 16 samples
    # the speed-up over `paper` measured 24-30x here, at 12 it is 31-34x with SSIM still >= 0.97
    # (docs/rendering.md)
    "default": Preset("default", 12, 4, 8, True, 2.0, 4),
    # the public release's settings (512 samples, 4 bounces, 8 transparent bounces; filter glossy
    # 0 as in base_scene.blend)
    "paper": Preset("paper", 512, 4, 8, False, 0.0, 8),
}


def get_preset(name: str) -> Preset:
    """The preset called `name`; ValueError naming the known ones otherwise."""
    return pick_preset(name, PRESETS)


__all__ = ["PRESETS", "Preset", "get_preset"]
