"""Path-traced TRANCE images: the shared Cycles engine (`tvr.render.cycles`) at TRANCE's presets.

The engine builds the release's look in bpy with no .blend files (see its docstring and
docs/rendering.md); TRANCE's scenes bring the release's lights, floor lines and backdrop place.
"""

from __future__ import annotations

from tvr.render import cycles as _engine
from tvr.render.cycles import (
    GLASS_ROUGHNESS,
    METAL_ANISOTROPY,
    METAL_MIX,
    METAL_ROUGHNESS,
    RUBBER_GLOSS_RGB,
    RUBBER_IOR,
    RUBBER_ROUGHNESS,
    RUBBER_SHEEN_IOR_OFFSET,
    RUBBER_VELVET_SIGMA,
)
from tvr.render.presets import Preset
from tvr.trance.render.presets import get_preset

__all__ = [
    "GLASS_ROUGHNESS",
    "METAL_ANISOTROPY",
    "METAL_MIX",
    "METAL_ROUGHNESS",
    "RUBBER_GLOSS_RGB",
    "RUBBER_IOR",
    "RUBBER_ROUGHNESS",
    "RUBBER_SHEEN_IOR_OFFSET",
    "RUBBER_VELVET_SIGMA",
    "CyclesRenderer",
]


class CyclesRenderer(_engine.CyclesRenderer):
    """Renders TRANCE's `SceneDescription`s with Cycles. Build one per process and reuse it."""

    def __init__(
        self,
        preset: Preset | str = "default",
        device: str = "auto",
        threads: int = 0,
        quiet: bool = True,
    ):
        super().__init__(
            get_preset(preset) if isinstance(preset, str) else preset, device, threads, quiet
        )
