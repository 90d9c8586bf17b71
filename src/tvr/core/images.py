"""Image files opened as RGB for models and picture sheets, or one line naming the broken file."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def open_rgb(path: str | Path, what: str = "image") -> Any:
    """The image file `path` as a Pillow RGB image, read fully (the file is closed again).
    UserError `"<path>: <what> not found"` or `"<path>: not a readable image (...)"`."""
    from PIL import Image, UnidentifiedImageError

    from tvr.core.errors import UserError

    try:
        with Image.open(path) as img:
            return img.convert("RGB")
    except FileNotFoundError:
        raise UserError(f"{path}: {what} not found") from None
    except (OSError, UnidentifiedImageError, SyntaxError) as err:
        raise UserError(f"{path}: not a readable image ({err})") from None
