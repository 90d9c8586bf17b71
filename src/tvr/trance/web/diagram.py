"""A top-down SVG diagram of a scene's objects (the papers' "visualization of the initial
objects"): the plane, the visible square, each object drawn with its shape, size, colour and
material, and its index.

Orientation as seen from the centre camera, which stands on the +x side ("behind") looking at
the origin: "front" (-x) is at the top, "right" (+y) to the right.
"""

from __future__ import annotations

from html import escape
from typing import Any

from tvr.trance.world import vocab

SCALE = 5  # pixels per grid unit
PAD = 14


def _xy(x: int, y: int) -> tuple[float, float]:
    """Pixel coordinates of grid point (x, y)."""
    return (PAD + (y - vocab.GRID_MIN) * SCALE, PAD + (x - vocab.GRID_MIN) * SCALE)


def _rgb(color: str) -> str:
    r, g, b = vocab.COLOR_RGB[color]
    return f"rgb({r},{g},{b})"


def _text_color(color: str) -> str:
    r, g, b = vocab.COLOR_RGB[color]
    return "#000" if 0.299 * r + 0.587 * g + 0.114 * b > 140 else "#fff"


def objects_svg(
    objects: list[dict[str, Any]], highlight: set[int] | None = None, title: str = ""
) -> str:
    """The SVG markup (a string; every text in it is escaped)."""
    highlight = highlight or set()
    span = (vocab.GRID_MAX - vocab.GRID_MIN) * SCALE
    size = span + 2 * PAD
    x0, y0 = _xy(vocab.GRID_MIN, vocab.GRID_MIN)
    vx, vy = _xy(vocab.VISIBLE_MIN, vocab.VISIBLE_MIN)
    vis = (vocab.VISIBLE_MAX - vocab.VISIBLE_MIN) * SCALE
    parts = [
        f'<svg class="diagram" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {size} {size}" '
        f'width="{size}" height="{size}" role="img" aria-label="{escape(title or "top-down diagram of the objects")}">',
        f'<rect x="{x0}" y="{y0}" width="{span}" height="{span}" class="plane"/>',
    ]
    for g in range(vocab.GRID_MIN, vocab.GRID_MAX + 1, vocab.STEP_UNITS):
        a, _ = _xy(0, g)
        _, b = _xy(g, 0)
        parts.append(f'<line x1="{a}" y1="{y0}" x2="{a}" y2="{y0 + span}" class="grid"/>')
        parts.append(f'<line x1="{x0}" y1="{b}" x2="{x0 + span}" y2="{b}" class="grid"/>')
    parts.append(f'<rect x="{vx}" y="{vy}" width="{vis}" height="{vis}" class="visible"/>')
    parts.append(f'<text x="{vx}" y="{vy - 3}" class="label">visible area</text>')
    parts.append(
        f'<text x="{size / 2}" y="{PAD - 3}" class="label" text-anchor="middle">front</text>'
    )
    parts.append(
        f'<text x="{size / 2}" y="{size - 3}" class="label" text-anchor="middle">behind (camera)</text>'
    )
    parts.append(f'<text x="3" y="{size / 2}" class="label">left</text>')
    parts.append(
        f'<text x="{size - 3}" y="{size / 2}" class="label" text-anchor="end">right</text>'
    )
    for i, o in enumerate(objects):
        cx, cy = _xy(*o["position"])
        r = vocab.RADIUS_GRID[vocab.SIZES.index(o["size"])] * SCALE
        fill = _rgb(o["color"])
        cls = f"obj {escape(o['material'])}" + (" hl" if i in highlight else "")
        tip = escape(
            f"{i}: {o['size']} {o['color']} {o['material']} {o['shape']} ({o['position'][0]}, {o['position'][1]})"
        )
        parts.append(f'<g class="{cls}" data-obj="{i}"><title>{tip}</title>')
        if o["shape"] == "cube":
            parts.append(
                f'<rect x="{cx - r * 0.85}" y="{cy - r * 0.85}" width="{r * 1.7}" height="{r * 1.7}" fill="{fill}"/>'
            )
        elif o["shape"] == "sphere":
            parts.append(f'<circle cx="{cx}" cy="{cy}" r="{r}" fill="{fill}"/>')
        else:  # cylinder: a flat disc with a rim
            parts.append(f'<circle cx="{cx}" cy="{cy}" r="{r}" fill="{fill}"/>')
            parts.append(f'<circle cx="{cx}" cy="{cy}" r="{r * 0.6}" fill="none" class="rim"/>')
        if o["size"] == "small":  # too small to hold its label: the index sits beside it
            parts.append(f'<text x="{cx + r + 2}" y="{cy - r + 2}" class="idx out">{i}</text></g>')
        else:
            parts.append(
                f'<text x="{cx}" y="{cy + 4}" text-anchor="middle" class="idx" '
                f'fill="{_text_color(o["color"])}">{i}</text></g>'
            )
    parts.append("</svg>")
    return "".join(parts)
