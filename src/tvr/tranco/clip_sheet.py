"""A sheet of numbered candidate clips: one clip per row, its number in a box, then its frames
left to right in time order. Made with Pillow; the same files give the same bytes."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

from tvr.core.errors import UserError
from tvr.core.images import open_rgb

GAP = 4  # white pixels between frames and between rows
ROW_HEIGHT = 128  # pixels per row (each frame scaled to it)
JPEG_QUALITY = 90


def clip_sheet(rows: Sequence[tuple[int, Sequence[Path]]], height: int = ROW_HEIGHT):
    """The sheet of `rows` ((number, frame files) per clip, in order) as a Pillow RGB image."""
    from PIL import Image, ImageDraw, ImageFont

    if not rows:
        raise UserError("a clip sheet needs at least one clip")
    font = ImageFont.load_default(size=max(10, height // 3))
    label_width = max(height // 2, 3 * height // 5) + 2 * GAP
    scaled = []
    for _, frames in rows:
        images = [open_rgb(p, "clip frame") for p in frames]
        scaled.append([im.resize((max(1, round(im.width * height / im.height)), height),
                                 Image.Resampling.BICUBIC) for im in images])  # fmt: skip
    width = label_width + max(sum(im.width + GAP for im in row) for row in scaled)
    sheet = Image.new("RGB", (width, len(rows) * (height + GAP) - GAP), "white")
    draw = ImageDraw.Draw(sheet)
    for r, ((number, _), images) in enumerate(zip(rows, scaled, strict=True)):
        y = r * (height + GAP)
        _number_box(draw, font, (0, y, label_width - GAP, y + height), str(number))
        x = label_width
        for im in images:
            sheet.paste(im, (x, y))
            x += im.width + GAP
    return sheet


def _number_box(draw, font, box: tuple[int, int, int, int], text: str) -> None:
    draw.rectangle(box, fill="black")
    left, top, right, bottom = draw.textbbox((0, 0), text, font=font)
    x = box[0] + (box[2] - box[0] - (right - left)) // 2 - left
    y = box[1] + (box[3] - box[1] - (bottom - top)) // 2 - top
    draw.text((x, y), text, fill="white", font=font)


def clip_sheet_jpeg(
    sources: Sequence[Path], numbers: Sequence[int], frames_per_row: Sequence[int]
) -> bytes:
    """The sheet as JPEG bytes, from the flat list of frame files `sources` grouped into rows
    of `frames_per_row` frames numbered `numbers` (a `ComposedImage`'s compose function, with
    the numbers and the grouping bound)."""
    rows, start = [], 0
    for number, count in zip(numbers, frames_per_row, strict=True):
        rows.append((number, sources[start : start + count]))
        start += count
    out = io.BytesIO()
    clip_sheet(rows).save(out, format="JPEG", quality=JPEG_QUALITY)
    return out.getvalue()
