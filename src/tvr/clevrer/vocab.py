"""CLEVRER's vocabulary and video constants, defined once: attributes, frame rate, frame counts, size."""

from __future__ import annotations

# CLEVR's eight colours, its three shapes and two materials (CLEVRER uses one size)
COLORS: tuple[str, ...] = ("gray", "red", "blue", "green", "brown", "purple", "cyan", "yellow")
SHAPES: tuple[str, ...] = ("cube", "sphere", "cylinder")
MATERIALS: tuple[str, ...] = ("rubber", "metal")

FPS = 25
# 128 frames (5.12 s) are shown; the simulation runs 7 s, the rest is what predictive questions ask
SHOWN_FRAMES = 128
SIMULATED_SECONDS = 7.0
SIMULATED_FRAMES = int(SIMULATED_SECONDS * FPS)  # 175

FRAME_WIDTH = 480
FRAME_HEIGHT = 320

EVENT_KINDS: tuple[str, ...] = ("in", "out", "collision")
