"""Quality presets of the renderers: what one level sets (samples, bounces, denoising, MSAA)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Preset:
    """Render settings of one quality level (Cycles fields, then the raster backend's)."""

    name: str
    samples: int  # Cycles samples per pixel
    max_bounces: int
    transparent_bounces: int
    denoise: bool  # OpenImageDenoise on the colour pass (no albedo/normal guides)
    blur_glossy: float  # Cycles' filter glossy: trades glossy noise for blur
    msaa: int  # raster backend: multisample anti-aliasing samples (0 = off; capped by the driver)


def pick_preset(name: str, presets: Mapping[str, Preset]) -> Preset:
    """The preset called `name` in `presets`; ValueError naming the known ones otherwise."""
    try:
        return presets[name]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}: expected one of {', '.join(presets)}") from None
