"""Tiny videos written with PyAV: frame i is a solid grey of level 10 + 12 i, so its mean says i."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest


def grey(i: int) -> int:
    """The grey level of frame i (distinct by 12 levels, which lossless H.264 keeps within 2)."""
    return 10 + 12 * i


def write_video(
    path: Path,
    n: int = 20,
    fps: int = 10,
    size: tuple[int, int] = (80, 48),
    gop: int = 5,
    codec: str = "libx264",
    faststart: bool = True,
) -> Path:
    """An n-frame video at `fps`, frame i solid grey(i), a key frame every `gop` frames."""
    av = pytest.importorskip("av")
    assert grey(n - 1) < 256
    w, h = size
    options = {"movflags": "+faststart"} if faststart and path.suffix == ".mp4" else {}
    with av.open(str(path), "w", options=options) as container:
        stream = container.add_stream(codec, rate=fps)
        stream.width, stream.height, stream.pix_fmt = w, h, "yuv420p"
        stream.codec_context.gop_size = gop
        if codec == "libx264":
            stream.options = {"qp": "0"}
        for i in range(n):
            frame = av.VideoFrame.from_ndarray(
                np.full((h, w, 3), grey(i), np.uint8), format="rgb24"
            )
            frame.pts = i
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return path


def frame_number(image: np.ndarray) -> int:
    """Which frame of a `write_video` video an extracted image is (nearest grey level)."""
    return round((float(image.mean()) - 10) / 12)


@pytest.fixture(scope="session")
def video_dir(tmp_path_factory) -> Path:
    """A folder with the videos the frame tests read (written once per session)."""
    root = tmp_path_factory.mktemp("videos")
    write_video(root / "mp4_gop5.mp4")
    write_video(root / "mp4_onekey.mp4", gop=250)
    write_video(root / "vp9.webm", codec="libvpx-vp9")
    write_video(root / "tall.mp4", n=4, size=(48, 80))
    return root
