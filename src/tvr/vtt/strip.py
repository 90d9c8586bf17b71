"""The event strip: a sample's N+1 state images side by side in state order, each panel numbered.

Panels are placed in the order of the state index i of `{id}_{N+1}_{i}.jpg` (never the order of
a directory listing, where `_10` comes before `_2`), scaled to one height, a white gap between
them, and numbered 1..N+1 in a box at the top left corner of each panel. Made with Pillow; the
same files give the same bytes.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

from tvr.core.errors import UserError
from tvr.core.images import open_rgb

GAP = 4  # white pixels between panels (the release's montage used 2 + 2)
JPEG_QUALITY = 95


def strip_image(paths: Sequence[Path], height: int | None = None):
    """The strip of `paths` in the given order, as a Pillow RGB image. `height`: the panels'
    height (default: the lowest of the images)."""
    if not paths:
        raise UserError("an event strip needs at least one state image")
    return strip_of([open_rgb(p, "state image") for p in paths], height)


def strip_of(images: Sequence, height: int | None = None):
    """The strip of Pillow RGB `images` in the given order (`strip_image` on read images)."""
    from PIL import Image, ImageDraw, ImageFont

    if not images:
        raise UserError("an event strip needs at least one state image")
    height = height or min(im.height for im in images)
    panels = [
        im
        if im.height == height
        else im.resize(
            (max(1, round(im.width * height / im.height)), height), Image.Resampling.BICUBIC
        )
        for im in images
    ]
    width = sum(p.width for p in panels) + GAP * (len(panels) - 1)
    strip = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(strip)
    font = ImageFont.load_default(size=max(10, height // 9))
    x = 0
    for number, panel in enumerate(panels, start=1):
        strip.paste(panel, (x, 0))
        _number_box(draw, font, x, str(number), height)
        x += panel.width + GAP
    return strip


def _number_box(draw, font, x: int, text: str, height: int) -> None:
    pad = max(2, height // 60)
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    box = (x, 0, x + (right - left) + 2 * pad, (bottom - top) + 2 * pad)
    draw.rectangle(box, fill="black")
    draw.text((x + pad - left, pad - top), text, fill="white", font=font)


def strip_jpeg(paths: Sequence[Path]) -> bytes:
    """The strip of `paths` as JPEG bytes (a `ComposedImage`'s compose function)."""
    out = io.BytesIO()
    strip_image(paths).save(out, format="JPEG", quality=JPEG_QUALITY)
    return out.getvalue()
