"""Images as base64 data URLs for chat requests, with the MIME type read from the file's bytes.

An image is a file, or a `ComposedImage` made from files when the request is built (a task that
sends several pictures joined into one, in an order it decides). A task may also send a
`VideoFile`, for endpoints that take video (vLLM's `video_url` parts): the file inline as a
base64 data URL, or its absolute path as a file:// URL for a server that reads the same disk.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass, field
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


@dataclass(frozen=True)
class ComposedImage:
    """An image made when a request is built, from image files (e.g. panels joined into one
    strip): `compose(sources)` returns its bytes (PNG, JPEG, GIF or WebP) or raises UserError."""

    sources: tuple[Path, ...]
    compose: Callable[[tuple[Path, ...]], bytes] = field(compare=False)
    label: str = "composed image"

    def __str__(self) -> str:
        return f"{self.label}: {', '.join(str(p) for p in self.sources)}"


@dataclass(frozen=True)
class VideoFile:
    """A video sent as a `video_url` part: inline (a data URL of its bytes) or as a file:// URL."""

    path: Path
    inline: bool = True

    def __str__(self) -> str:
        return f"video ({'inline' if self.inline else 'file URL'}): {self.path}"


#: video MIME types by file suffix
_VIDEO_TYPES = {".mp4": "video/mp4", ".webm": "video/webm", ".mov": "video/quicktime"}


def video_url(video: VideoFile) -> str:
    """The URL of a `video_url` part: `data:video/mp4;base64,...` or `file:///abs/path.mp4`."""
    path = Path(video.path)
    if not video.inline:
        return path.resolve().as_uri()
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise UserError(f"{path}: video not found") from None
    except OSError as err:
        raise UserError(f"{path}: cannot read video ({err.strerror})") from None
    mime = _VIDEO_TYPES.get(path.suffix.lower(), "video/mp4")
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


#: what a task item may send as an image: a file, an image composed from files, or a video
ImageRef = Path | ComposedImage | VideoFile


def image_ref_data_url(image: ImageRef) -> str:
    """The data URL of an image file or of a composed image."""
    if isinstance(image, VideoFile):
        return video_url(image)
    if isinstance(image, ComposedImage):
        data = image.compose(image.sources)
        mime = image_mime_type(data, image.label)
        return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    return image_data_url(image)


def image_files(image: ImageRef) -> tuple[Path, ...]:
    """The files an image is read from (one for a file, the sources of a composed image)."""
    if isinstance(image, VideoFile):
        return (Path(image.path),)
    return image.sources if isinstance(image, ComposedImage) else (Path(image),)
