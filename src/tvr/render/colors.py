"""CLEVR's eight colours (no numpy here: the CLI's option lists import this at start-up)."""

from __future__ import annotations

#: CLEVR's eight colours (its properties.json), 0-255 sRGB numbers that CLEVR's generator divides
#: by 255 and uses as linear reflectance; TRANCE and CLEVRER both use them
CLEVR_COLOR_RGB: dict[str, tuple[int, int, int]] = {
    "gray": (87, 87, 87),
    "red": (173, 35, 35),
    "blue": (42, 75, 215),
    "green": (29, 105, 20),
    "brown": (129, 74, 25),
    "purple": (129, 38, 192),
    "cyan": (41, 208, 208),
    "yellow": (255, 238, 51),
}
