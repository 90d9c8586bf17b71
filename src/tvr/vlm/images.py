"""Images as base64 data URLs for chat requests, with the MIME type read from the file's bytes."""

from __future__ import annotations

import base64
from pathlib import Path

from tvr.core.errors import UserError

#: leading bytes -> MIME type of the formats chat-completions servers accept
_SIGNATURES = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def image_mime_type(data: bytes, name: str = "<image>") -> str:
    """The MIME type of PNG, JPEG, GIF or WebP bytes; UserError for anything else."""
    for signature, mime in _SIGNATURES:
        if data.startswith(signature):
            return mime
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    raise UserError(f"{name}: not a PNG, JPEG, GIF or WebP image")


def image_data_url(path: str | Path) -> str:
    """`data:<mime>;base64,<bytes>` of an image file."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{path}: image not found") from None
    except OSError as err:
        raise UserError(f"{path}: cannot read image ({err.strerror})") from None
    mime = image_mime_type(data, str(path))
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
